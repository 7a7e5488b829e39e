"""The storage contract: one ``Protocol`` per capability of the operations it needs.

A database backend implements each (``core/store/sqlite/`` for SQLite) and hands the
engine one object holding them; a service reaches only its own capability's part
(``self.store``) and never sees a connection. ``tests/storage_contract/`` checks any
implementation against these operations.
"""

from typing import Protocol

from .blocks.storage import BlocksStorage
from .overview.storage import OverviewStorage
from .spaces.storage import SpacesStorage
from .timeline.storage import TimelineStorage

__all__ = ["Storage"]


class Storage(Protocol):
    """Every capability's storage operations, one attribute per capability."""

    @property
    def timeline(self) -> TimelineStorage: ...

    @property
    def blocks(self) -> BlocksStorage: ...

    @property
    def spaces(self) -> SpacesStorage: ...

    @property
    def overview(self) -> OverviewStorage: ...
