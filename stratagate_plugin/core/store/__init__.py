"""SQLite persistence: the only package in StrataGate that talks to aiosqlite."""

from .db import Database, default_database_path

__all__ = ["Database", "default_database_path"]
