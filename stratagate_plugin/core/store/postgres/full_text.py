"""Full text on PostgreSQL where its meaning differs from FTS5's, not only its spelling.

The search tables (``message_search``, ``event_search``) hold the engine's own encoded
tokens with a generated ``simple`` tsvector under GIN, written by the same row modules as
FTS5's (the dialect maps the tables, ``MATCH`` and ``rank``), so Chinese and English are
split as on SQLite. What is PostgreSQL's own: counting a term's documents up to a budget
is one GIN probe per term, with no per-file cache (several processes write one database,
so a count remembered here could be stale; SQLite's cache is keyed by the file).
"""

import sqlite3
from collections.abc import Sequence

from ...text.search_terms import fts_encode

_TABLES = {"message_fts": "message_search", "event_fts": "event_search"}


def term_counts(
    raw: sqlite3.Connection, table: str, tokens: Sequence[str], budget: int
) -> dict[str, int]:
    """Documents of ``table`` (FTS5's name) per token, counted up to ``budget + 1``."""
    sql = (
        f"SELECT count(*) FROM (SELECT 1 FROM {_TABLES[table]} "
        "WHERE terms @@ to_tsquery('simple', ?) LIMIT ?) AS found"
    )
    return {
        token: int(raw.execute(sql, (fts_encode(token), budget + 1)).fetchone()[0])
        for token in tokens
    }
