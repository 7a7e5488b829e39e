"""The FTS5 index over message text, kept in sync inside the writing transaction.

Where the SQLite build lacks FTS5 the index is simply absent and readers scan instead.
An event's stored BM25 document is written beside its FTS5 row by the rule the events
capability hands in (``EventRules``); the store knows only how to keep it.
Readers pre-filter on a query's rarest terms (``prefilter``) so that the work per query is
bounded by ``POSTING_BUDGET`` postings however common the other query words are.
"""

import json
import sqlite3
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ..events.cards import event_search_text
from ..events.storage import DocumentFields, EventRules
from ..rebuilds import RebuildReport, quiet, rebuilding
from ..text.search_terms import (
    TOKENIZER_VERSION,
    fts_document,
    fts_encode,
    fts_match_any,
    tokenize,
)
from . import event_term_index, message_facts, term_index
from .units import has_table, on_postgres

POSTING_BUDGET = 2000
MAX_PREFILTER_TERMS = 16
COUNT_CACHE_TERMS = 50_000


@dataclass(frozen=True)
class Prefilter:
    """An FTS5 MATCH over the rarest query ``terms`` (in the MATCH's order, which the
    MATCH says already: not compared); ``ranked``: ranking every match is affordable."""

    match: str
    ranked: bool
    terms: tuple[str, ...] = field(default=(), compare=False)


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
    return has_table(raw, "message_fts")


def index_is_current(raw: sqlite3.Connection) -> bool:
    """True when ``ensure_index`` would change nothing (checked without a write lock)."""
    if not fts5_available(raw):
        return True
    tables = {
        row[0]
        for row in raw.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' "
            "AND name IN ('message_fts', 'event_fts')"
        )
    }
    row = raw.execute("SELECT value FROM meta WHERE key = 'fts_tokenizer_version'").fetchone()
    current = len(tables) == 2 and row is not None and int(row[0]) == TOKENIZER_VERSION
    impact = term_index.index_is_current(raw) and message_facts.is_current(raw)
    return current and impact and event_term_index.index_is_current(raw)


def ensure_index(
    raw: sqlite3.Connection, rules: EventRules | None = None, report: RebuildReport = quiet
) -> None:
    """Create the index when FTS5 exists; rebuild it when the tokenizer changed, with the
    events' stored documents when ``rules`` are given (without, readers tokenise), and the
    impact indexes whenever the FTS rows were rebuilt or their own version changed. Each
    rebuild is said to ``report`` as it starts and ends (minutes on a large file)."""
    if not fts5_available(raw):
        return
    raw.execute("CREATE VIRTUAL TABLE IF NOT EXISTS message_fts USING fts5(tokens)")
    raw.execute("CREATE VIRTUAL TABLE IF NOT EXISTS event_fts USING fts5(tokens)")
    row = raw.execute("SELECT value FROM meta WHERE key = 'fts_tokenizer_version'").fetchone()
    if row is not None and int(row[0]) == TOKENIZER_VERSION:
        if not term_index.index_is_current(raw):
            with rebuilding(report, SEARCH_INDEX, count_rows(raw, INDEXED_MESSAGES), "messages"):
                term_index.rebuild(raw)
        if not message_facts.is_current(raw):
            message_facts.rebuild(raw)
        if not event_term_index.index_is_current(raw):
            with rebuilding(report, EVENT_INDEX, count_rows(raw, EVENT_ROWS), "events"):
                event_term_index.rebuild(raw)
        return
    items = count_rows(raw, MESSAGE_ROWS) + count_rows(raw, EVENT_ROWS)
    with rebuilding(report, FULL_TEXT_INDEX, items, "messages and events"):
        _refill(raw, rules)


SEARCH_INDEX, EVENT_INDEX = "the search index", "the event search index"
FULL_TEXT_INDEX = "the full-text and search indexes"
INDEXED_MESSAGES = "SELECT coalesce(sum(messages), 0) FROM message_index_stats"
MESSAGE_ROWS = "SELECT count(*) FROM messages WHERE fts_rowid IS NOT NULL"
EVENT_ROWS = "SELECT count(*) FROM events"


def count_rows(raw: sqlite3.Connection, sql: str) -> int:
    """What a count query (``INDEXED_MESSAGES``, ``EVENT_ROWS``, …) finds."""
    return int(raw.execute(sql).fetchone()[0])


def _refill(raw: sqlite3.Connection, rules: EventRules | None) -> None:
    """Every FTS row made again under the current tokenizer, then both impact indexes."""
    raw.execute("DELETE FROM message_fts")
    raw.execute(
        "INSERT INTO message_fts(rowid, tokens) SELECT fts_rowid, sg_fts_document(content) "
        "FROM messages WHERE fts_rowid IS NOT NULL"
    )
    recount_index_stats(raw)
    raw.execute("DELETE FROM event_fts")
    event_term_index.drop(raw)  # rebuilt below, once the FTS rows are
    for row in raw.execute("SELECT * FROM events").fetchall():
        index_event(raw, row["pk"], event_row_text(row), rules)
    raw.execute(
        "INSERT OR REPLACE INTO meta(key, value) VALUES ('fts_tokenizer_version', ?)",
        (str(TOKENIZER_VERSION),),
    )
    term_index.rebuild(raw)
    message_facts.rebuild(raw)
    event_term_index.rebuild(raw)


def token_count(text: str) -> str:
    """SQL for the tokens in an FTS row's ``text``: one space-separated term each."""
    return (
        f"CASE WHEN {text} = '' THEN 0 ELSE length({text}) - length(replace({text}, ' ', '')) "
        "+ 1 END"
    )


FTS_TOKEN_COUNT = token_count("f.tokens")
FTS_CONTENT = "message_fts_content"
"""FTS5's own table of the rows' text (column ``c0``): read by rowid it costs a plain
lookup, where ``message_fts`` answers each ``rowid =`` probe through its virtual cursor
(~3× the cost; it is most of a raw search's neighbour read)."""


def index_messages(raw: sqlite3.Connection, space: str, rows: list[tuple[int, str]]) -> None:
    """Index one block's (fts_rowid, content) pairs and add them to the namespace's counts;
    a no-op where the build has no FTS5 (no index table)."""
    tokens_of = {rowid: tokenize(content) for rowid, content in rows}
    documents = [(rowid, " ".join(map(fts_encode, tokens))) for rowid, tokens in tokens_of.items()]
    try:
        raw.executemany("INSERT INTO message_fts(rowid, tokens) VALUES (?, ?)", documents)
    except sqlite3.OperationalError as error:
        if "no such table: message_fts" not in str(error):
            raise
        return
    tokens = sum(document.count(" ") + 1 for _, document in documents if document)
    raw.execute(
        "INSERT INTO message_index_stats(namespace, messages, tokens, blocks) VALUES (?, ?, ?, 1) "
        "ON CONFLICT(namespace) DO UPDATE SET messages = messages + excluded.messages, "
        "tokens = tokens + excluded.tokens, blocks = blocks + 1",
        (space, len(documents), tokens),
    )
    term_index.add(raw, term_index.described(raw, tokens_of))


def unindex_messages(raw: sqlite3.Connection, rowids: Sequence[int]) -> None:
    """Take messages (by ``fts_rowid``) out of the index and out of their namespace's counts,
    a block no longer counted once none of its messages is indexed (a purge)."""
    if not rowids or not has_index(raw):
        return
    wanted = json.dumps(list(rowids))
    found = raw.execute(
        f"SELECT m.namespace, m.block_id, {FTS_TOKEN_COUNT} FROM message_fts f JOIN messages m "
        "ON m.fts_rowid = f.rowid WHERE f.rowid IN (SELECT value FROM json_each(?))",
        (wanted,),
    ).fetchall()
    term_index.remove(raw, term_index.messages_at(raw, rowids))
    raw.execute(
        "DELETE FROM message_fts WHERE rowid IN (SELECT value FROM json_each(?))", (wanted,)
    )
    blocks = {(space, block_id) for space, block_id, _ in found}
    for namespace, block_id in blocks:
        rows = [tokens for space, block, tokens in found if (space, block) == (namespace, block_id)]
        still = raw.execute(
            "SELECT 1 FROM messages m JOIN message_fts f ON f.rowid = m.fts_rowid "
            "WHERE m.block_id = ? LIMIT 1",
            (block_id,),
        ).fetchone()
        raw.execute(
            "UPDATE message_index_stats SET messages = messages - ?, tokens = tokens - ?, "
            "blocks = blocks - ? WHERE namespace = ?",
            (len(rows), sum(int(t) for t in rows), int(still is None), namespace),
        )


def recount_index_stats(raw: sqlite3.Connection) -> None:
    """Per namespace: indexed (sealed) messages, their FTS tokens and blocks, from scratch."""
    raw.execute("DELETE FROM message_index_stats")
    raw.execute(
        "INSERT INTO message_index_stats(namespace, messages, tokens, blocks) "
        f"SELECT m.namespace, count(*), coalesce(sum({FTS_TOKEN_COUNT}), 0), "
        "count(DISTINCT m.block_id) FROM messages m JOIN message_fts f ON f.rowid = m.fts_rowid "
        "WHERE m.block_id IS NOT NULL GROUP BY m.namespace"
    )


def document_fields(row: sqlite3.Row) -> DocumentFields:
    """The searchable fields of an events row (title, summary, tags, quotes, temporal)."""
    return DocumentFields(
        row["title"],
        row["summary"],
        json.loads(row["tags_json"]),
        json.loads(row["quotes_json"]),
        json.loads(row["temporal_json"]),
    )


def event_row_text(row: sqlite3.Row) -> str:
    return event_search_text(*document_fields(row))


def index_event(raw: sqlite3.Connection, pk: int, text: str, rules: EventRules | None) -> None:
    """(Re)index one event: its stored BM25 document by ``rules`` (``None``: none stored,
    readers tokenise its fields), and its text in FTS5 and the impact index where present."""
    if rules is not None:
        store_document(raw, pk, rules)
    tokens = tokenize(text)
    try:
        unindex_events(raw, [pk])
        raw.execute(
            "INSERT INTO event_fts(rowid, tokens) VALUES (?, ?)",
            (pk, " ".join(map(fts_encode, tokens))),
        )
    except sqlite3.OperationalError as error:
        if "no such table: event_fts" not in str(error):
            raise
        return
    event_term_index.add(raw, pk, tokens)


def unindex_events(raw: sqlite3.Connection, pks: Sequence[int]) -> None:
    """Take events' rows out of FTS5 and the impact index (raises where FTS5 is absent)."""
    event_term_index.remove(raw, pks)
    raw.executemany("DELETE FROM event_fts WHERE rowid = ?", [(pk,) for pk in pks])


def reindex_event(raw: sqlite3.Connection, event_id: str, rules: EventRules) -> None:
    """``index_event`` of an event as stored now (after an edit of its row)."""
    cursor = raw.cursor()
    cursor.row_factory = sqlite3.Row
    row = cursor.execute("SELECT * FROM events WHERE id = ?", (event_id,)).fetchone()
    index_event(raw, row["pk"], event_row_text(row), rules)


def store_document(raw: sqlite3.Connection, pk: int, rules: EventRules) -> None:
    """Keep the event's weighted token counts (``rules.document``), stamped with its
    ``updated_at`` and ``rules.document_version``.

    Readers trust a stored document only while its stamp equals ``document_stamp`` of the
    event now, so a write path that forgets to re-index, a new tokenizer or new field
    weights cost speed, never correctness.
    """
    cursor = raw.cursor()
    cursor.row_factory = sqlite3.Row
    row = cursor.execute("SELECT * FROM events WHERE pk = ?", (pk,)).fetchone()
    counts, length = rules.document(document_fields(row))
    stamp = document_stamp(row["updated_at"], rules.document_version)
    try:
        raw.execute(
            "INSERT OR REPLACE INTO event_documents(pk, stamp, length, counts_json) "
            "VALUES (?, ?, ?, ?)",
            (pk, stamp, length, json.dumps(counts, ensure_ascii=False)),
        )
    except sqlite3.OperationalError as error:
        if "no such table: event_documents" not in str(error):
            raise


def document_stamp(updated_at: str, version: int) -> str:
    """The event's ``updated_at`` and the version of the rule that made its document."""
    return f"{updated_at}#{version:08x}"


def prefilter(raw: sqlite3.Connection, table: str, tokens: Sequence[str]) -> Prefilter | None:
    """The rarest indexed terms (at most 16) whose postings together fit ``POSTING_BUDGET``.

    ``None`` when no indexed document holds any of the tokens. When every term fits (any
    small database), this is the plain OR of all indexed query terms, ranked by FTS5 as
    before; when even the rarest term is over budget, candidates come newest first.
    """
    chosen, total = prefilter_terms(term_counts(raw, table, list(dict.fromkeys(tokens))))
    if not chosen:
        return None
    return Prefilter(fts_match_any(chosen), total <= POSTING_BUDGET, tuple(chosen))


def prefilter_terms(counts: Mapping[str, int]) -> tuple[list[str], int]:
    """(the rarest terms that fit ``POSTING_BUDGET``, at least one; their postings in
    all), from each term's ``term_counts``."""
    rarest = sorted((n, token) for token, n in counts.items() if n > 0)[:MAX_PREFILTER_TERMS]
    chosen: list[str] = []
    total = 0
    for count, token in rarest:
        if chosen and total + count > POSTING_BUDGET:
            break
        chosen.append(token)
        total += count
    return chosen, total


def term_counts(raw: sqlite3.Connection, table: str, tokens: Sequence[str]) -> dict[str, int]:
    """Documents per token, counted only up to ``POSTING_BUDGET + 1`` (bounded work).

    Positive counts are remembered per database file until the index gains a row: they only
    choose which terms pre-filter, and a term that vanished simply matches nothing. A zero
    is always counted afresh, so a word an update added is never left out.
    """
    if on_postgres(raw):  # PostgreSQL counts by its own module (loaded only there)
        from .postgres.full_text import term_counts as counted_on_postgres

        return counted_on_postgres(raw, table, tokens, POSTING_BUDGET)
    sql = f"SELECT count(*) FROM (SELECT 1 FROM {table} WHERE {table} MATCH ? LIMIT ?)"
    known = _count_cache(raw, table)
    for token in tokens:
        if not known.get(token):
            found = raw.execute(sql, (fts_match_any([token]), POSTING_BUDGET + 1)).fetchone()
            known[token] = int(found[0])
    return {token: known[token] for token in tokens}


_COUNTS: dict[tuple[str, str], tuple[int, dict[str, int]]] = {}


def _count_cache(raw: sqlite3.Connection, table: str) -> dict[str, int]:
    """The remembered counts of ``table`` in this file (a fresh dict for in-memory ones)."""
    path = next((row[2] for row in raw.execute("PRAGMA database_list") if row[1] == "main"), "")
    newest = raw.execute(f"SELECT max(rowid) FROM {table}_content").fetchone()[0] or 0
    if not path:
        return {}
    stamp, counts = _COUNTS.get((path, table), (-1, {}))
    if stamp != newest or len(counts) > COUNT_CACHE_TERMS:
        counts = {}
        _COUNTS[(path, table)] = (newest, counts)
    return counts
