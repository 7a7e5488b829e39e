"""What the raw channel needs of an indexed message, beside the impact index: one narrow row.

A ranked raw search reads ~200 matches and ~300 thread neighbours; from ``messages`` each
costs its row, its block's row (for the block's sequence) and, for a neighbour, its FTS
text (for its token length), ~10 µs a message at 500k messages. ``message_facts`` keeps,
per conversation message with an FTS row, its thread and position (the key, so a
neighbour range is one probe), index rowid (a unique index, so a match is one probe), id,
block and block sequence, whether it was composed from memory, token length and
``label``: its text up to its first colon when that colon is within the first
``LABEL_ROOM`` characters (all of a ``Name:`` label ``raw_channel.speaker_label`` can
take), else empty.

Kept where the impact index is (``term_index.add`` and ``remove``, so sealing, imports
and their undo, a purge's re-index); a space's deletion deletes its rows as every
table's with a ``namespace``. A message's facts never change while it is indexed: it is
marked composed from memory before its block is sealed, a purge re-indexes it, and a
block's sequence is fixed at sealing. Derived, not history: created and rebuilt by live
code when ``FACTS_VERSION`` is not the stored one (PostgreSQL's schema makes the table).
"""

import json
import sqlite3
from collections.abc import Iterable, Sequence
from typing import Any

from ..records import IMPORT_THREAD_PREFIX
from .units import has_table

FACTS_VERSION = 1
TABLE_NAMES = ("message_facts",)
LABEL_ROOM = 41
_VERSION_KEY = "message_facts_version"
_COLUMNS = (
    "namespace, thread_id, position, fts_rowid, id, block_id, block_sequence, echo, length, label"
)
_DDL = (
    "CREATE TABLE IF NOT EXISTS message_facts (namespace TEXT NOT NULL, "
    "thread_id TEXT NOT NULL, position INTEGER NOT NULL, fts_rowid INTEGER NOT NULL, "
    "id TEXT NOT NULL, block_id TEXT NOT NULL, block_sequence INTEGER NOT NULL, "
    "echo INTEGER NOT NULL, length INTEGER NOT NULL, label TEXT NOT NULL, "
    "PRIMARY KEY (namespace, thread_id, position)) WITHOUT ROWID",
    "CREATE UNIQUE INDEX IF NOT EXISTS message_facts_rowid ON message_facts(fts_rowid)",
)
_SOURCE = (
    "SELECT m.namespace, m.thread_id, m.position, m.fts_rowid, m.id, m.block_id, b.sequence, "
    "m.composed_from_memory, m.content FROM messages m JOIN blocks b ON b.id = m.block_id "
)


def label_room(content: str) -> str:
    """The text up to its first colon when the colon is within ``LABEL_ROOM`` characters."""
    colon = content.find(":", 0, LABEL_ROOM)
    return content[: colon + 1] if colon >= 0 else ""


def is_current(raw: sqlite3.Connection) -> bool:
    row = raw.execute("SELECT value FROM meta WHERE key = ?", (_VERSION_KEY,)).fetchone()
    return row is not None and int(row[0]) == FACTS_VERSION


def rebuild(raw: sqlite3.Connection) -> None:
    """The table anew (SQLite: made here) from every indexed conversation message."""
    for statement in _DDL:
        raw.execute(statement)
    refill(raw)


def refill(raw: sqlite3.Connection) -> None:
    """``rebuild`` into a table that exists (PostgreSQL's schema makes it): each message's
    length counted on its FTS text, as the impact index counts it."""
    raw.execute("DELETE FROM message_facts")
    rows = raw.execute(
        "SELECT m.fts_rowid, f.tokens FROM messages m JOIN message_fts f ON f.rowid = m.fts_rowid"
    )
    lengths = {int(rowid): len(document.split()) for rowid, document in rows}
    _insert(raw, _source_rows(raw, "WHERE m.fts_rowid IS NOT NULL", ()), lengths)
    raw.execute(
        "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (_VERSION_KEY, str(FACTS_VERSION))
    )


def add(raw: sqlite3.Connection, lengths: dict[int, int]) -> None:
    """Facts of the messages with these rowids (rowid → token length), read now."""
    if lengths and _has_table(raw):
        where = "WHERE m.fts_rowid IN (SELECT value FROM json_each(?))"
        _insert(raw, _source_rows(raw, where, (json.dumps(sorted(lengths)),)), lengths)


def remove(raw: sqlite3.Connection, rowids: Sequence[int]) -> None:
    if rowids and _has_table(raw):
        raw.execute(
            "DELETE FROM message_facts WHERE fts_rowid IN (SELECT value FROM json_each(?))",
            (json.dumps(list(rowids)),),
        )


def _source_rows(raw: sqlite3.Connection, where: str, args: tuple[Any, ...]) -> Iterable[Any]:
    return raw.execute(_SOURCE + where, args)


def _insert(raw: sqlite3.Connection, rows: Iterable[Any], lengths: dict[int, int]) -> None:
    """The conversation messages of ``rows`` (an import's source is no raw hit) with an FTS
    row (a length)."""
    facts = [
        (*row[:7], int(row[7]), lengths[row[3]], label_room(row[8]))
        for row in rows
        if row[3] in lengths and not row[1].startswith(IMPORT_THREAD_PREFIX)
    ]
    raw.executemany(
        f"INSERT INTO message_facts({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
        "ON CONFLICT(namespace, thread_id, position) DO UPDATE SET "
        "fts_rowid = excluded.fts_rowid, id = excluded.id, block_id = excluded.block_id, "
        "block_sequence = excluded.block_sequence, echo = excluded.echo, "
        "length = excluded.length, label = excluded.label",
        facts,
    )


def _has_table(raw: sqlite3.Connection) -> bool:
    return has_table(raw, "message_facts")


_READ = (  # ``retrieval_rows``' order of a ``ChannelMessage``, the label as its content
    "f.id, f.thread_id, f.block_id, f.position, f.block_sequence, f.echo, f.label, "
    "f.fts_rowid, f.length"
)


def at_rowids(raw: sqlite3.Connection, space: str, rowids: Sequence[int]) -> list[tuple[Any, ...]]:
    """The space's indexed conversation messages at these rowids, in that order."""
    return raw.execute(
        f"SELECT {_READ} FROM json_each(?) j CROSS JOIN message_facts f "
        "ON f.fts_rowid = j.value WHERE f.namespace = ? ORDER BY j.key",
        (json.dumps(list(rowids)), space),
    ).fetchall()


def around(
    raw: sqlite3.Connection, space: str, spans: Sequence[tuple[str, int, int]]
) -> list[tuple[Any, ...]]:
    """The indexed conversation messages of each (thread, first, last position) span."""
    if not spans:  # PostgreSQL cannot type the unnest of an empty array
        return []
    return raw.execute(
        f"SELECT {_READ} FROM json_each(?) j CROSS JOIN message_facts f ON f.namespace = ? "
        "AND f.thread_id = json_extract(j.value, '$[0]') "
        "AND f.position BETWEEN json_extract(j.value, '$[1]') AND json_extract(j.value, '$[2]')",
        (json.dumps(list(spans)), space),
    ).fetchall()
