"""Raw-message search's reads (spec §6.6): candidates with their indexed tokens, and hits.

The candidates are the sealed messages in scope that share a token with the query,
whether FTS5 finds them or a scan does, so both paths give the same ranked corpus. At scale
FTS5 returns only the best ``cap`` of them, matched on the query's rarest terms
(``search_index.prefilter``) so that common words cost nothing. Ranking them is
``retrieval.raw_rank``'s.
"""

import json
import sqlite3
from collections.abc import Sequence

from ..clock import parse_iso
from ..records import IMPORT_THREAD_PREFIX
from ..retrieval.hits import HitMessage, RawHit
from ..retrieval.storage import SealedMatch
from ..text.search_terms import fts_document, fts_encode
from . import message_rank, term_index
from .search_index import Prefilter, has_index, prefilter

_COLUMNS = (
    "SELECT m.pk, m.id, m.thread_id, m.block_id, m.position, m.role, m.content, m.created_at, "
    "b.sequence AS block_sequence, coalesce(b.start_turn, m.turn) AS start_turn, "
    "coalesce(b.end_turn, m.turn) AS end_turn, m.composed_from_memory"
)
_FROM = "FROM messages m JOIN blocks b ON b.id = m.block_id"
_ANY = "FROM messages m LEFT JOIN blocks b ON b.id = m.block_id"  # open tails too
_NEIGHBOUR = (
    "LEFT JOIN messages {side} ON {side}.namespace = m.namespace "
    "AND {side}.thread_id = m.thread_id AND {side}.position = m.position {step} 1"
)
_NEIGHBOUR_COLUMNS = ("id", "thread_id", "position", "role", "content", "created_at")
NOT_IMPORT_SOURCE = f"m.thread_id NOT LIKE '{IMPORT_THREAD_PREFIX}%'"
"""An import's source block is provenance, not conversation: its text (a whole mem0 or
Letta file) is found through the events made from it, never as a raw hit, so it cannot
outrank them and a forgotten event's words are not found through it."""


def hits_for(raw: sqlite3.Connection, scored: Sequence[tuple[str, float]]) -> list[RawHit]:
    """``RawHit``s for messages given as (id, score), in the order given; one still in an
    open tail has no block and its own turn as the range. Each hit's thread neighbours
    come in the same statement (one round trip on a server, not two per hit)."""
    ids = [message_id for message_id, _ in scored]
    rows = fetch_rows(
        raw,
        f"{_COLUMNS}, {_side('p')}, {_side('n')} {_ANY} {_NEIGHBOUR.format(side='p', step='-')} "
        f"{_NEIGHBOUR.format(side='n', step='+')} WHERE m.id IN (SELECT value FROM json_each(?))",
        [json.dumps(ids)],
    )
    by_id = {row["id"]: row for row in rows}
    return [_hit(by_id[mid], score) for mid, score in scored if mid in by_id]


def sealed_candidates(
    raw: sqlite3.Connection,
    space: str,
    tokens: Sequence[str],
    cap: int,
    thread_id: str | None = None,
) -> list[SealedMatch]:
    """Sealed messages in scope sharing a token with the query, each with its FTS tokens.

    The tokens are ``fts_encode``d: read back from the index (no re-tokenising), or
    computed from the content when there is no index and every sealed message is scanned.
    """
    scope, params = _scope(space, thread_id)
    if has_index(raw):
        found = prefilter(raw, "message_fts", list(tokens))
        if found is None:
            return []
        rows = _ranked_by_index(raw, space, found, cap, thread_id)
        if rows is None:
            order = "f.rank" if found.ranked else "f.rowid DESC"
            rows = fetch_rows(
                raw,
                f"{_CANDIDATES} WHERE message_fts MATCH ? AND {scope} ORDER BY {order} LIMIT ?",
                [found.match, *params, cap],
            )
        return [_match(row, row["fts_tokens"].split()) for row in rows]
    wanted = {fts_encode(token) for token in tokens}
    rows = fetch_rows(raw, f"{_COLUMNS} {_FROM} WHERE {scope}", params)
    docs = [(row, fts_document(row["content"]).split()) for row in rows]
    return [_match(row, doc) for row, doc in docs if wanted.intersection(doc)]


_CANDIDATES = (  # what ``_match`` reads: not the content, which the hits read for the page
    "SELECT m.id, m.created_at, b.sequence AS block_sequence, m.position, "
    "m.composed_from_memory, m.fts_rowid, f.tokens AS fts_tokens "
    f"{_FROM} JOIN message_fts f ON f.rowid = m.fts_rowid"
)


def _ranked_by_index(
    raw: sqlite3.Connection, space: str, found: Prefilter, cap: int, thread_id: str | None
) -> list[sqlite3.Row] | None:
    """FTS5's ``ORDER BY rank … LIMIT cap`` over the space, computed by the impact index
    (``message_rank``); ``None`` where FTS5 must answer: no current index, a thread's
    scope (the index is per space), a common term's newest-first, or a message the index
    cannot rank exactly or that the scope leaves out (FTS5 would read past it)."""
    if not found.ranked or thread_id is not None or not term_index.has_index(raw):
        return None
    rowids = message_rank.ranked_rowids(raw, space, found.terms, cap)
    if rowids is None:
        return None
    if not rowids:
        return []
    rows = fetch_rows(  # by the rowid index: the unary + keeps SQLite off the namespace's
        raw,  # (which the partial index's IS NOT NULL alone did not; 109 ms against ~1)
        f"{_CANDIDATES} WHERE m.fts_rowid IN (SELECT value FROM json_each(?)) "
        f"AND m.fts_rowid IS NOT NULL AND +m.namespace = ? AND {NOT_IMPORT_SOURCE}",
        [json.dumps(rowids), space],
    )
    by_rowid = {int(row["fts_rowid"]): row for row in rows}
    if len(by_rowid) < len(rowids):
        return None
    return [by_rowid[rowid] for rowid in rowids]


def _match(row: sqlite3.Row, tokens: list[str]) -> SealedMatch:
    return SealedMatch(
        row["id"],
        row["created_at"],
        int(row["block_sequence"]),
        int(row["position"]),
        bool(row["composed_from_memory"]),
        tokens,
    )


def _scope(space: str, thread_id: str | None) -> tuple[str, list[object]]:
    if thread_id is None:
        return f"m.namespace = ? AND {NOT_IMPORT_SOURCE}", [space]
    return f"m.namespace = ? AND m.thread_id = ? AND {NOT_IMPORT_SOURCE}", [space, thread_id]


def _hit(row: sqlite3.Row, score: float) -> RawHit:
    return RawHit(
        block_id=row["block_id"],
        turn_range=(int(row["start_turn"]), int(row["end_turn"])),
        message=hit_message(row),
        previous=_neighbour(row, "p"),
        next=_neighbour(row, "n"),
        score=score,
    )


def hit_message(row: sqlite3.Row, side: str = "") -> HitMessage:
    """The message of ``row``, or its neighbour's columns (``p_id``…) when ``side``."""
    return HitMessage(
        id=row[f"{side}id"],
        role=row[f"{side}role"],
        content=row[f"{side}content"],
        created_at=parse_iso(row[f"{side}created_at"]),
        thread_id=row[f"{side}thread_id"],
        position=row[f"{side}position"],
    )


def _side(alias: str) -> str:
    return ", ".join(f"{alias}.{column} AS {alias}_{column}" for column in _NEIGHBOUR_COLUMNS)


def _neighbour(row: sqlite3.Row, alias: str) -> HitMessage | None:
    """The adjacent message in the same thread (open tail included: it is context only)."""
    return hit_message(row, f"{alias}_") if row[f"{alias}_id"] is not None else None


def fetch_rows(raw: sqlite3.Connection, sql: str, params: list[object]) -> list[sqlite3.Row]:
    """Rows with named columns whatever the connection's own row factory is."""
    cursor = raw.cursor()
    cursor.row_factory = sqlite3.Row
    return cursor.execute(sql, params).fetchall()
