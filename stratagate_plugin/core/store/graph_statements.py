"""A node's statements (facts, edges) with their sources, for the writes that rebuild
views and merge nodes (every current one and, bounded, the newest replaced ones: rows by
``graph_records._bounded``; a view's own read is ``graph_records.records``)."""

import sqlite3
from collections.abc import Sequence

from ..graph.shapes import GraphEdge, GraphFact
from .graph_records import EDGE_ENDS, FACT_ENDS, _bounded
from .rows import record_from_row


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


def facts_of(
    raw: sqlite3.Connection,
    node_ids: Sequence[str],
    history: int | None = None,
    learned_by: str | None = None,
    statuses: dict[str, str] | None = None,
) -> list[GraphFact]:
    """The nodes' facts: all of them, or every current one and the ``history`` newest others."""
    rows = _bounded(raw, "graph_facts", FACT_ENDS, list(node_ids), history, learned_by)
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
    rows = _bounded(raw, "graph_edges", EDGE_ENDS, list(node_ids), history, learned_by)
    sources = sources_of(raw, "edge", [row["id"] for row in rows], statuses)
    return [
        record_from_row(GraphEdge, row, source_event_ids=tuple(sources[row["id"]])) for row in rows
    ]
