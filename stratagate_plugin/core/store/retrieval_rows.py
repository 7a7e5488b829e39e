"""Rows for retrieval: raw-channel candidates and their context, BM25 counts, blocks, dates.

The raw channel never loads a whole namespace when the FTS5 index exists: it takes the
sealed messages that match a query term (best FTS rank first, capped), the thread
neighbours their context votes need, and namespace-wide counts aggregated inside SQLite
(``term_statistics``; token counts come from the index text, one encoded term a token);
without FTS5 the same rows come from a scan. The other sessions' open tails, which the
index does not hold, are read whole (they are short and few). Tokenising and scoring are
``retrieval.raw_channel``'s.
"""

import json
import sqlite3
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from ..clock import parse_iso
from ..retrieval.storage import OPEN_TAIL, ChannelMessage, ChannelQuery, ChannelRows, CorpusStats
from ..text.search_terms import fts_match_any
from . import term_index
from .block_rows import OPEN_TAILS
from .raw_search import NOT_IMPORT_SOURCE, fetch_rows
from .search_index import FTS_CONTENT, FTS_TOKEN_COUNT, has_index, token_count

_COLUMNS = (
    "m.id, m.thread_id, m.block_id, m.position, b.sequence AS block_sequence, "
    "m.composed_from_memory"
)
_SEALED = f"JOIN blocks b ON b.id = m.block_id WHERE m.namespace = ? AND {NOT_IMPORT_SOURCE}"
_TAILS = (  # an open tail is a block of its own, newer than every sealed one
    f"SELECT m.id, m.thread_id, '{OPEN_TAIL}:' || m.thread_id AS block_id, m.position, "
    "(SELECT block_count + 1 FROM namespaces WHERE namespace = t.namespace) AS block_sequence, "
    f"m.composed_from_memory, m.content {OPEN_TAILS}"
)


def channel_rows(raw: sqlite3.Connection, space: str, query: ChannelQuery) -> ChannelRows:
    """Matching messages plus neighbours within ``reach``, and the open tails.

    Up to ``cap`` sealed messages match ``terms`` and up to ``weak_cap`` more match ``weak``
    (a category's members), fetched apart so that weak terms never crowd the others out.
    Every thread's open tail but ``current_thread``'s (the asking session has its own in
    view) is loaded whole.
    """
    tails = tail_messages(raw, space, query.current_thread)
    if query.scan or not has_index(raw):
        return ChannelRows(scan_messages(raw, space), [], tails, False)
    matched = _matching(raw, space, query.terms, query.cap)
    seen = {message.id for message in matched}
    weak = _matching(raw, space, query.weak, query.weak_cap)
    matched += [message for message in weak if message.id not in seen]
    return ChannelRows(matched, _neighbours(raw, space, matched, query.reach), tails, True)


def _matching(
    raw: sqlite3.Connection, space: str, terms: Sequence[str], cap: int
) -> list[ChannelMessage]:
    """Sealed messages holding any of ``terms``, best FTS5 rank first, at most ``cap``."""
    if not terms or cap < 1:
        return []
    rows = fetch_rows(
        raw,
        f"SELECT {_COLUMNS}, m.content FROM message_fts f "
        f"CROSS JOIN messages m ON m.fts_rowid = f.rowid {_SEALED} "
        "AND message_fts MATCH ? ORDER BY f.rank LIMIT ?",
        [space, fts_match_any(list(terms)), cap],
    )
    return [_message(row) for row in rows]


def indexed_messages(
    raw: sqlite3.Connection, space: str, rowids: Sequence[int], reach: int, around: int
) -> tuple[list[ChannelMessage], list[ChannelMessage]]:
    """The sealed conversation messages at these index rowids (in that order) and the
    thread neighbours within ``reach`` of the first ``around`` of them: two reads, each
    message with its token length (counted on FTS5's stored text, read by rowid)."""
    rows = raw.execute(
        f"SELECT {_INDEXED} FROM json_each(?) j CROSS JOIN messages m ON m.fts_rowid = j.value "
        f"JOIN blocks b ON b.id = m.block_id JOIN {FTS_CONTENT} c ON c.id = m.fts_rowid "
        f"WHERE m.namespace = ? AND {NOT_IMPORT_SOURCE} ORDER BY j.key",
        (json.dumps(list(rowids)), space),
    )
    matched = [_indexed_message(row) for row in rows]
    return matched, _neighbours_at(raw, space, matched, reach, around)


_INDEXED = (
    f"{_COLUMNS}, m.content, m.fts_rowid, {token_count('c.c0')}"  # ``ChannelMessage``'s order
)


def _neighbours_at(
    raw: sqlite3.Connection,
    space: str,
    matched: Sequence[ChannelMessage],
    reach: int,
    around: int,
) -> list[ChannelMessage]:
    """The messages within ``reach`` of the first ``around`` matches, not matched, in
    (thread, position) order: one range probe per match (overlaps read twice, kept once)."""
    seen = {(d.thread_id, d.position) for d in matched}
    spans = sorted(
        {(d.thread_id, d.position - reach, d.position + reach) for d in matched[:around]}
    )
    rows = raw.execute(
        f"SELECT {_INDEXED} FROM json_each(?) j CROSS JOIN messages m ON m.namespace = ? "
        "AND m.thread_id = json_extract(j.value, '$[0]') "
        "AND m.position BETWEEN json_extract(j.value, '$[1]') AND json_extract(j.value, '$[2]') "
        f"JOIN blocks b ON b.id = m.block_id JOIN {FTS_CONTENT} c ON c.id = m.fts_rowid "
        f"WHERE {NOT_IMPORT_SOURCE}",
        (json.dumps(spans), space),
    )
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
    return [_message(row) for row in fetch_rows(raw, _TAILS, [space, current_thread])]


def _message(row: sqlite3.Row) -> ChannelMessage:
    indexed = "length" in row.keys()  # noqa: SIM118 (``in`` on a Row tests its values)
    return ChannelMessage(
        row["id"],
        row["thread_id"],
        row["block_id"],
        int(row["position"]),
        int(row["block_sequence"]),
        row["content"],
        bool(row["composed_from_memory"]),
        int(row["fts_rowid"]) if indexed else 0,
        int(row["length"]) if indexed else -1,
    )


def _neighbours(
    raw: sqlite3.Connection, space: str, matched: Sequence[ChannelMessage], reach: int
) -> list[ChannelMessage]:
    """Sealed messages within ``reach`` positions of a match in its thread, not matched."""
    seen = {(d.thread_id, d.position) for d in matched}
    wanted = {
        (d.thread_id, d.position + step)
        for d in matched
        for step in range(-reach, reach + 1)
        if (d.thread_id, d.position + step) not in seen
    }
    by_thread: dict[str, list[int]] = {}
    for thread_id, position in sorted(wanted):
        by_thread.setdefault(thread_id, []).append(position)
    rows = [
        row
        for thread_id, positions in by_thread.items()
        for row in fetch_rows(
            raw,
            f"SELECT {_COLUMNS}, m.content FROM messages m {_SEALED} AND m.thread_id = ? "
            "AND m.position IN (SELECT value FROM json_each(?))",
            [space, thread_id, json.dumps(positions)],
        )
    ]
    return [_message(row) for row in rows]


def term_statistics(
    raw: sqlite3.Connection, space: str, terms: Sequence[str], blocks: Sequence[str]
) -> CorpusStats:
    """Index-wide counts of the namespace's sealed text, per term, and ``blocks``' lengths."""
    row = raw.execute(
        "SELECT messages, tokens, blocks FROM message_index_stats WHERE namespace = ?",
        (space,),
    ).fetchone()
    count, total, block_count = row if row is not None else (0, 0, 0)
    if term_index.has_index(raw):
        stored = term_index.frequencies(raw, space, terms)
        frequencies = {term: stored.get(term, (0, 0)) for term in terms}
    else:
        frequencies = {term: _frequencies(raw, space, term) for term in terms}
    lengths = block_lengths(raw, blocks) if blocks else {}
    return CorpusStats(
        messages=int(count),
        message_tokens=int(total),
        blocks=int(block_count),
        message_df={t: pair[0] for t, pair in frequencies.items()},
        block_df={t: pair[1] for t, pair in frequencies.items()},
        block_lengths=lengths,
    )


def _frequencies(raw: sqlite3.Connection, space: str, term: str) -> tuple[int, int]:
    """(messages, blocks) of the namespace's sealed text containing ``term``."""
    row = raw.execute(
        "SELECT count(*), count(DISTINCT m.block_id) FROM message_fts f "
        "CROSS JOIN messages m ON m.fts_rowid = f.rowid "
        "WHERE message_fts MATCH ? AND m.namespace = ? AND m.block_id IS NOT NULL",
        (fts_match_any([term]), space),
    ).fetchone()
    return int(row[0]), int(row[1])


def block_lengths(raw: sqlite3.Connection, blocks: Sequence[str]) -> dict[str, int]:
    """Each sealed block's token length: the impact index's, else counted on the FTS rows."""
    if term_index.has_index(raw):
        return term_index.block_lengths(raw, blocks)
    rows = raw.execute(
        f"SELECT m.block_id, sum({FTS_TOKEN_COUNT}) FROM json_each(?) j "
        "JOIN messages m ON m.block_id = j.value JOIN message_fts f ON f.rowid = m.fts_rowid "
        "GROUP BY m.block_id",
        (json.dumps(sorted(blocks)),),
    ).fetchall()
    return {str(block_id): int(total) for block_id, total in rows}


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


def created_between(
    raw: sqlite3.Connection, space: str, spans: Sequence[tuple[str, str]]
) -> set[str]:
    """Messages (open tails' too) created within any (start, end) span, inclusive."""
    created: set[str] = set()
    for start, end in spans:
        created.update(
            row[0]
            for row in raw.execute(
                "SELECT id FROM messages WHERE namespace = ? AND created_at BETWEEN ? AND ?",
                (space, start, end),
            )
        )
    return created


def happened_ranges(
    raw: sqlite3.Connection, space: str
) -> list[tuple[str, str | None, str | None]]:
    """(id, happened start, happened end) of the visible events that give either."""
    rows = raw.execute(
        "SELECT e.id, json_extract(e.temporal_json, '$.happened_start'), "
        "json_extract(e.temporal_json, '$.happened_end') FROM events e "
        "WHERE e.namespace = ? AND e.status IN ('active', 'superseded') "
        "AND coalesce(json_extract(e.temporal_json, '$.happened_start'), "
        "json_extract(e.temporal_json, '$.happened_end')) IS NOT NULL",
        (space,),
    ).fetchall()
    return [(event_id, start, end) for event_id, start, end in rows]


def event_messages(raw: sqlite3.Connection, event_ids: Sequence[str]) -> set[str]:
    """The messages these events cite."""
    return {
        row[0]
        for row in raw.execute(
            "SELECT message_id FROM event_sources "
            "WHERE event_id IN (SELECT value FROM json_each(?))",
            (json.dumps(list(event_ids)),),
        )
    }


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
