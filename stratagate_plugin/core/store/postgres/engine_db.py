"""The engine's database on PostgreSQL: ``PostgresDatabase`` with the row modules' view.

``SqliteStorage``'s capabilities run their units over ``Database`` (``write``, ``read``,
``exclusive``). ``EngineDatabase`` offers the same three over a ``PostgresDatabase``,
handing each unit a ``CompatConnection`` (SQLite's SQL translated, ``compat.py``) instead
of a ``sqlite3.Connection``: the row modules run unchanged. The readers' pool on
PostgreSQL is the connection pool: a read is a REPEATABLE READ READ ONLY snapshot on any
free connection, beside the writes.
"""

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar, cast

import psycopg

from ...events.storage import EventRules
from ...rebuilds import RebuildReport, quiet
from ..units import shown_location
from .compat import CompatConnection, read_schema
from .db import DEFAULT_CONNECTIONS, PostgresDatabase, Row
from .dialect import Schema
from .full_text import ensure_current

T = TypeVar("T")


class EngineDatabase:
    """An open StrataGate database on a PostgreSQL server, as the engine's storage uses it."""

    backend = "postgresql"  # what ``SqliteStorage`` asks to give purge its server module

    def __init__(
        self,
        url: str,
        events: EventRules | None = None,
        connections: int = DEFAULT_CONNECTIONS,
        on_rebuild: RebuildReport = quiet,
    ) -> None:
        self.url = url
        self.events = events
        self.on_rebuild = on_rebuild
        self.server = PostgresDatabase(url, connections)
        self.path = Path(self.server.name)  # not a file
        self.shown = shown_location(url)  # the URL, its password as ***
        self._schema = Schema()

    async def open(self) -> "EngineDatabase":
        await self.server.open()
        self._schema = await self.server.read(read_schema)
        try:
            await self.write(lambda raw: ensure_current(raw, self.events, self.on_rebuild))
        except BaseException:
            await self.server.close()
            raise
        return self

    async def close(self) -> None:
        await self.server.close()

    async def write(self, unit: Callable[[sqlite3.Connection], T]) -> T:
        """``unit`` as one READ COMMITTED transaction over the row modules' view, its
        deferred statements (``CompatConnection.before_commit``) last."""
        return await self.server.write(lambda conn: _finished(unit, self._view(conn)))

    async def exclusive(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """What SQLite runs outside a transaction (``VACUUM``, checkpoints) has its own
        PostgreSQL module; anything else handed here runs as a write."""
        return await self.write(fn)

    async def read(self, query: Callable[[sqlite3.Connection], T]) -> T:
        """``query`` in one READ ONLY snapshot on a pooled connection."""
        return await self.server.read(lambda conn: query(self._view(conn)))

    def _view(self, conn: psycopg.Connection[Row]) -> sqlite3.Connection:
        # The adapter offers the part of sqlite3.Connection the row modules call.
        return cast(sqlite3.Connection, CompatConnection(conn, self._schema))


def _finished(unit: Callable[[sqlite3.Connection], T], view: sqlite3.Connection) -> T:
    result = unit(view)
    cast(CompatConnection, view).finish()
    return result
