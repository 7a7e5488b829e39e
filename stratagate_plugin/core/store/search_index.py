"""The FTS5 index over message text, kept in sync inside the writing transaction.

Where the SQLite build lacks FTS5 the index is simply absent and readers scan instead.
"""

import json
import sqlite3

from ..events import event_search_text
from ..tokenize import TOKENIZER_VERSION, fts_document


def register_functions(raw: sqlite3.Connection) -> None:
    raw.create_function("sg_fts_document", 1, fts_document, deterministic=True)


def fts5_available(raw: sqlite3.Connection) -> bool:
    try:
        raw.execute("CREATE VIRTUAL TABLE temp.sg_fts_probe USING fts5(x)")
    except sqlite3.OperationalError:
        return False
    raw.execute("DROP TABLE temp.sg_fts_probe")
    return True


def has_index(raw: sqlite3.Connection) -> bool:
    row = raw.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'message_fts'"
    ).fetchone()
    return row is not None


def ensure_index(raw: sqlite3.Connection) -> None:
    """Create the index when FTS5 exists; rebuild it when the tokenizer changed."""
    if not fts5_available(raw):
        return
    raw.execute("CREATE VIRTUAL TABLE IF NOT EXISTS message_fts USING fts5(tokens)")
    raw.execute("CREATE VIRTUAL TABLE IF NOT EXISTS event_fts USING fts5(tokens)")
    row = raw.execute("SELECT value FROM meta WHERE key = 'fts_tokenizer_version'").fetchone()
    if row is not None and int(row[0]) == TOKENIZER_VERSION:
        return
    raw.execute("DELETE FROM message_fts")
    raw.execute(
        "INSERT INTO message_fts(rowid, tokens) SELECT pk, sg_fts_document(content) FROM messages"
    )
    raw.execute("DELETE FROM event_fts")
    for row in raw.execute("SELECT * FROM events").fetchall():
        index_event(raw, row["pk"], event_row_text(row))
    raw.execute(
        "INSERT OR REPLACE INTO meta(key, value) VALUES ('fts_tokenizer_version', ?)",
        (str(TOKENIZER_VERSION),),
    )


def index_messages(raw: sqlite3.Connection, rows: list[tuple[int, str]]) -> None:
    """Index (pk, content) pairs; a no-op where the build has no FTS5 (no index table)."""
    try:
        raw.executemany(
            "INSERT INTO message_fts(rowid, tokens) VALUES (?, ?)",
            [(pk, fts_document(content)) for pk, content in rows],
        )
    except sqlite3.OperationalError as error:
        if "no such table: message_fts" not in str(error):
            raise


def event_row_text(row: sqlite3.Row) -> str:
    return event_search_text(
        row["title"],
        row["summary"],
        json.loads(row["tags_json"]),
        json.loads(row["quotes_json"]),
        json.loads(row["temporal_json"]),
    )


def index_event(raw: sqlite3.Connection, pk: int, text: str) -> None:
    """(Re)index one event's searchable text; a no-op without FTS5."""
    try:
        raw.execute("DELETE FROM event_fts WHERE rowid = ?", (pk,))
        raw.execute("INSERT INTO event_fts(rowid, tokens) VALUES (?, ?)", (pk, fts_document(text)))
    except sqlite3.OperationalError as error:
        if "no such table: event_fts" not in str(error):
            raise
