"""What the storage contract's implementations need of a database: units of work.

``Database`` (SQLite's file) and ``postgres/engine_db.py``'s ``EngineDatabase`` (a
PostgreSQL server) both run a plain function over a connection as one transaction
(``write``), in one snapshot (``read``), or alone (``exclusive``); the row modules see a
``sqlite3.Connection`` or the PostgreSQL adapter offering the same calls.
"""

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Protocol, TypeVar

T = TypeVar("T")
URL_SCHEMES = ("postgresql://", "postgres://")


def is_database_url(where: Path | str) -> bool:
    """A libpq URL names a PostgreSQL database; anything else is SQLite's file."""
    return isinstance(where, str) and where.startswith(URL_SCHEMES)


class UnitDatabase(Protocol):
    """An open database the engine's storage runs its units on."""

    path: Path

    async def write(self, unit: Callable[[sqlite3.Connection], T]) -> T: ...

    async def read(self, query: Callable[[sqlite3.Connection], T]) -> T: ...

    async def exclusive(self, fn: Callable[[sqlite3.Connection], T]) -> T: ...

    async def close(self) -> None: ...


def on_postgres(raw: sqlite3.Connection) -> bool:
    """Whether a row module's connection is PostgreSQL's adapter: asked only where the
    meaning differs and a PostgreSQL module holds the operation (``postgres/``)."""
    return getattr(raw, "backend", "sqlite") == "postgresql"


def alone(raw: sqlite3.Connection, unit: str, space: str = "") -> None:
    """Run the rest of this transaction alone among the transactions naming the same
    ``unit`` and ``space`` (``""``: the whole database): what SQLite's single writer gives
    every write (``BEGIN IMMEDIATE``), PostgreSQL gives by an advisory lock held to the
    commit (``postgres/unit_locks.py``). Called first in a unit whose decision rests on a
    read another such unit could change meanwhile (claiming a space's one topic job,
    resolving names to nodes, queueing what no batch holds yet)."""
    if on_postgres(raw):
        from .postgres.unit_locks import hold

        hold(raw, unit, space)
