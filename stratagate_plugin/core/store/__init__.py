"""SQLite persistence: the only package in StrataGate that talks to aiosqlite."""

from . import block_rows, event_rows, jobs
from .db import Database, default_database_path

__all__ = ["Database", "block_rows", "default_database_path", "event_rows", "jobs"]
