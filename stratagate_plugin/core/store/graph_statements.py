"""A node's statements (facts, edges) with their sources, for the writes that rebuild
views and merge nodes: every statement, current or replaced (a view's own bounded read
is ``graph_records.records``)."""

import sqlite3
from collections.abc import Sequence
from typing import Any

from ..graph.shapes import GraphEdge, GraphFact
from .graph_records import EDGE_ENDS, FACT_ENDS, _bounded
from .rows import record_from_row


def _marks(values: Sequence[object]) -> str:
    return ",".join("?" * len(values))


def sources_of(raw: sqlite3.Connection, kind: str, ids: Sequence[str]) -> dict[str, list[str]]:
    """Each record's source events (by id), in event id order."""
    found: dict[str, list[str]] = {i: [] for i in ids}
    for start in range(0, len(ids), 500):
        chunk = list(ids[start : start + 500])
        rows = raw.execute(
            "SELECT record_id, event_id FROM graph_sources "
            f"WHERE record_kind = ? AND record_id IN ({_marks(chunk)}) ORDER BY event_id",
            [kind, *chunk],
        )
        for record_id, event_id in rows:
            found[record_id].append(event_id)
    return found


def facts_of(raw: sqlite3.Connection, node_ids: Sequence[str]) -> list[GraphFact]:
    """Every fact of the nodes, with its sources."""
    rows = _bounded(raw, "graph_facts", FACT_ENDS, list(node_ids), None, None)
    return _sourced(raw, GraphFact, "fact", rows)


def edges_of(raw: sqlite3.Connection, node_ids: Sequence[str]) -> list[GraphEdge]:
    """Every edge of the nodes, both directions, with its sources."""
    rows = _bounded(raw, "graph_edges", EDGE_ENDS, list(node_ids), None, None)
    return _sourced(raw, GraphEdge, "edge", rows)


def _sourced(raw: sqlite3.Connection, model: Any, kind: str, rows: list[sqlite3.Row]) -> list[Any]:
    """Each row's record with its source events."""
    sources = sources_of(raw, kind, [row["id"] for row in rows])
    return [record_from_row(model, row, source_event_ids=tuple(sources[row["id"]])) for row in rows]
