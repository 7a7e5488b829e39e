"""Full text on PostgreSQL where its meaning differs from FTS5's, not only its spelling.

The search tables (``message_search``, ``event_search``) hold the engine's own encoded
tokens with a generated ``simple`` tsvector under GIN, written by the same row modules as
FTS5's (the dialect maps the tables, ``MATCH`` and ``rank``), so Chinese and English are
split as on SQLite. What is PostgreSQL's own: counting a term's documents up to a budget
is one GIN probe per term, with no per-file cache (several processes write one database,
so a count remembered here could be stale; SQLite's cache is keyed by the file), and making
the search rows and the impact indexes current at open without FTS5's DDL.
"""

import sqlite3
from collections.abc import Sequence

from ...events.storage import EventRules
from ...rebuilds import RebuildReport, quiet, rebuilding
from ...text.search_terms import TOKENIZER_VERSION, fts_document, fts_encode
from .. import event_term_index, message_facts, search_index, term_index

_TABLES = {"message_fts": "message_search", "event_fts": "event_search"}


def term_counts(
    raw: sqlite3.Connection, table: str, tokens: Sequence[str], budget: int
) -> dict[str, int]:
    """Documents of ``table`` (FTS5's name) per token, counted up to ``budget + 1``: one
    statement for all the tokens (a recall's query has dozens; a round trip each was most
    of its statements), each token's count still its own bounded GIN probe."""
    if not tokens:
        return {}
    sql = (
        "SELECT t.token, (SELECT count(*) FROM (SELECT 1 FROM "
        f"{_TABLES[table]} WHERE terms @@ to_tsquery('simple', t.term) LIMIT ?) AS found) "
        "FROM unnest(CAST(? AS text[]), CAST(? AS text[])) AS t(token, term)"
    )
    terms = [fts_encode(token) for token in tokens]
    rows = raw.execute(sql, (budget + 1, list(tokens), terms)).fetchall()
    return {token: int(count) for token, count in rows}


def ensure_current(
    raw: sqlite3.Connection, rules: EventRules | None, report: RebuildReport = quiet
) -> None:
    """At open, as SQLite's ``search_index.ensure_index``: the search rows made again when
    the tokenizer changed (the engine's tokens, computed here: PostgreSQL has no
    ``sg_fts_document``), then each impact index refilled when its version is not current;
    each said to ``report``."""
    row = raw.execute("SELECT value FROM meta WHERE key = 'fts_tokenizer_version'").fetchone()
    if row is None or int(row[0]) != TOKENIZER_VERSION:
        items = search_index.count_rows(raw, search_index.MESSAGE_ROWS) + search_index.count_rows(
            raw, search_index.EVENT_ROWS
        )
        with rebuilding(report, search_index.FULL_TEXT_INDEX, items, "messages and events"):
            _refill(raw, rules)
    elif not term_index.index_is_current(raw):
        messages = search_index.count_rows(raw, search_index.INDEXED_MESSAGES)
        with rebuilding(report, search_index.SEARCH_INDEX, messages, "messages"):
            term_index.refill(raw)
    if not message_facts.is_current(raw):
        message_facts.refill(raw)
    if not event_term_index.index_is_current(raw):
        events = search_index.count_rows(raw, search_index.EVENT_ROWS)
        with rebuilding(report, search_index.EVENT_INDEX, events, "events"):
            event_term_index.rebuild(raw)


def _refill(raw: sqlite3.Connection, rules: EventRules | None) -> None:
    raw.execute("DELETE FROM message_fts")
    messages = raw.execute(
        "SELECT fts_rowid, content FROM messages WHERE fts_rowid IS NOT NULL"
    ).fetchall()
    raw.executemany(
        "INSERT INTO message_fts(rowid, tokens) VALUES (?, ?)",
        [(rowid, fts_document(content)) for rowid, content in messages],
    )
    search_index.recount_index_stats(raw)
    raw.execute("DELETE FROM event_fts")
    event_term_index.rebuild(raw)  # empty now; each event's row is added to it below
    for event in raw.execute("SELECT * FROM events").fetchall():
        search_index.index_event(raw, event["pk"], search_index.event_row_text(event), rules)
    raw.execute(
        "INSERT OR REPLACE INTO meta(key, value) VALUES ('fts_tokenizer_version', ?)",
        (str(TOKENIZER_VERSION),),
    )
    term_index.refill(raw)
    message_facts.refill(raw)
