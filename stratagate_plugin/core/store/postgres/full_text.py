"""Full text on PostgreSQL where its meaning differs from FTS5's, not only its spelling.

The search tables (``message_search``, ``event_search``) hold the engine's own encoded
tokens with a generated ``simple`` tsvector under GIN, written by the same row modules as
FTS5's (the dialect maps the tables, ``MATCH`` and ``rank``), so Chinese and English are
split as on SQLite. What is PostgreSQL's own: counting a term's documents up to a budget
is a lookup in the table's impact index (a GIN probe while that is not current),
remembered per database as SQLite remembers them per file (until the table's document and
token totals change, read in the same statement, so a row another process added is seen
there too), and making the search rows and the impact indexes current at open without
FTS5's DDL.
"""

import sqlite3
from collections.abc import Sequence

from ...events.storage import EventRules
from ...rebuilds import RebuildReport, quiet, rebuilding
from ...text.search_terms import TOKENIZER_VERSION, fts_document, fts_encode
from .. import event_term_index, message_facts, search_index, term_index

_TABLES = {"message_fts": "message_search", "event_fts": "event_search"}
_TOTALS = {  # rows and tokens: moved in the transaction that adds or removes a document
    "message_fts": "SELECT coalesce(sum(messages), 0) || '/' || coalesce(sum(tokens), 0) "
    "FROM message_index_stats",
    "event_fts": "SELECT coalesce(max(rows), 0) || '/' || coalesce(max(tokens), 0) "
    "FROM event_term_totals",
}


def term_counts(
    raw: sqlite3.Connection, table: str, tokens: Sequence[str], budget: int
) -> dict[str, int]:
    """Documents of ``table`` (FTS5's name) per token, counted up to ``budget + 1``: one
    statement for all the tokens (a recall's query has dozens; a round trip each was most
    of its statements), and only for the tokens not remembered (``_counted`` says where
    each count comes from).

    As SQLite's ``search_index.term_counts``: positive counts are kept until the table's
    document or token totals change (they only choose which terms pre-filter), a zero is
    counted afresh; when the table has changed, the remembered ones are counted again."""
    if not tokens:
        return {}
    key = _key(raw, table)
    stamp, known = _COUNTS.get(key, (None, {}))
    unknown = [token for token in tokens if not known.get(token)]
    current, counted = _counted(raw, table, unknown, budget)
    if current != stamp or len(known) > search_index.COUNT_CACHE_TERMS:
        stale = [token for token in tokens if token not in counted]
        if stale:
            counted.update(_counted(raw, table, stale, budget)[1])
        known = {}
        _COUNTS[key] = (current, known)
    known.update(counted)
    return {token: known[token] for token in tokens}


_COUNTS: dict[tuple[str, ...], tuple[str | None, dict[str, int]]] = {}


def _key(raw: sqlite3.Connection, table: str) -> tuple[str, ...]:
    """The database (server and name) and table the counts are of."""
    info = raw.raw.info  # type: ignore[attr-defined]  # postgres/compat.py's connection
    return (str(info.host), str(info.port), str(info.dbname), table)


def _counted(
    raw: sqlite3.Connection, table: str, tokens: Sequence[str], budget: int
) -> tuple[str, dict[str, int]]:
    """The table's stamp (its database's oid, as a database made again under the same name
    must not inherit counts; its documents' and tokens' totals, which the transaction that
    adds or removes a document moves, so a row another writer commits late is seen, as a
    newest key is not: keys are not handed out in commit order) and those tokens' bounded
    counts, in one statement.

    A count comes from the table's impact index while it is current (its version in
    ``meta``, read in the statement): the index holds the same documents' terms, written
    in the same transactions, so the counts are the same. The GIN probe it replaces
    rechecked each document on the heap: a token in 2,000 messages read ~1,700 pages, up
    to ~18 ms when they were not cached."""
    version_key, version, from_index = _IMPACT_COUNTS[table]
    sql = (
        f"SELECT CAST(d.oid AS text) || ':' || ({_TOTALS[table]}), 0 FROM pg_database d "
        "WHERE d.datname = current_database() UNION ALL "
        "SELECT t.token, CASE WHEN (SELECT value FROM meta WHERE key = ?) = ? "
        f"THEN ({from_index}) ELSE (SELECT count(*) FROM (SELECT 1 FROM {_TABLES[table]} "
        "WHERE terms @@ to_tsquery('simple', t.term) LIMIT ?) AS found) END "
        "FROM unnest(CAST(? AS text[]), CAST(? AS text[])) AS t(token, term)"
    )
    terms = [fts_encode(token) for token in tokens]
    params = (version_key, str(version), budget + 1, budget + 1, list(tokens), terms)
    rows = raw.execute(sql, params).fetchall()
    (stamp, _), counts = rows[0], rows[1:]
    return stamp, {token: int(count) for token, count in counts}


_IMPACT_COUNTS = {  # (its version's key in meta, the current version, a token's count)
    "message_fts": (
        term_index.VERSION_KEY,
        term_index.INDEX_VERSION,
        "SELECT least(coalesce(sum(c.messages), 0), ?) FROM namespaces n "
        "JOIN term_counts c ON c.namespace = n.namespace AND c.term = t.token",
    ),
    "event_fts": (
        event_term_index.VERSION_KEY,
        event_term_index.INDEX_VERSION,
        "SELECT count(*) FROM (SELECT 1 FROM event_terms e WHERE e.term = t.token LIMIT ?) AS held",
    ),
}


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
