"""What the storage contract's implementations need of a database: units of work.

``Database`` (SQLite's file) and ``postgres/engine_db.py``'s ``EngineDatabase`` (a
PostgreSQL server) both run a plain function over a connection as one transaction
(``write``), in one snapshot (``read``), or alone (``exclusive``); the row modules see a
``sqlite3.Connection`` or the PostgreSQL adapter offering the same calls.
"""

import re
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Protocol, TypeVar

from ..text.secrets import HIDDEN_PASSWORD as HIDDEN

T = TypeVar("T")
URL_SCHEMES = ("postgresql://", "postgres://")
# libpq's rule: a URL's user info runs to the first "@" before any "/"; its password
# follows the first ":" in it. Written out or in a message, the password goes.
_URL_PASSWORD = re.compile(r"(postgres(?:ql)?://[^@/:\s]*):[^@/\n]*@")
# A ``password=`` parameter of a URL's query, or of a keyword/value conninfo string.
_PASSWORD_PARAMETER = re.compile(r"(?i)(\bpassword=)[^&\s]*")


def is_database_url(where: Path | str) -> bool:
    """A libpq URL names a PostgreSQL database; anything else is SQLite's file."""
    return isinstance(where, str) and where.startswith(URL_SCHEMES)


def shown_location(where: Path | str) -> str:
    """What any output may show of a database: a file's path, or a URL with its
    password as ``***`` (``postgresql://user:***@host/db``)."""
    return without_passwords(str(where)) if is_database_url(where) else str(where)


def without_passwords(text: str) -> str:
    """``text`` (a URL, an error message, a log line) with every PostgreSQL URL's
    password, and every ``password=`` parameter's value, replaced by ``***``."""
    text = _URL_PASSWORD.sub(rf"\1:{HIDDEN}@", text)
    return _PASSWORD_PARAMETER.sub(rf"\1{HIDDEN}", text)


def has_password(url: str) -> bool:
    """Whether showing ``url`` as it is would show a password."""
    return without_passwords(url) != url


class UnitDatabase(Protocol):
    """An open database the engine's storage runs its units on."""

    path: Path

    @property
    def shown(self) -> str:
        """What output may show of it: the file, or the URL with its password as ``***``."""
        ...

    async def write(self, unit: Callable[[sqlite3.Connection], T]) -> T: ...

    async def read(self, query: Callable[[sqlite3.Connection], T]) -> T: ...

    async def exclusive(self, fn: Callable[[sqlite3.Connection], T]) -> T: ...

    async def close(self) -> None: ...


def on_postgres(raw: sqlite3.Connection) -> bool:
    """Whether a row module's connection is PostgreSQL's adapter: asked only where the
    meaning differs and a PostgreSQL module holds the operation (``postgres/``)."""
    return getattr(raw, "backend", "sqlite") == "postgresql"


def has_table(raw: sqlite3.Connection, name: str) -> bool:
    """Whether the table ``name`` (SQLite's name: ``message_fts``) exists. PostgreSQL's
    schema is made whole by its migrations before the tables are read at open, so there
    the answer is that read's (``dialect.Schema``), not a catalog query on every search."""
    if on_postgres(raw):
        return bool(raw.schema.has_table(name))  # type: ignore[attr-defined]
    row = raw.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)
    ).fetchone()
    return row is not None


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
