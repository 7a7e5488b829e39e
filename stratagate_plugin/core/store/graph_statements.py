"""A node's statements (facts, edges) read for its view: every current one and, bounded,
the newest replaced ones; a listing's edges among its nodes alone."""

import sqlite3
from collections import Counter
from collections.abc import Iterable, Sequence

from ..graph.shapes import GraphEdge, GraphFact
from .rows import record_from_row

HISTORY = 100  # replaced statements a view holds per node (newest first); search reads these


def _marks(values: Sequence[object]) -> str:
    return ",".join("?" * len(values))


def sources_of(
    raw: sqlite3.Connection,
    kind: str,
    ids: Sequence[str],
    statuses: dict[str, str] | None = None,
) -> dict[str, list[str]]:
    """Each record's source events (by id); with ``statuses``, each source's status is
    noted there too, read beside it through ``events_id_status`` (a view needs both: one
    probe per source where a second read of ~900 cited ids cost as much again)."""
    found: dict[str, list[str]] = {i: [] for i in ids}
    status = "e.status" if statuses is not None else "NULL"
    joined = _STATUS_JOIN if statuses is not None else ""
    for start in range(0, len(ids), 500):
        chunk = list(ids[start : start + 500])
        rows = raw.execute(
            f"SELECT s.record_id, s.event_id, {status} FROM graph_sources s{joined} "
            f"WHERE s.record_kind = ? AND s.record_id IN ({_marks(chunk)}) ORDER BY s.event_id",
            [kind, *chunk],
        )
        for record_id, event_id, event_status in rows:
            found[record_id].append(event_id)
            if event_status is not None and statuses is not None:
                statuses[event_id] = event_status
    return found


_STATUS_JOIN = " LEFT JOIN events e INDEXED BY events_id_status ON e.id = s.event_id"


_CURRENT = "status IN ('active', 'disputed') AND superseded_at IS NULL"


def _bounded(
    raw: sqlite3.Connection,
    table: str,
    ends: tuple[str, ...],
    node_ids: Sequence[str],
    history: int | None,
    learned_by: str | None,
) -> list[sqlite3.Row]:
    """Each node's rows: every current one, then (with ``history``) only the newest others;
    ``learned_by``: only rows learned by then (an as-of read)."""
    if history is None:
        clause = " OR ".join(f"{end} IN ({_marks(node_ids)})" for end in ends)
        return raw.execute(
            f"SELECT * FROM {table} WHERE ({clause}) ORDER BY learned_at, id",
            [*node_ids] * len(ends),
        ).fetchall()
    rows = _learned_rows(raw, table, ends, node_ids, learned_by)
    if _over_history(rows.values(), ends, set(node_ids), history):
        rows = _newest_rows(raw, table, ends, node_ids, history, learned_by)
    return sorted(rows.values(), key=lambda row: (row["learned_at"], row["id"]))


def _learned_rows(
    raw: sqlite3.Connection,
    table: str,
    ends: tuple[str, ...],
    node_ids: Sequence[str],
    learned_by: str | None,
) -> dict[str, sqlite3.Row]:
    """Every row of the nodes learned by ``learned_by``, by id: plain index reads."""
    rows: dict[str, sqlite3.Row] = {}
    for start in range(0, len(node_ids), 500):
        chunk = list(node_ids[start : start + 500])
        for end in ends:
            found = raw.execute(
                f"SELECT * FROM {table} WHERE {end} IN ({_marks(chunk)}) "
                "AND (? IS NULL OR learned_at <= ?)",
                [*chunk, learned_by, learned_by],
            )
            rows.update((row["id"], row) for row in found)
    return rows


def _over_history(
    rows: Iterable[sqlite3.Row], ends: tuple[str, ...], node_ids: set[str], history: int
) -> bool:
    """Whether some node holds more than ``history`` replaced rows at one of its ends: only
    then does the window of ``_newest_rows`` drop any (nearly never: a node's replaced
    statements are few), so the rows read plainly are its answer otherwise."""
    replaced: Counter[tuple[str, str]] = Counter()
    for row in rows:
        if row["status"] in ("active", "disputed") and row["superseded_at"] is None:
            continue
        replaced.update((end, row[end]) for end in ends if row[end] in node_ids)
    return any(count > history for count in replaced.values())


def _newest_rows(
    raw: sqlite3.Connection,
    table: str,
    ends: tuple[str, ...],
    node_ids: Sequence[str],
    history: int,
    learned_by: str | None,
) -> dict[str, sqlite3.Row]:
    """Every current row and the ``history`` newest others of each node, by id."""
    rows: dict[str, sqlite3.Row] = {}
    for start in range(0, len(node_ids), 500):
        chunk = list(node_ids[start : start + 500])
        for end in ends:  # one query per end for all the nodes, not one per node
            found = raw.execute(
                f"SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY {end}, "
                f"({_CURRENT}) ORDER BY learned_at DESC) AS history_rank FROM {table} "
                f"WHERE {end} IN ({_marks(chunk)}) AND (? IS NULL OR learned_at <= ?)) "
                f"WHERE ({_CURRENT}) OR history_rank <= ?",
                [*chunk, learned_by, learned_by, history],
            )
            rows.update((row["id"], row) for row in found)
    return rows


def facts_of(
    raw: sqlite3.Connection,
    node_ids: Sequence[str],
    history: int | None = None,
    learned_by: str | None = None,
    statuses: dict[str, str] | None = None,
) -> list[GraphFact]:
    """The nodes' facts: all of them, or every current one and the ``history`` newest others."""
    rows = _bounded(raw, "graph_facts", ("node_id",), list(node_ids), history, learned_by)
    sources = sources_of(raw, "fact", [row["id"] for row in rows], statuses)
    return [
        record_from_row(GraphFact, row, source_event_ids=tuple(sources[row["id"]])) for row in rows
    ]


def edges_of(
    raw: sqlite3.Connection,
    node_ids: Sequence[str],
    history: int | None = None,
    learned_by: str | None = None,
    statuses: dict[str, str] | None = None,
) -> list[GraphEdge]:
    """Edges in both directions of the nodes (bounded as ``facts_of``)."""
    ends = ("from_node_id", "to_node_id")
    rows = _bounded(raw, "graph_edges", ends, list(node_ids), history, learned_by)
    sources = sources_of(raw, "edge", [row["id"] for row in rows], statuses)
    return [
        record_from_row(GraphEdge, row, source_event_ids=tuple(sources[row["id"]])) for row in rows
    ]


def edges_among(
    raw: sqlite3.Connection,
    node_ids: Sequence[str],
    history: int | None = None,
    learned_by: str | None = None,
    statuses: dict[str, str] | None = None,
) -> list[GraphEdge]:
    """The edges with both ends among the nodes, as ``edges_of`` holds them: read alone,
    unless some node is over the history window (then ``edges_of``'s rows, filtered)."""
    ids = list(dict.fromkeys(node_ids))
    among = set(ids)
    if history is not None and _edges_over_history(raw, ids, history, learned_by):
        found = edges_of(raw, ids, history, learned_by, statuses)
        return [e for e in found if e.from_node_id in among and e.to_node_id in among]
    rows = raw.execute(
        f"SELECT * FROM graph_edges WHERE from_node_id IN ({_marks(ids)}) "
        f"AND to_node_id IN ({_marks(ids)}) AND (? IS NULL OR learned_at <= ?) "
        "ORDER BY learned_at, id",
        [*ids, *ids, learned_by, learned_by],
    ).fetchall()
    sources = sources_of(raw, "edge", [row["id"] for row in rows], statuses)
    return [
        record_from_row(GraphEdge, row, source_event_ids=tuple(sources[row["id"]])) for row in rows
    ]


def _edges_over_history(
    raw: sqlite3.Connection, ids: list[str], history: int, learned_by: str | None
) -> bool:
    """``_over_history`` for the nodes' edges, counted by the database: whether some node
    holds more than ``history`` replaced edges at one end."""
    for end in ("from_node_id", "to_node_id"):
        over = raw.execute(
            f"SELECT 1 FROM graph_edges WHERE {end} IN ({_marks(ids)}) AND NOT ({_CURRENT}) "
            f"AND (? IS NULL OR learned_at <= ?) GROUP BY {end} HAVING COUNT(*) > ? LIMIT 1",
            [*ids, learned_by, learned_by, history],
        ).fetchone()
        if over is not None:
            return True
    return False
