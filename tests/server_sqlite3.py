"""A test's own ``sqlite3`` connection to its memory, when the memory is on PostgreSQL.

With ``--backend postgresql`` (tests/backend.py) a test that opened its memory on a file
path and then reads "what is really stored" with ``sqlite3.connect(that_path)`` (or the
``plain`` fixture) gets a ``PlainConnection`` to the database standing for the file: the
same SQLite SQL, translated as the engine's own statements are (``postgres/compat.py``),
rows as tuples or, with ``row_factory = sqlite3.Row``, by name too; transactions as
sqlite3 opens them by default (a read alone commits at once; a change opens a transaction
that ``commit``/``rollback`` or the ``with`` block ends), or none with
``isolation_level=None``. Only the calls of test code (``tests/``, and ``benchmarks/`` that
tests run) are redirected: the engine's own SQLite connections and paths the test never
opened as a memory stay files.
"""

import re
import sqlite3
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import psycopg
from psycopg.pq import TransactionStatus
from server_files import ServerPlan

from stratagate_plugin.core.store.postgres.compat import CompatConnection, read_schema
from stratagate_plugin.core.store.postgres.db import row_factory

TESTS = Path(__file__).resolve().parent
# The test code whose sqlite3 reads are redirected: the tests and the benchmarks they run.
TEST_CODE = (TESTS, TESTS.parent / "benchmarks")
_CHANGE = re.compile(r"\s*(INSERT|UPDATE|DELETE|REPLACE)\b", re.IGNORECASE)
REAL_CONNECT = sqlite3.connect


class PlainCursor:
    """A statement's rows as sqlite3 gives them: tuples unless ``sqlite3.Row`` was asked."""

    def __init__(self, cursor: Any, by_name: bool) -> None:
        self._cursor = cursor
        self._by_name = by_name
        self.rowcount = cursor.rowcount
        self.lastrowid = cursor.lastrowid

    def _row(self, row: Any) -> Any:
        return row if row is None or self._by_name else tuple(row)

    def fetchone(self) -> Any:
        return self._row(self._cursor.fetchone())

    def fetchall(self) -> list[Any]:
        return [self._row(row) for row in self._cursor.fetchall()]

    def fetchmany(self, size: int = 1) -> list[Any]:
        return [self._row(row) for row in self._cursor.fetchmany(size)]

    def __iter__(self) -> Iterator[Any]:
        return iter(self.fetchall())


class PlainConnection:
    """The part of ``sqlite3.Connection`` tests call, over one PostgreSQL connection."""

    def __init__(self, url: str, autocommit: bool = False) -> None:
        self.raw = psycopg.connect(url, autocommit=True, row_factory=row_factory)
        self._compat = CompatConnection(self.raw, read_schema(self.raw))
        self._autocommit = autocommit
        self.row_factory: Any = None
        self.isolation_level: str | None = None if autocommit else ""

    def execute(self, sql: str, params: Sequence[Any] = ()) -> PlainCursor:
        if not self._autocommit and not self.in_transaction and _CHANGE.match(sql):
            self.raw.execute("BEGIN")
        cursor = self._compat.execute(sql, params)
        if not self.in_transaction:
            self._compat.finish()
        return PlainCursor(cursor, self.row_factory is sqlite3.Row)

    def executemany(self, sql: str, rows: Any) -> PlainCursor:
        if not self._autocommit and not self.in_transaction:
            self.raw.execute("BEGIN")
        return PlainCursor(self._compat.executemany(sql, rows), False)

    def cursor(self) -> "PlainConnection":
        return self

    @property
    def in_transaction(self) -> bool:
        return self.raw.info.transaction_status != TransactionStatus.IDLE

    def commit(self) -> None:
        self._compat.finish()  # what the row modules deferred to the commit
        if self.in_transaction:
            self.raw.execute("COMMIT")

    def rollback(self) -> None:
        self._compat = CompatConnection(self.raw, self._compat.schema)  # nothing deferred
        if self.in_transaction:
            self.raw.execute("ROLLBACK")

    def close(self) -> None:
        self.raw.close()

    def __enter__(self) -> "PlainConnection":
        return self

    def __exit__(self, kind: object, *rest: object) -> None:
        """As sqlite3's: commit, or roll back on an exception; the connection stays open."""
        self.rollback() if kind is not None else self.commit()


def redirecting_connect(plan: ServerPlan, opened: list[PlainConnection]) -> Callable[..., Any]:
    """``sqlite3.connect`` that opens a ``PlainConnection`` when a test's own code opens
    a file a memory of the test stands for (``plan``); each is kept in ``opened`` to be
    closed after the test (sqlite3 lets a test drop one unclosed)."""

    def connect(database: Any, *args: Any, **kwargs: Any) -> Any:
        caller = Path(sys._getframe(1).f_code.co_filename)
        file = _file_of(database, bool(kwargs.get("uri")))
        ours = file is not None and any(caller.is_relative_to(code) for code in TEST_CODE)
        url = plan.existing(file) if ours and file is not None else None
        if url is None:
            return REAL_CONNECT(database, *args, **kwargs)
        opened.append(PlainConnection(url, autocommit=kwargs.get("isolation_level", "") is None))
        return opened[-1]

    return connect


def _file_of(database: Any, uri: bool) -> Path | str | None:
    """The file ``sqlite3.connect`` is asked to open (a ``file:PATH?mode=ro`` URI's path
    too), or None for an in-memory database."""
    if isinstance(database, Path):
        return database
    if not isinstance(database, str) or database == ":memory:":
        return None
    if database.startswith("file:"):
        return unquote(database[5:].split("?", 1)[0]) if uri else None
    return database
