"""The part of ``sqlite3.Connection`` the row modules use, over a ``psycopg.Connection``.

One SQL, two dialects: a row module of ``core/store/`` is a plain function over a
connection that runs SQLite's SQL. Given a ``CompatConnection`` instead, each statement is
translated once (``dialect.translate``, cached by its text and shared by every
connection of the database) and run by psycopg; rows come back by name and by position
(``db.Row``), ``rowcount`` and ``lastrowid`` as sqlite3 gives them (an insert into a table
with an identity column returns it), and ``numeric`` results (PostgreSQL's ``SUM`` of
integers) as the int or float SQLite would have returned.
"""

import json
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from decimal import Decimal
from functools import lru_cache
from typing import Any

import psycopg
from psycopg.adapt import Loader
from psycopg.types.string import StrDumper

from .db import Row
from .dialect import Schema, Translated, translate
from .row_functions import Functions, calls, evaluated

_SCHEMA_SQL = """
SELECT c.relname, a.attname, a.attidentity, i.indisprimary, i.indexrelid,
       array_position(i.indkey::int2[], a.attnum) AS position
FROM pg_class c
JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = current_schema()
JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
LEFT JOIN pg_index i ON i.indrelid = c.oid AND i.indisunique AND i.indpred IS NULL
    AND a.attnum = ANY(i.indkey::int2[])
WHERE c.relkind = 'r'
ORDER BY c.relname, i.indisprimary DESC NULLS LAST, i.indexrelid, position
"""


class NumericLoader(Loader):
    """``numeric`` as SQLite's number: an int when whole, else a float."""

    def load(self, data: Any) -> int | float:
        value = Decimal(bytes(data).decode())
        return int(value) if value == value.to_integral_value() else float(value)


def read_schema(conn: psycopg.Connection[Any]) -> Schema:
    """The tables, their identity columns and unique keys, read once when the database
    opens (after its migrations)."""
    identity: dict[str, str] = {}
    keys: dict[str, dict[int, list[str]]] = {}
    tables: set[str] = set()
    for table, column, ident, _primary, index, _position in conn.execute(_SCHEMA_SQL):
        tables.add(table)
        if ident:
            identity[table] = column
        if index is not None:
            keys.setdefault(table, {}).setdefault(index, []).append(column)
    ordered = {table: [tuple(cols) for cols in found.values()] for table, found in keys.items()}
    return Schema(identity, ordered, frozenset(tables))


class CompatCursor:
    """A statement's result as a ``sqlite3.Cursor`` offers it."""

    def __init__(self, cursor: psycopg.Cursor[Row], returns_id: bool) -> None:
        self._cursor = cursor
        self.lastrowid: int | None = None
        if returns_id:
            row = cursor.fetchone()
            self.lastrowid = int(row[0]) if row is not None else None

    @property
    def rowcount(self) -> int:
        return self._cursor.rowcount

    def fetchone(self) -> Row | None:
        if self.lastrowid is not None or self._cursor.description is None:
            return None
        return self._cursor.fetchone()

    def fetchall(self) -> list[Row]:
        if self.lastrowid is not None or self._cursor.description is None:
            return []
        return self._cursor.fetchall()

    def fetchmany(self, size: int = 1) -> list[Row]:
        if self.lastrowid is not None or self._cursor.description is None:
            return []
        return self._cursor.fetchmany(size)

    def __iter__(self) -> Iterator[Row]:
        return iter(self.fetchall())


class CompatConnection:
    """``execute`` / ``executemany`` of SQLite's SQL on one PostgreSQL transaction."""

    backend = "postgresql"
    row_factory: Any = None

    def __init__(self, conn: psycopg.Connection[Row], schema: Schema) -> None:
        self.raw = conn
        self.schema = schema
        self.functions: Functions = {}
        self.pending: dict[str, Any] = {}  # what a row module defers to ``finish``, by name
        self._at_end: dict[str, Callable[[], None]] = {}

    def before_commit(self, name: str, action: Callable[[], None]) -> None:
        """``action`` run once, by ``finish``, as the unit's last statements: a row many
        writers update (a total) locked only while the commit travels."""
        self._at_end.setdefault(name, action)

    def finish(self) -> None:
        """The unit's deferred statements (``before_commit``), each once, in order."""
        actions, self._at_end = list(self._at_end.values()), {}
        for action in actions:
            action()
        self.pending.clear()

    def create_function(self, name: str, narg: int, function: Callable[[Any], Any]) -> None:
        """sqlite3's application-defined function of one column, for this unit's statements
        (evaluated in Python: ``row_functions.py``)."""
        self.functions[name] = function

    def execute(self, sql: str, params: Sequence[Any] = ()) -> CompatCursor:
        if (pattern := calls(sql, self.functions)) is not None:
            sql, params = evaluated(self.raw, sql, params, self.functions, pattern)
        statement = _translated(sql, self.schema)
        cursor = self.raw.cursor()
        cursor.adapters.register_loader("numeric", NumericLoader)
        cursor.adapters.register_dumper(str, StrDumper)  # text, as SQLite's ``?`` is
        cursor.execute(statement.text, _bound(statement, params))
        return CompatCursor(cursor, statement.returns_id is not None)

    def cursor(self) -> "CompatConnection":
        """sqlite3's ``conn.cursor()``; its ``row_factory`` is ignored (rows are ``Row``)."""
        return self

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> CompatCursor:
        statement = _translated(sql, self.schema)
        text = statement.text
        if statement.returns_id:  # executemany keeps no lastrowid
            text = text[: text.rfind(" RETURNING ")]
        cursor = self.raw.cursor()
        cursor.adapters.register_dumper(str, StrDumper)
        bound = [_bound(statement, row) for row in rows]
        if bound:
            cursor.executemany(text, bound)
        return CompatCursor(cursor, False)


@lru_cache(maxsize=4096)
def _translated(sql: str, schema: Schema) -> Translated:
    return translate(sql, schema)


def _bound(statement: Translated, params: Sequence[Any]) -> Sequence[Any]:
    if isinstance(params, dict):
        raise TypeError("named parameters are not supported on PostgreSQL")
    return [_BINDERS[kind](params[index]) for index, kind in statement.params]


def fts_to_tsquery(expression: str) -> str:
    """An FTS5 expression of encoded terms (``fts_match_any`` / ``fts_match_all``: hex
    words joined by ``OR`` / ``AND``) as ``to_tsquery``'s text."""
    return expression.replace(" OR ", " | ").replace(" AND ", " & ")


def json_path(path: str) -> list[str]:
    """SQLite's ``$.a."b"[0]`` as the keys of PostgreSQL's ``#>``."""
    return [part.strip('"') for part in _PATH_PARTS.findall(path.removeprefix("$"))]


_PATH_PARTS = re.compile(r'"[^"]*"|\w+')
_BINDERS: dict[str | None, Callable[[Any], Any]] = {
    None: lambda value: value,
    "json": json.loads,
    "fts": fts_to_tsquery,
    "path": json_path,
    "limit": lambda value: None if value is not None and int(value) < 0 else value,
}
