"""A space's topics synced inside another capability's transaction (the purge's erase):
the rule is ``topics/sync.py``'s, run over this connection. Only the purge's store calls
this; it goes once the purge runs the topic sync through the topics capability."""

import sqlite3
from datetime import datetime

from ..topics import sync
from .sqlite.topics import SqliteTopicsTransaction


def sync_space(raw: sqlite3.Connection, namespace: str, now: datetime) -> None:
    sync.sync_space(SqliteTopicsTransaction(raw), namespace, now)
