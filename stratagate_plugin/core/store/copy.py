"""Copy a whole memory between SQLite and PostgreSQL, either way, and prove it lossless.

Both schemas hold the same tables with the same columns (``tests/test_pg_schema.py``
keeps them so), so a copy is table by table, row by row, ids and times as they are. Three
things differ and are mapped here: FTS5's ``message_fts`` / ``event_fts`` are PostgreSQL's
``message_search`` / ``event_search`` (same rowid, same token text); the hidden ``rowid``
SQLite keeps for four tables is a spelled-out column on PostgreSQL; a generated column
(the ``tsvector``) is the server's to fill. The event index's postings are kept in each
backend's own layout (``EVENT_POSTINGS``): not copied, but rebuilt on the destination.

The destination is migrated first and must hold no memory. The whole copy is one
transaction on it, with its triggers off (they keep derived tables, which are copied as
they are: firing them would count twice and touch times) and foreign keys checked at
commit. Afterwards every table is read back from both sides and compared by row count and
a digest of every value in key order: ``CopyReport.mismatched`` names any table that
differs, and the command fails then.
"""

import asyncio
import hashlib
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import psycopg
from psycopg import sql

from ..errors import InvalidInput, NotFound
from ..events.storage import EventRules
from . import event_term_index
from .db import Database
from .postgres import PostgresDatabase
from .postgres.engine_db import EngineDatabase
from .units import is_database_url

CHUNK_ROWS = 2000
SKIPPED = {"schema_migrations"}  # each side's own history
FTS_TABLES = {"message_fts": "message_search", "event_fts": "event_search"}
FTS_KEYS = {"message_search": "fts_rowid", "event_search": "event_pk"}
MEMORY_TABLES = ("namespaces", "messages", "events", "import_jobs")  # what a memory holds
EVENT_POSTINGS = ("event_postings", "event_terms")
"""The event index's postings, each backend in its own layout (``event_term_index``): not
copied between backends; the destination's index is marked stale and rebuilt."""
# A fresh database writes rows of its own (meta, an index's totals): the source's replace them.


@dataclass
class CopyReport:
    rows: dict[str, int] = field(default_factory=dict)
    mismatched: list[str] = field(default_factory=list)

    @property
    def total(self) -> int:
        return sum(self.rows.values())


class Side(Protocol):
    """One database as the copy sees it: tables by their PostgreSQL names."""

    def tables(self) -> list[str]: ...
    def columns(self, table: str) -> list[str]: ...
    def rows(self, table: str, columns: list[str]) -> Iterator[Sequence[Any]]: ...
    def count(self, table: str) -> int: ...


async def copy_between(
    source: str, destination: str, events: EventRules | None = None
) -> CopyReport:
    """Copy the memory at ``source`` (a file path or a ``postgresql://`` URL) into
    ``destination``; both are migrated to this version first (``events``: the rules an
    index rebuilt at a SQLite open stores documents with)."""
    if source == destination:
        raise InvalidInput("source and destination are the same database")
    if not is_database_url(source) and not Path(source).is_file():
        raise NotFound(f"no memory at {source}")
    for location in (source, destination):
        await migrate(location, events)
    report = await asyncio.to_thread(_copy_now, source, destination)
    if not report.mismatched and not set(EVENT_POSTINGS) & set(report.rows):
        await _rebuild_event_index(destination, events)
    return report


async def _rebuild_event_index(location: str, events: EventRules | None) -> None:
    """The destination opened as the engine opens it, which rebuilds its event index in
    its own layout (``_mark_event_index_stale``)."""
    if is_database_url(location):
        await (await EngineDatabase(location, events, connections=1).open()).close()
    else:
        await migrate(location, events)


async def migrate(location: str, events: EventRules | None = None) -> None:
    """Create or migrate the database at ``location`` to this version."""
    if is_database_url(location):
        await (await PostgresDatabase(location, connections=1).open()).close()
    else:
        opened = Database(location, backups=False, events=events, readers=0)
        await (await opened.open()).close()


def _copy_now(source: str, destination: str) -> CopyReport:
    """The source read in one snapshot for the copy and the check both."""
    with ExitStack() as stack:
        sides = [stack.enter_context(closing(_connect(where))) for where in (source, destination)]
        read, written = (_side(c) for c in sides)
        _begin_snapshot(sides[0])
        try:
            report = copy_memory(read, written)
        finally:
            sides[0].rollback()
        if not set(EVENT_POSTINGS) & set(report.rows):
            _mark_event_index_stale(sides[1])
        return report


def _mark_event_index_stale(conn: Any) -> None:
    """The copied version of the source's event index names the source's layout: dropped,
    so the destination's next open rebuilds its own."""
    mark = "%s" if isinstance(conn, psycopg.Connection) else "?"
    conn.execute(f"DELETE FROM meta WHERE key = {mark}", (event_term_index.VERSION_KEY,))


def _connect(location: str) -> Any:
    if is_database_url(location):
        return psycopg.connect(location, autocommit=True)
    return sqlite3.connect(location, isolation_level=None)


def _side(conn: Any) -> "SqliteSide | PostgresSide":
    return PostgresSide(conn) if isinstance(conn, psycopg.Connection) else SqliteSide(conn)


def _begin_snapshot(conn: Any) -> None:
    if isinstance(conn, psycopg.Connection):
        conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
    else:
        conn.execute("BEGIN")
        conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()  # the snapshot starts


def copy_memory(source: Side, destination: "Writable") -> CopyReport:
    """Every table of ``source`` into the empty ``destination``, in one transaction."""
    tables = [t for t in destination.tables() if t in set(source.tables())]
    held = [t for t in MEMORY_TABLES if t in tables and destination.count(t)]
    if held:
        raise InvalidInput(
            f"the destination already holds a memory (table {held[0]} has rows): copy into "
            "a new file or an empty database"
        )
    report = CopyReport()
    with destination.copying(tables):
        for table in tables:
            columns = [c for c in destination.columns(table) if c in set(source.columns(table))]
            destination.clear(table)
            report.rows[table] = destination.insert(table, columns, source.rows(table, columns))
    for table in tables:
        columns = [c for c in destination.columns(table) if c in set(source.columns(table))]
        if digest(source, table, columns) != digest(destination, table, columns):
            report.mismatched.append(table)
    return report


def digest(side: Side, table: str, columns: list[str]) -> tuple[int, str]:
    """Row count and SHA-256 over the sorted digests of the rows: the same multiset of
    rows, every value with its type (2 is not 2.0, b"" is not ""), whatever the order
    each side's collation reads them in."""
    rows = sorted(
        hashlib.sha256(repr(tuple(_plain(v) for v in row)).encode()).digest()
        for row in side.rows(table, columns)
    )
    return len(rows), hashlib.sha256(b"".join(rows)).hexdigest()


def _plain(value: Any) -> Any:
    return bytes(value) if isinstance(value, memoryview) else value


class Writable(Side, Protocol):
    def copying(self, tables: list[str]) -> Any: ...
    def clear(self, table: str) -> None: ...
    def insert(self, table: str, columns: list[str], rows: Iterator[Sequence[Any]]) -> int: ...


class SqliteSide:
    """A SQLite file, read and written through one plain connection."""

    def __init__(self, raw: sqlite3.Connection) -> None:
        self.raw = raw

    def tables(self) -> list[str]:
        found = self.raw.execute(
            "SELECT name, sql FROM sqlite_master WHERE type = 'table' "
            "AND name NOT LIKE 'sqlite_%' ORDER BY rowid"
        ).fetchall()
        virtual = [n for n, s in found if (s or "").upper().startswith("CREATE VIRTUAL")]
        shadows = {n for n, _ in found for v in virtual if n.startswith(f"{v}_")}
        names = [FTS_TABLES.get(n, n) for n, _ in found if n not in shadows]
        return [n for n in names if n not in SKIPPED]

    def columns(self, table: str) -> list[str]:
        if table in FTS_KEYS:
            return [FTS_KEYS[table], "tokens"]
        names = [row[1] for row in self.raw.execute(f"PRAGMA table_info('{table}')")]
        keyless = not any(row[5] for row in self.raw.execute(f"PRAGMA table_info('{table}')"))
        return ["rowid", *names] if keyless and self._has_rowid(table) else names

    def _has_rowid(self, table: str) -> bool:
        try:
            self.raw.execute(f'SELECT rowid FROM "{table}" LIMIT 0')
        except sqlite3.OperationalError:
            return False  # WITHOUT ROWID
        return True

    def rows(self, table: str, columns: list[str]) -> Iterator[Sequence[Any]]:
        real, chosen = self._real(table, columns)
        cursor = self.raw.execute(f'SELECT {chosen} FROM "{real}"')
        while batch := cursor.fetchmany(CHUNK_ROWS):
            yield from batch

    def count(self, table: str) -> int:
        real, _ = self._real(table, [])
        return int(self.raw.execute(f'SELECT COUNT(*) FROM "{real}"').fetchone()[0])

    def _real(self, table: str, columns: list[str]) -> tuple[str, str]:
        """The SQLite table and select list for a PostgreSQL table's name and columns."""
        fts = {v: k for k, v in FTS_TABLES.items()}
        if table in fts:
            return fts[table], ", ".join("rowid" if c == FTS_KEYS[table] else c for c in columns)
        return table, ", ".join(f'"{c}"' if c != "rowid" else "rowid" for c in columns)

    def copying(self, tables: list[str]) -> "_SqliteCopy":
        return _SqliteCopy(self)

    def clear(self, table: str) -> None:
        self.raw.execute(f'DELETE FROM "{self._real(table, [])[0]}"')

    def insert(self, table: str, columns: list[str], rows: Iterator[Sequence[Any]]) -> int:
        real, chosen = self._real(table, columns)
        marks = ", ".join("?" for _ in columns)
        statement = f'INSERT INTO "{real}" ({chosen}) VALUES ({marks})'
        written = 0
        for batch in _batches(rows):
            self.raw.executemany(statement, batch)
            written += len(batch)
        return written


class _SqliteCopy:
    """One transaction with the triggers dropped and made again from their own SQL."""

    def __init__(self, side: SqliteSide) -> None:
        self.side = side
        self.triggers: list[tuple[str, str]] = []

    def __enter__(self) -> None:
        raw = self.side.raw
        raw.execute("BEGIN IMMEDIATE")
        self.triggers = raw.execute(
            "SELECT name, sql FROM sqlite_master WHERE type = 'trigger'"
        ).fetchall()
        for name, _ in self.triggers:
            raw.execute(f'DROP TRIGGER "{name}"')

    def __exit__(self, kind: Any, *rest: Any) -> None:
        raw = self.side.raw
        if kind is not None:
            raw.execute("ROLLBACK")
            return
        for _, made in self.triggers:
            raw.execute(made)
        raw.execute("COMMIT")


class PostgresSide:
    """A PostgreSQL database, read and written through one psycopg connection."""

    def __init__(self, conn: psycopg.Connection[Any]) -> None:
        self.conn = conn

    def tables(self) -> list[str]:
        rows = self.conn.execute(
            "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname = current_schema() AND c.relkind = 'r' ORDER BY c.oid"
        )
        return [r[0] for r in rows if r[0] not in SKIPPED]

    def columns(self, table: str) -> list[str]:
        rows = self.conn.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_schema = "
            "current_schema() AND table_name = %s AND is_generated = 'NEVER' "
            "ORDER BY ordinal_position",
            (table,),
        )
        return [r[0] for r in rows]

    def rows(self, table: str, columns: list[str]) -> Iterator[Sequence[Any]]:
        """Row by row from the server (single-row mode: no whole table in memory, and it
        works inside or outside a transaction)."""
        query = sql.SQL("SELECT {} FROM {}").format(
            sql.SQL(", ").join(map(sql.Identifier, columns)), sql.Identifier(table)
        )
        yield from self.conn.cursor().stream(query)

    def count(self, table: str) -> int:
        found = self.conn.execute(sql.SQL("SELECT COUNT(*) FROM {}").format(sql.Identifier(table)))
        return int(found.fetchone()[0])  # type: ignore[index]

    def copying(self, tables: list[str]) -> "_PostgresCopy":
        return _PostgresCopy(self, tables)

    def clear(self, table: str) -> None:
        self.conn.execute(sql.SQL("DELETE FROM {}").format(sql.Identifier(table)))

    def insert(self, table: str, columns: list[str], rows: Iterator[Sequence[Any]]) -> int:
        statement = sql.SQL("COPY {} ({}) FROM STDIN").format(
            sql.Identifier(table), sql.SQL(", ").join(map(sql.Identifier, columns))
        )
        written = 0
        try:
            with self.conn.cursor() as cursor, cursor.copy(statement) as copy:
                for row in rows:
                    copy.write_row(row)
                    written += 1
        except psycopg.DataError as error:  # the transaction is rolled back whole
            raise InvalidInput(_refused(table, error)) from None
        return written


class _PostgresCopy:
    """One transaction: user triggers off, foreign keys checked at commit, identities
    moved past the copied ids."""

    def __init__(self, side: PostgresSide, tables: list[str]) -> None:
        self.side, self.tables = side, tables

    def __enter__(self) -> None:
        conn = self.side.conn
        conn.execute("BEGIN")
        conn.execute("SET CONSTRAINTS ALL DEFERRED")
        for table in self.tables:
            conn.execute(
                sql.SQL("ALTER TABLE {} DISABLE TRIGGER USER").format(sql.Identifier(table))
            )

    def __exit__(self, kind: Any, *rest: Any) -> None:
        conn = self.side.conn
        if kind is not None:
            conn.execute("ROLLBACK")
            return
        conn.execute("SET CONSTRAINTS ALL IMMEDIATE")  # the keys checked now, before
        for table in self.tables:  # the triggers come back (pending checks forbid it)
            conn.execute(
                sql.SQL("ALTER TABLE {} ENABLE TRIGGER USER").format(sql.Identifier(table))
            )
        self._move_identities()
        conn.execute("COMMIT")
        # The planner's statistics of the filled tables now, not when autovacuum comes round:
        # until then it plans every search for empty tables (a copy is all inserts at once).
        names = sql.SQL(", ").join(map(sql.Identifier, self.tables))
        conn.execute(sql.SQL("ANALYZE {}").format(names))

    def _move_identities(self) -> None:
        conn = self.side.conn
        found = conn.execute(
            "SELECT table_name, column_name FROM information_schema.columns "
            "WHERE table_schema = current_schema() AND is_identity = 'YES'"
        ).fetchall()
        for table, column in found:
            conn.execute(
                sql.SQL(
                    "SELECT setval(pg_get_serial_sequence(%s, %s), "
                    "COALESCE((SELECT MAX({}) FROM {}), 0) + 1, false)"
                ).format(sql.Identifier(column), sql.Identifier(table)),
                (table, column),
            )


def _refused(table: str, error: psycopg.DataError) -> str:
    """One line for a row PostgreSQL cannot store: a NUL character, written into a SQLite
    memory before text entering StrataGate had NUL replaced (``text/clean.py``)."""
    if "NUL" in str(error):
        return (
            f"table {table} holds a NUL character, which PostgreSQL text cannot hold: nothing "
            "was copied (replace it in the source first, e.g. with U+FFFD)"
        )
    return f"table {table} holds a value PostgreSQL refuses: {str(error).splitlines()[0]}"


def _batches(rows: Iterator[Sequence[Any]]) -> Iterator[list[Sequence[Any]]]:
    batch: list[Sequence[Any]] = []
    for row in rows:
        batch.append(tuple(bytes(v) if isinstance(v, memoryview) else v for v in row))
        if len(batch) >= CHUNK_ROWS:
            yield batch
            batch = []
    if batch:
        yield batch
