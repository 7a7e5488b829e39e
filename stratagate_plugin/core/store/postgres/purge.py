"""Purge on PostgreSQL: what SQLite's file operations do, said in the server's terms.

The rows are erased by the same ``purge_rows`` as on SQLite (the purge's rule evaluated in
Python for each cell, ``row_functions.py``): messages, events and blocks tombstoned and
re-derived, ``message_search`` / ``event_search`` rows and the impact index's postings made
again from the new text. What differs is where old text survives outside the live rows:

- SQLite's free pages and WAL (``secure_delete``, ``wal_checkpoint(TRUNCATE)``) are, here,
  the dead row versions and index entries an update or delete leaves in a table's pages and
  its indexes. ``VACUUM (FULL)`` of every table of the schema (as SQLite's ``VACUUM``
  rewrites the whole file) writes new files holding only the live rows with their indexes
  and TOAST rebuilt; the old files are truncated at once and unlinked at the next
  ``CHECKPOINT`` (run when the role may). ``secure_delete`` has no equivalent, so a purge
  always compacts.
- The leftover check reads every text column of every table of the schema, and the search
  tables' ``tsvector`` for the words' index terms (no ``fts5vocab``: GIN has no segments).
- The byte scan reads the files of those relations (tables, indexes, TOAST) in the server's
  data directory, when this machine can read them (a server on this host, the test
  cluster); a server elsewhere keeps its files to itself and its operator.
- Backups are the server's (``pg_dump``, base backups, WAL archives): the engine keeps none
  and cannot rewrite them. What remains in them is the operator's to expire
  (docs/reliability.md).
"""

import sqlite3
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from datetime import datetime
from pathlib import Path
from typing import Any, cast

import psycopg

from ...curation.storage import PurgeRules
from ...errors import StrataGateError
from ...purge.storage import TopicsSync, Words
from .. import purge_rows
from ..purge_files import byte_hits
from ..sqlite.purge import SqlitePurgeStorage
from .db import Row
from .engine_db import EngineDatabase

_TEXT_COLUMNS = (
    "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = "
    "current_schema() AND data_type IN ('text', 'character varying') "
    "ORDER BY table_name, ordinal_position"
)
_TABLES = (
    "SELECT c.oid, format('%I', c.relname) FROM pg_class c JOIN pg_namespace n "
    "ON n.oid = c.relnamespace WHERE n.nspname = current_schema() AND c.relkind = 'r' "
    "ORDER BY c.relname"
)
_RELATION_FILES = (  # the tables, their TOAST, and every index of either
    "WITH t AS (SELECT c.oid, c.reltoastrelid FROM pg_class c JOIN pg_namespace n "
    "ON n.oid = c.relnamespace WHERE n.nspname = current_schema() AND c.relkind = 'r'), "
    "r AS (SELECT oid FROM t UNION SELECT reltoastrelid FROM t WHERE reltoastrelid <> 0) "
    "SELECT pg_relation_filepath(oid) FROM r UNION "
    "SELECT pg_relation_filepath(i.indexrelid) FROM pg_index i JOIN r ON r.oid = i.indrelid"
)
_SEARCH = {"message_fts": "message_search", "event_fts": "event_search"}
NO_BACKUPS = (
    "a PostgreSQL database's backups are the server's (pg_dump, base backups, WAL "
    "archives): StrataGate keeps none and cannot rewrite them"
)


class PostgresPurgeStorage(SqlitePurgeStorage):
    """``PurgeStorage`` on a PostgreSQL server: the rows as on SQLite, the server's own
    copies by ``VACUUM (FULL)``, relation files scanned where they can be read."""

    @property
    def server(self) -> EngineDatabase:
        return cast(EngineDatabase, self.db)

    async def leftovers(self, words: Words) -> dict[str, int]:
        return await self.db.read(lambda raw: leftovers(raw, words))

    @asynccontextmanager
    async def secure_deletion(self) -> AsyncIterator[None]:
        yield  # nothing to turn on: the compaction rewrites every table

    async def checkpoint(self) -> None:
        await self.server.server.outside_transaction(_checkpoint)

    async def compact(self) -> None:
        await self.server.server.outside_transaction(_vacuum_full)

    async def file_holds(self, words: Words) -> bool:
        """True unless every relation file could be read and none holds the words (a file
        this machine cannot read may hold them: then the purge compacts anyway)."""
        files = await self.server.server.outside_transaction(relation_files)
        return not files or any(byte_hits(path, words) for path in files)

    async def scan(self, words: Words) -> dict[str, int]:
        files = await self.server.server.outside_transaction(relation_files)
        return {str(path): byte_hits(path, words) for path in files}

    async def remove_stale_copies(self) -> list[str]:
        return []

    async def backups_holding(self, words: Words) -> dict[str, int]:
        return {}

    async def purge_backup(
        self, path: str, words: Words, now: datetime, rules: PurgeRules, topics: TopicsSync
    ) -> str:
        raise StrataGateError(f"{path}: {NO_BACKUPS}")

    async def space_in_backups(self, space: str) -> dict[str, int]:
        return {}

    async def delete_space_in_backup(self, path: str, space: str) -> str:
        raise StrataGateError(f"{path}: {NO_BACKUPS}")


def leftovers(raw: sqlite3.Connection, words: Words) -> dict[str, int]:
    """Every text cell of every table still holding the words, and the search rows whose
    ``tsvector`` still holds one of their index terms (``purge_rows.leftovers``' keys)."""
    purge_rows.register(raw, words)
    found: dict[str, int] = {}
    for table, column in raw.execute(_TEXT_COLUMNS).fetchall():
        sql = f'SELECT count(*) FROM "{table}" WHERE sg_holds("{column}")'
        if n := int(raw.execute(sql).fetchone()[0]):
            found[f"{table}.{column}"] = n
    for name, table in _SEARCH.items():
        sql = f"SELECT count(*) FROM {table} WHERE terms @@ to_tsquery('simple', ?)"
        held = sum(int(raw.execute(sql, (term,)).fetchone()[0]) for term in words.index_terms)
        if held:
            found[f"{name} (index terms)"] = held
    return found


def namespace_tables(raw: sqlite3.Connection) -> list[str]:
    """Every table of the schema with a ``namespace`` column (``space_purge_rows``)."""
    rows = raw.execute(
        "SELECT table_name FROM information_schema.columns WHERE table_schema = "
        "current_schema() AND column_name = 'namespace' ORDER BY table_name"
    ).fetchall()
    return [str(row[0]) for row in rows]


def defer_foreign_keys(raw: sqlite3.Connection) -> None:
    """SQLite's ``defer_foreign_keys``: the schema's keys are ``DEFERRABLE``."""
    raw.execute("SET CONSTRAINTS ALL DEFERRED")


def relation_files(conn: psycopg.Connection[Row]) -> list[Path]:
    """The files of the schema's tables, their TOAST and indexes (every 1 GB segment),
    under the server's data directory; none when this machine cannot read them."""
    try:
        home = conn.execute("SELECT current_setting('data_directory')").fetchone()
    except psycopg.errors.InsufficientPrivilege:
        return []
    if home is None:
        return []
    paths = [Path(home[0]) / row[0] for row in conn.execute(_RELATION_FILES) if row[0]]
    files = [segment for path in paths for segment in _segments(path)]
    return files if files and all(_readable(path) for path in files) else []


def _segments(path: Path) -> list[Path]:
    """A relation's first file and its further segments (``.1``, ``.2``, …)."""
    found, number = [path], 1
    while (segment := path.with_name(f"{path.name}.{number}")).exists():
        found.append(segment)
        number += 1
    return found


def _readable(path: Path) -> bool:
    try:
        with path.open("rb"):
            return True
    except OSError:
        return False


def _vacuum_full(conn: psycopg.Connection[Any]) -> None:
    """Every table of the schema rewritten with only its live rows (indexes, TOAST too)."""
    tables = [row[1] for row in conn.execute(_TABLES)]
    conn.execute(f"VACUUM (FULL, ANALYZE) {', '.join(tables)}")


def _checkpoint(conn: psycopg.Connection[Any]) -> None:
    """The old files a ``VACUUM (FULL)`` left truncated are unlinked at a checkpoint (a
    role without the right waits for the server's next one)."""
    with suppress(psycopg.errors.InsufficientPrivilege):
        conn.execute("CHECKPOINT")
