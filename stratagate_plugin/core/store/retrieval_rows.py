"""Rows for retrieval: raw-channel candidates and their context, BM25 counts, blocks, dates.

The raw channel never loads a whole namespace when the impact index exists
(``term_index``; it does wherever FTS5 does): it reads the messages at the rowids the
index ranked best, the thread neighbours their context votes need, and the namespace-wide
counts the index keeps (``term_statistics``); without FTS5 every sealed message is read
(``scan_messages``). The other sessions' open tails, which the index does not hold, are
read whole (they are short and few). Tokenising and scoring are ``retrieval``'s.
"""

import json
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from ..clock import parse_iso
from ..retrieval.storage import OPEN_TAIL, ChannelMessage, CorpusStats
from . import message_facts, term_index
from .block_rows import open_tails
from .raw_search import NOT_IMPORT_SOURCE, fetch_rows
from .search_index import FTS_CONTENT, token_count

_COLUMNS = (
    "m.id, m.thread_id, m.block_id, m.position, b.sequence AS block_sequence, "
    "m.composed_from_memory"
)
_SEALED = f"JOIN blocks b ON b.id = m.block_id WHERE m.namespace = ? AND {NOT_IMPORT_SOURCE}"
_TAILS = (  # an open tail is a block of its own, newer than every sealed one
    f"SELECT m.id, m.thread_id, '{OPEN_TAIL}:' || m.thread_id AS block_id, m.position, "
    "(SELECT block_count + 1 FROM namespaces WHERE namespace = t.namespace) AS block_sequence, "
    "m.composed_from_memory, m.content "
)


def indexed_messages(
    raw: sqlite3.Connection,
    space: str,
    rowids: Sequence[int],
    reach: int,
    around: int,
    lengths: Mapping[int, int] | None = None,
) -> tuple[list[ChannelMessage], list[ChannelMessage]]:
    """The sealed conversation messages at these index rowids (in that order) and the
    thread neighbours within ``reach`` of the first ``around`` of them: two reads, each
    message with its token length (counted on FTS5's stored text, read by rowid). A
    match's length in ``lengths`` (the impact index's) is not read again: its FTS text
    is read only when it is not known (a third, small read)."""
    if not rowids:  # nothing to read (PostgreSQL cannot type the unnest of an empty array)
        return [], []
    if message_facts.is_current(raw):
        return _from_facts(raw, space, rowids, reach, around)
    known = lengths or {}
    rows = raw.execute(
        f"SELECT {_COLUMNS}, m.content, m.fts_rowid FROM json_each(?) j "
        "CROSS JOIN messages m ON m.fts_rowid = j.value JOIN blocks b ON b.id = m.block_id "
        f"WHERE m.namespace = ? AND {NOT_IMPORT_SOURCE} ORDER BY j.key",
        (json.dumps(list(rowids)), space),
    ).fetchall()
    unknown = [row[7] for row in rows if row[7] not in known]
    counted = {**known, **_token_lengths(raw, unknown)} if unknown else known
    matched = [_indexed_message((*row, counted[row[7]])) for row in rows if row[7] in counted]
    return matched, _neighbours_at(raw, space, matched, reach, around)


def _token_lengths(raw: sqlite3.Connection, rowids: Sequence[int]) -> dict[int, int]:
    """Each FTS row's token length (a row FTS5 does not hold is absent, as a join drops it)."""
    rows = raw.execute(
        f"SELECT c.id, {token_count('c.c0')} FROM {FTS_CONTENT} c "
        "WHERE c.id IN (SELECT value FROM json_each(?))",
        (json.dumps(list(rowids)),),
    )
    return {int(rowid): int(length) for rowid, length in rows}


_INDEXED = (
    f"{_COLUMNS}, m.content, m.fts_rowid, {token_count('c.c0')}"  # ``ChannelMessage``'s order
)


def _from_facts(
    raw: sqlite3.Connection, space: str, rowids: Sequence[int], reach: int, around: int
) -> tuple[list[ChannelMessage], list[ChannelMessage]]:
    """``indexed_messages`` from ``message_facts``: a probe a match, a range a neighbourhood,
    no message, block or FTS row read (each message's label stands for its content)."""
    matched = [_indexed_message(row) for row in message_facts.at_rowids(raw, space, rowids)]
    rows = message_facts.around(raw, space, _spans(matched, reach, around))
    return matched, _unmatched(rows, matched)


def _neighbours_at(
    raw: sqlite3.Connection,
    space: str,
    matched: Sequence[ChannelMessage],
    reach: int,
    around: int,
) -> list[ChannelMessage]:
    """The messages within ``reach`` of the first ``around`` matches, not matched, in
    (thread, position) order: one range probe per match (overlaps read twice, kept once)."""
    spans = _spans(matched, reach, around)
    if not spans:
        return []
    rows = raw.execute(
        f"SELECT {_INDEXED} FROM json_each(?) j CROSS JOIN messages m ON m.namespace = ? "
        "AND m.thread_id = json_extract(j.value, '$[0]') "
        "AND m.position BETWEEN json_extract(j.value, '$[1]') AND json_extract(j.value, '$[2]') "
        f"JOIN blocks b ON b.id = m.block_id JOIN {FTS_CONTENT} c ON c.id = m.fts_rowid "
        f"WHERE {NOT_IMPORT_SOURCE}",
        (json.dumps(spans), space),
    )
    return _unmatched(rows, matched)


def _spans(
    matched: Sequence[ChannelMessage], reach: int, around: int
) -> list[tuple[str, int, int]]:
    """(thread, first, last position) within ``reach`` of each of the first ``around``."""
    return sorted({(d.thread_id, d.position - reach, d.position + reach) for d in matched[:around]})


def _unmatched(rows: Iterable[Any], matched: Sequence[ChannelMessage]) -> list[ChannelMessage]:
    """The rows of ``_INDEXED`` that are not matches, once each, by (thread, position)."""
    seen = {(d.thread_id, d.position) for d in matched}
    found = {(row[1], row[3]): row for row in rows if (row[1], row[3]) not in seen}
    return [_indexed_message(found[place]) for place in sorted(found)]


def _indexed_message(row: tuple[Any, ...]) -> ChannelMessage:
    """A row of ``_INDEXED``."""
    message_id, thread, block, position, sequence, echo, content, rowid, length = row
    return ChannelMessage(
        message_id, thread, block, position, sequence, content, bool(echo), rowid, length
    )


def scan_messages(raw: sqlite3.Connection, space: str) -> list[ChannelMessage]:
    """Every sealed message of the namespace (no index, or as a reference)."""
    rows = fetch_rows(raw, f"SELECT {_COLUMNS}, m.content FROM messages m {_SEALED}", [space])
    return [_message(row) for row in rows]


def tail_messages(
    raw: sqlite3.Connection, space: str, current_thread: str | None
) -> list[ChannelMessage]:
    """The open-tail messages of every thread but ``current_thread``."""
    return [
        _message(row) for row in fetch_rows(raw, _TAILS + open_tails(raw), [space, current_thread])
    ]


def _message(row: sqlite3.Row) -> ChannelMessage:
    """A scanned or open-tail message (no index rowid, no stored length)."""
    return ChannelMessage(
        row["id"],
        row["thread_id"],
        row["block_id"],
        int(row["position"]),
        int(row["block_sequence"]),
        row["content"],
        bool(row["composed_from_memory"]),
    )


def term_statistics(
    raw: sqlite3.Connection, space: str, terms: Sequence[str], blocks: Sequence[str]
) -> CorpusStats:
    """Index-wide counts of the namespace's sealed text, per term, and ``blocks``' lengths."""
    row = raw.execute(
        "SELECT messages, tokens, blocks FROM message_index_stats WHERE namespace = ?",
        (space,),
    ).fetchone()
    count, total, block_count = row if row is not None else (0, 0, 0)
    stored = term_index.frequencies(raw, space, terms)
    frequencies = {term: stored.get(term, (0, 0)) for term in terms}
    lengths = block_lengths(raw, blocks) if blocks else {}
    return CorpusStats(
        messages=int(count),
        message_tokens=int(total),
        blocks=int(block_count),
        message_df={t: pair[0] for t, pair in frequencies.items()},
        block_df={t: pair[1] for t, pair in frequencies.items()},
        block_lengths=lengths,
    )


def block_lengths(raw: sqlite3.Connection, blocks: Sequence[str]) -> dict[str, int]:
    """Each sealed block's token length, as the impact index keeps it."""
    return term_index.block_lengths(raw, blocks)


def latest_message_time(raw: sqlite3.Connection, space: str) -> datetime | None:
    """When the namespace's newest message was created (the memory's "now").

    Read off each thread's last message (one indexed lookup a thread; CROSS JOIN keeps
    threads as the outer loop), not a scan of the namespace.
    """
    row = raw.execute(
        "SELECT max(m.created_at) FROM threads t CROSS JOIN messages m "
        "ON m.namespace = t.namespace AND m.thread_id = t.thread_id "
        "AND m.position = t.message_count WHERE t.namespace = ?",
        (space,),
    ).fetchone()
    return parse_iso(row[0]) if row and row[0] else None


def created_at(raw: sqlite3.Connection, message_ids: Sequence[str]) -> dict[str, str]:
    """When each of these messages (open tails' too) was created (one index read each)."""
    rows = raw.execute(
        "SELECT id, created_at FROM messages WHERE id IN (SELECT value FROM json_each(?))",
        (json.dumps(list(message_ids)),),
    )
    return {message_id: at for message_id, at in rows}


def happened_of(
    raw: sqlite3.Connection, space: str, message_ids: Sequence[str]
) -> list[tuple[str, str | None, str | None]]:
    """(message id, happened start, happened end) of each visible event of ``space`` citing
    one of these messages that gives either bound (through ``event_sources_message``)."""
    start = "json_extract(e.temporal_json, '$.happened_start')"
    end = "json_extract(e.temporal_json, '$.happened_end')"
    rows = raw.execute(  # CROSS JOIN: from the messages out (SQLite began at every event)
        f"SELECT s.message_id, {start}, {end} FROM event_sources s "
        "CROSS JOIN events e ON e.id = s.event_id "
        "WHERE s.message_id IN (SELECT value FROM json_each(?)) AND e.namespace = ? "
        f"AND e.status IN ('active', 'superseded') AND coalesce({start}, {end}) IS NOT NULL",
        (json.dumps(list(message_ids)), space),
    ).fetchall()
    return [(message_id, first, last) for message_id, first, last in rows]


def ready_block_texts(raw: sqlite3.Connection, message_ids: Sequence[str]) -> dict[str, str]:
    """The L0–L2 text (title, tags, summary, key points) of the ready blocks holding these."""
    rows = raw.execute(
        "SELECT id, l0_title, l0_tags_json, l1_summary, l2_keypoints_json FROM blocks "
        "WHERE processing_status = 'ready' AND id IN (SELECT block_id FROM messages "
        "WHERE id IN (SELECT value FROM json_each(?)))",
        (json.dumps(list(message_ids)),),
    ).fetchall()
    return {row[0]: _block_text(row) for row in rows}


def _block_text(row: sqlite3.Row) -> str:
    tags = json.loads(row[2] or "[]")
    points = json.loads(row[4] or "[]")
    return "\n".join([row[1] or "", *tags, row[3] or "", *points])


def block_message_texts(raw: sqlite3.Connection, block_id: str) -> list[tuple[str, str]]:
    """(id, content) of a block's messages in position order."""
    rows = raw.execute(
        "SELECT id, content FROM messages WHERE block_id = ? ORDER BY position", (block_id,)
    )
    return [(row[0], row[1]) for row in rows]
