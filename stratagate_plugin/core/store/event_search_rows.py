"""Reads for event search and recall: candidate rows per pool, retrieval stamps, sources.

Lexical candidates come from the FTS5 ``event_fts`` index (best FTS rank on the query's
rarest terms first, capped; the rank computed from the impact index, ``event_term_index``,
on PostgreSQL too, so both backends find the same candidates in the same order; the
index's SQL ``ORDER BY rank``, ``ts_rank`` there, only while it is absent);
without FTS5 a scan keeps every visible event sharing a query token, so both paths feed
the same ranking. Structured-filter candidates are found by a light column scan.
"""

import json
import sqlite3
from collections.abc import Iterable, Iterator, Mapping, Sequence
from itertools import islice
from typing import Any

from ..events.storage import FieldCheck
from ..records import Message
from ..text.search_terms import tokenize
from . import event_term_index
from .rows import message_from_row
from .search_index import Prefilter, event_row_text, prefilter
from .units import has_table, on_postgres

_VISIBLE = "e.status IN ('active', 'superseded')"
BYPASS_COLUMNS = (
    "e.id, e.last_adopted_turn, e.mention_count, e.criticality, e.pinned, e.forced_cap, "
    "e.status, e.floor_weight, e.updated_at"
)
"""What a pinned or safety event's weight is computed from (``BypassRow``): not the texts
and JSON of whole rows (~190 of them at the search-scale corpus, 0.9 ms against 0.4)."""
_TURN_AND_BYPASS = (
    "SELECT (SELECT current_turn FROM namespaces WHERE namespace = ?) AS turn_now, "
    f"{BYPASS_COLUMNS} "
    f"FROM (SELECT 1) AS one LEFT JOIN events e ON e.namespace = ? AND {_VISIBLE} "
    "AND (e.pinned = 1 OR e.criticality = 'safety')"
)
_LEXICAL = (
    "SELECT e.pk, e.pool FROM event_fts f CROSS JOIN events e ON e.pk = f.rowid "
    f"WHERE event_fts MATCH ? AND e.namespace = ? AND {_VISIBLE}"
)


def has_event_index(raw: sqlite3.Connection) -> bool:
    return has_table(raw, "event_fts")


def current_turn(raw: sqlite3.Connection, space: str) -> int:
    row = raw.execute(
        "SELECT current_turn FROM namespaces WHERE namespace = ?", (space,)
    ).fetchone()
    return int(row[0]) if row else 0


SEARCH_COLUMNS = "e.pk, e.id, e.pool, e.status, e.superseded_by, e.updated_at"
"""What a plain query's candidate needs when its stored document is current (most are):
not the fields, tags and JSON of a whole row."""


def lexical_rows(
    raw: sqlite3.Connection,
    space: str,
    pools: Sequence[str],
    tokens: Sequence[str],
    cap: int,
    columns: str = "e.*",
) -> list[sqlite3.Row]:
    """Visible events sharing a token with the query: per pool the best ``cap`` by FTS rank,
    each row with ``columns`` (the scan without FTS5 reads whole rows).

    FTS5 matches only the query's rarest terms (``search_index.prefilter``): a long query
    (automatic context) or common words cannot make it rank the whole index. The ranking
    itself still scores every query token.
    """
    if not tokens:
        return []
    if not has_event_index(raw):
        wanted = set(tokens)
        rows = [row for pool in pools for row in pool_rows(raw, space, pool)]
        return [row for row in rows if wanted.intersection(tokenize(event_row_text(row)))]
    found = prefilter(raw, "event_fts", tokens)
    if found is None:
        return []
    if not event_term_index.has_index(raw):
        return rows_by_pk(raw, _fts_pks(raw, space, found, pools, cap), columns)
    states = _indexed_states(raw, space, found, pools, cap)
    if columns == SEARCH_COLUMNS:  # ``event_states`` holds them
        return states
    return rows_by_pk(raw, [row["pk"] for row in states], columns)


def _fts_pks(
    raw: sqlite3.Connection, space: str, found: Prefilter, pools: Sequence[str], cap: int
) -> list[int]:
    """Without the impact index: per pool the first ``cap`` visible events of FTS5's
    ``ORDER BY rank`` for ``found``, or (a common term) its newest ``cap``."""
    if found.ranked:
        ranked = raw.execute(f"{_LEXICAL} ORDER BY f.rank", (found.match, space))
        best = _best_per_pool(ranked, pools, cap)
        return [pk for pool in pools for pk in best[pool]]
    sql = f"{_LEXICAL} AND e.pool = ? ORDER BY f.rowid DESC LIMIT ?"
    return [row[0] for pool in pools for row in raw.execute(sql, (found.match, space, pool, cap))]


def _indexed_states(
    raw: sqlite3.Connection, space: str, found: Prefilter, pools: Sequence[str], cap: int
) -> list[sqlite3.Row]:
    """Per pool, the ``event_states`` rows of the first ``cap`` visible events in FTS5's
    rank order for ``found`` (the same order, computed in bulk by the impact index), or
    of the newest ``cap`` holding its one, common term."""
    if found.ranked:
        by_pool = event_term_index.ranked_pks(raw, found.terms, space, pools)
        return [row for pool in pools for row in _first_visible(raw, iter(by_pool[pool]), cap)]
    [term] = found.terms
    newest = (event_term_index.newest_pks(raw, term, space, pool) for pool in pools)
    return [row for pks in newest for row in _first_visible(raw, pks, cap)]


_STATES = (
    f"SELECT {SEARCH_COLUMNS.replace('e.', '')} FROM event_states "
    "WHERE pk IN (SELECT value FROM json_each(?)) AND status IN ('active', 'superseded')"
)


def _first_visible(raw: sqlite3.Connection, pks: Iterator[int], cap: int) -> list[sqlite3.Row]:
    """The ``event_states`` rows of the first ``cap`` of ``pks`` whose event is visible,
    checked a batch at a time (most are: a batch a little over what is missing usually
    ends it)."""
    kept: list[sqlite3.Row] = []
    while len(kept) < cap:
        chunk = list(islice(pks, (cap - len(kept)) * 5 // 4 + 8))
        if not chunk:
            break
        visible = {row[0]: row for row in _rows(raw, _STATES, [json.dumps(chunk)])}
        kept += [visible[pk] for pk in chunk if pk in visible][: cap - len(kept)]
    return kept


def _best_per_pool(
    ranked: Iterable[tuple[int, str]], pools: Sequence[str], cap: int
) -> dict[str, list[int]]:
    """The first ``cap`` rows of each pool, read only as far as needed (the rows come best
    first; a common query matches far more than any pool keeps)."""
    best: dict[str, list[int]] = {pool: [] for pool in pools}
    if cap < 1:
        return best
    for pk, pool in ranked:
        kept = best.get(pool)
        if kept is not None and len(kept) < cap:
            kept.append(pk)
            if all(len(found) == cap for found in best.values()):
                break
    return best


def rows_by_pk(
    raw: sqlite3.Connection, pks: Sequence[int], columns: str = "e.*"
) -> list[sqlite3.Row]:
    found: list[sqlite3.Row] = []
    for start in range(0, len(pks), 500):
        chunk = list(pks[start : start + 500])
        marks = ",".join("?" * len(chunk))
        found += _rows(raw, f"SELECT {columns} FROM events e WHERE e.pk IN ({marks})", chunk)
    return found


def pool_rows(
    raw: sqlite3.Connection, space: str, pool: str, ids: Iterable[str] | None = None
) -> list[sqlite3.Row]:
    """Every visible event of a pool (optionally only the given ids)."""
    sql = f"SELECT e.* FROM events e WHERE e.namespace = ? AND e.pool = ? AND {_VISIBLE}"
    if ids is None:
        return _rows(raw, sql, [space, pool])
    # by id: the unary + keeps the planner on the id index (with hundreds of ids it would
    # otherwise walk the whole namespace's status index: 1.4 s vs 3 ms at 100k events)
    sql = "SELECT e.* FROM events e WHERE +e.namespace = ? AND +e.pool = ? AND +" + _VISIBLE
    found: list[sqlite3.Row] = []
    wanted = list(ids)
    for start in range(0, len(wanted), 500):
        chunk = wanted[start : start + 500]
        marks = ",".join("?" * len(chunk))
        found += _rows(raw, f"{sql} AND e.id IN ({marks})", [space, pool, *chunk])
    return found


def structured_rows(
    raw: sqlite3.Connection, space: str, pool: str, keep: FieldCheck
) -> list[sqlite3.Row]:
    """Visible events for which ``keep(title, summary, tags, temporal)`` holds."""
    light = _rows(
        raw,
        "SELECT e.id, e.title, e.summary, e.tags_json, e.temporal_json FROM events e "
        f"WHERE e.namespace = ? AND e.pool = ? AND {_VISIBLE}",
        [space, pool],
    )
    ids = [
        row["id"]
        for row in light
        if keep(
            row["title"],
            row["summary"],
            json.loads(row["tags_json"]),
            json.loads(row["temporal_json"]),
        )
    ]
    return pool_rows(raw, space, pool, ids) if ids else []


def turn_and_bypass_rows(raw: sqlite3.Connection, space: str) -> tuple[int, list[sqlite3.Row]]:
    """The space's current turn and every visible pinned or safety event's
    ``BYPASS_COLUMNS`` (their weights are computed without cards) in one statement: the
    events joined to one row that carries the turn, so it comes back when there are none."""
    rows = _rows(raw, _TURN_AND_BYPASS, [space, space])
    turn = rows[0]["turn_now"] if rows else None
    return int(turn or 0), [row for row in rows if row["id"] is not None]


def events_from_thread(
    raw: sqlite3.Connection, event_ids: Sequence[str], thread_id: str
) -> set[str]:
    """Those of ``event_ids`` whose source block or a source message is in ``thread_id``:
    one statement, its block's thread read by one probe an event (joined, PostgreSQL
    hashed every block; planning one placeholder per id took it longer still)."""
    rows = raw.execute(
        "SELECT e.id FROM events e WHERE e.id IN (SELECT value FROM json_each(?)) AND "
        "((SELECT b.thread_id FROM blocks b WHERE b.id = e.source_block_id) = ? OR EXISTS "
        "(SELECT 1 FROM event_sources s JOIN messages m ON m.id = s.message_id "
        "WHERE s.event_id = e.id AND m.thread_id = ?))",
        (json.dumps(list(event_ids)), thread_id, thread_id),
    ).fetchall()
    return {row[0] for row in rows}


def stamp_retrieved(raw: sqlite3.Connection, stamps: Mapping[str, str]) -> None:
    """Observability only: ``last_retrieved_at``; never counters, never ``updated_at``.
    One statement a distinct time (on PostgreSQL a statement an event was a round trip
    each), visible events only: a stamp written behind a search must not mark an event
    forgotten or erased since. On PostgreSQL its commit does not wait for the WAL's flush
    (a crash may lose the last stamps, as SQLite's ``synchronous=NORMAL`` may)."""
    if on_postgres(raw):
        raw.execute("SET LOCAL synchronous_commit = off")
    by_time: dict[str, list[str]] = {}
    for event_id, now in stamps.items():
        by_time.setdefault(now, []).append(event_id)
    for now, event_ids in sorted(by_time.items()):
        raw.execute(
            "UPDATE events SET last_retrieved_at = ? "
            "WHERE id IN (SELECT value FROM json_each(?)) AND status IN ('active', 'superseded')",
            (now, json.dumps(event_ids)),
        )


def source_messages(raw: sqlite3.Connection, event_id: str) -> list[Message]:
    rows = _rows(
        raw,
        "SELECT m.* FROM event_sources s JOIN messages m ON m.id = s.message_id "
        "WHERE s.event_id = ? ORDER BY s.position",
        [event_id],
    )
    return [message_from_row(row) for row in rows]


def thread_status(raw: sqlite3.Connection, space: str) -> tuple[int, list[str]]:
    """(blocks in the namespace, thread ids that have blocks, in the order their first
    blocks sealed). Counted on the ``(namespace, thread_id, thread_sequence)`` key alone; a
    thread's first block is its lowest thread sequence (sealing numbers a block's space and
    thread sequences together). ``MIN(sequence)`` read every block's row: 24–32 ms at
    21,000 blocks, in every ``memory_get_blocks``."""
    rows = raw.execute(
        "SELECT g.thread_id, g.n FROM (SELECT thread_id, COUNT(*) AS n FROM blocks "
        "WHERE namespace = ? GROUP BY thread_id) AS g ORDER BY (SELECT b.sequence FROM blocks b "
        "WHERE b.namespace = ? AND b.thread_id = g.thread_id ORDER BY b.thread_sequence LIMIT 1)",
        (space, space),
    ).fetchall()
    return sum(int(row[1]) for row in rows), [row[0] for row in rows]


def open_tail_count(raw: sqlite3.Connection, space: str, thread_id: str | None) -> int:
    """Unsealed messages of one thread (or of every thread when ``thread_id`` is None):
    each thread's messages past its sealed position, the threads read first (``CROSS
    JOIN`` keeps SQLite's order; led by the messages it walked the space's every message,
    98 ms at 500,000)."""
    sql = (
        "SELECT COUNT(*) FROM threads t CROSS JOIN messages m WHERE t.namespace = ? "
        "AND m.namespace = t.namespace AND m.thread_id = t.thread_id "
        "AND m.position > t.sealed_position"
    )
    if thread_id is None:
        return int(raw.execute(sql, (space,)).fetchone()[0])
    return int(raw.execute(f"{sql} AND t.thread_id = ?", (space, thread_id)).fetchone()[0])


def _rows(raw: sqlite3.Connection, sql: str, params: list[Any]) -> list[sqlite3.Row]:
    cursor = raw.cursor()
    cursor.row_factory = sqlite3.Row
    return cursor.execute(sql, params).fetchall()
