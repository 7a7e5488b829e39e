"""The storage contract (``core/storage.py``) implemented on SQLite, one module per
capability; each runs its reads and writes through ``Database`` (one connection's thread,
``BEGIN IMMEDIATE`` units)."""

from ..db import Database
from .blocks import SqliteBlocksStorage
from .overview import SqliteOverviewStorage
from .spaces import SqliteSpacesStorage
from .timeline import SqliteTimelineStorage

__all__ = ["SqliteStorage"]


class SqliteStorage:
    """Every capability's storage over one open SQLite ``Database``."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self.timeline = SqliteTimelineStorage(db)
        self.blocks = SqliteBlocksStorage(db)
        self.spaces = SqliteSpacesStorage(db)
        self.overview = SqliteOverviewStorage(db)
