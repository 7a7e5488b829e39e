"""A graph view's records in four statements: the nodes, their facts, their edges both
ways, and one read of what stands beside them (issue #30: on PostgreSQL every statement is
a round trip, and a graph search read nine; recall reads them twice when the question's
nodes all come from the current thread).

The read beside them is the index reads that were statements of their own, joined by
``UNION ALL`` over the ids in hand: the nodes' aliases, the sources of the nodes, of the
facts and of the edges kept (each cited event's status read with it), and the names of
the nodes at the edges' far ends (the nodes' own are in hand)."""

import json
import sqlite3
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from ..graph.shapes import GraphEdge, GraphFact, GraphNode, NodeRecords, RecordParts
from .rows import record_from_row

HISTORY = 100  # replaced statements a view holds per node (newest first); search reads these
IDS = "(SELECT value FROM json_each(?))"
FACT_ENDS = ("node_id",)
EDGE_ENDS = ("from_node_id", "to_node_id")
_LEARNED = "(? IS NULL OR learned_at <= ?)"
Cited = dict[str, list[tuple[str, str, str | None]]]  # kind → (record, event, status)


def _marks(values: Sequence[Any]) -> str:
    return ",".join("?" * len(values))


def records(
    raw: sqlite3.Connection,
    node_ids: Sequence[str],
    learned_by: str | None = None,
    history: int | None = HISTORY,
    fields: bool = False,
    parts: RecordParts = "all",
) -> NodeRecords:
    """The nodes (in the order given) with their facts and edges (every current one and the
    ``history`` newest others, learned by ``learned_by``), the names of their edges' ends
    and the status of every event they cite: what ``graph.views`` makes views of; with
    ``fields``, the sources of their aliases and tags too. ``parts`` below ``all`` reads
    no node sources (a listing's importance is the stored ``visible_sources``), facts or
    fields' sources, and only the edges among the nodes (``edges``) or none (``nodes``)."""
    whole = parts == "all"
    rows = node_rows(raw, node_ids)
    if not rows:
        return NodeRecords([], [], [], {}, {}, {} if fields and whole else None)
    ids = [row["id"] for row in rows]
    fact_rows = _bounded(raw, "graph_facts", FACT_ENDS, ids, history, learned_by) if whole else []
    edge_rows = _edge_rows(raw, ids, history, learned_by, parts)
    far = sorted({row[end] for row in edge_rows for end in EDGE_ENDS} - set(ids))
    aliases, cited, names = _beside(raw, ids, (whole, _ids(fact_rows), _ids(edge_rows)), far)
    statuses: dict[str, str] = {}  # of every event cited, in the order the reads met them
    found = _made(GraphNode, "node", rows, cited, statuses, aliases)
    facts = _made(GraphFact, "fact", fact_rows, cited, statuses)
    edges = _made(GraphEdge, "edge", edge_rows, cited, statuses)
    names.update((row["id"], row["name"]) for row in rows)
    ends = {end for edge in edges for end in (edge.from_node_id, edge.to_node_id)}
    names = {node_id: names[node_id] for node_id in sorted(ends) if node_id in names}
    sources = field_sources(raw, found) if fields and whole else None
    return NodeRecords(found, facts, edges, names, statuses, sources)


def node_rows(raw: sqlite3.Connection, node_ids: Sequence[str]) -> list[sqlite3.Row]:
    """The nodes' rows in the order given (missing ids skipped, repeats once)."""
    ids = list(dict.fromkeys(node_ids))
    if not ids:
        return []
    rows = raw.execute(f"SELECT * FROM graph_nodes WHERE id IN {IDS}", [_json(ids)])
    by_id = {row["id"]: row for row in rows}
    return [by_id[i] for i in ids if i in by_id]


def _edge_rows(
    raw: sqlite3.Connection,
    ids: list[str],
    history: int | None,
    learned_by: str | None,
    parts: RecordParts,
) -> list[sqlite3.Row]:
    """The nodes' edges both ways (``all``), the edges with both ends among them
    (``edges``: a listing's canvas draws no other), or none (``nodes``)."""
    if parts == "nodes":
        return []
    if parts == "all":
        return _bounded(raw, "graph_edges", EDGE_ENDS, ids, history, learned_by)
    among = set(ids)
    if history is not None and _edges_over_history(raw, ids, history, learned_by):
        found = _bounded(raw, "graph_edges", EDGE_ENDS, ids, history, learned_by)
        return [row for row in found if all(row[end] in among for end in EDGE_ENDS)]
    return raw.execute(
        f"SELECT * FROM graph_edges WHERE from_node_id IN {IDS} AND to_node_id IN {IDS} "
        f"AND {_LEARNED} ORDER BY learned_at, id",
        [_json(ids), _json(ids), learned_by, learned_by],
    ).fetchall()


def _edges_over_history(
    raw: sqlite3.Connection, ids: list[str], history: int, learned_by: str | None
) -> bool:
    """``_over_history`` for the nodes' edges, counted by the database: whether some node
    holds more than ``history`` replaced edges at one end (then the window drops some, and
    the edges among the nodes are the window's)."""
    for end in EDGE_ENDS:
        over = raw.execute(
            f"SELECT 1 FROM graph_edges WHERE {end} IN {IDS} AND NOT ({_CURRENT}) "
            f"AND {_LEARNED} GROUP BY {end} HAVING COUNT(*) > ? LIMIT 1",
            [_json(ids), learned_by, learned_by, history],
        ).fetchone()
        if over is not None:
            return True
    return False


def _beside(
    raw: sqlite3.Connection,
    ids: list[str],
    cited_by: tuple[bool, list[str], list[str]],
    far: list[str],
) -> tuple[dict[str, list[str]], Cited, dict[str, str]]:
    """The nodes' aliases (in their order), the sources (by kind, in event id order, with
    each event's status) of the nodes (when ``cited_by``'s first is true), of its facts
    and of its edges, and the names of the nodes at the edges' far ends: one statement,
    each part the index reads it was alone."""
    with_nodes, facts, edges = cited_by
    parts, params = [_ALIASES], [_json(ids)]
    if with_nodes:
        parts.append(_SOURCES.format(kind="node"))
        params.append(_json(ids))
    for kind, wanted in (("fact", facts), ("edge", edges)):
        if wanted:
            parts.append(_SOURCES.format(kind=kind))
            params.append(_json(wanted))
    if far:
        parts.append(_NAMES)
        params.append(_json(far))
    aliases: dict[str, list[str]] = {}
    cited: Cited = {}
    names: dict[str, str] = {}
    sql = " UNION ALL ".join(parts) + " ORDER BY part, seq, value"
    for part, record_id, value, status, _seq in raw.execute(sql, params):
        if part == "alias":
            aliases.setdefault(record_id, []).append(value)
        elif part == "name":
            names[record_id] = value
        else:
            cited.setdefault(part, []).append((record_id, value, status))
    return aliases, cited, names


_ALIASES = (
    "SELECT 'alias' AS part, node_id AS record_id, alias AS value, NULL AS status, "
    f"rowid AS seq FROM graph_aliases WHERE node_id IN {IDS}"
)
_SOURCES = (  # each event's status by one probe: PostgreSQL merge-joined all of events
    "SELECT s.record_kind, s.record_id, s.event_id, (SELECT e.status FROM events e "
    "INDEXED BY events_id_status WHERE e.id = s.event_id), NULL FROM graph_sources s "
    f"WHERE s.record_kind = '{{kind}}' AND s.record_id IN {IDS}"
)
_NAMES = f"SELECT 'name', id, name, NULL, NULL FROM graph_nodes WHERE id IN {IDS}"


def _made(
    model: Any,
    kind: str,
    rows: list[sqlite3.Row],
    cited: Cited,
    statuses: dict[str, str],
    aliases: dict[str, list[str]] | None = None,
) -> list[Any]:
    """Each row's record with its sources; their events' statuses noted in ``statuses``."""
    sources: dict[str, list[str]] = {}
    for record_id, event_id, status in cited.get(kind, []):
        sources.setdefault(record_id, []).append(event_id)
        if status is not None:
            statuses[event_id] = status
    return [
        record_from_row(
            model,
            row,
            source_event_ids=tuple(sources.get(row["id"], ())),
            **({} if aliases is None else {"aliases": tuple(aliases.get(row["id"], ()))}),
        )
        for row in rows
    ]


def _ids(rows: list[sqlite3.Row]) -> list[str]:
    return [row["id"] for row in rows]


def _json(values: Sequence[str]) -> str:
    return json.dumps(list(values))


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
    """Every row of the nodes learned by ``learned_by``, by id: plain index reads, every
    end in one statement."""
    clause = " OR ".join(f"{end} IN {IDS}" for end in ends)
    found = raw.execute(
        f"SELECT * FROM {table} WHERE ({clause}) AND {_LEARNED}",
        [*[_json(node_ids)] * len(ends), learned_by, learned_by],
    )
    return {row["id"]: row for row in found}


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


def field_sources(
    raw: sqlite3.Connection, found: Sequence[GraphNode]
) -> dict[tuple[str, str, str], tuple[str, ...]]:
    """(node id, field, value key) → the visible events behind each alias and tag of the
    nodes that have any, oldest first, in one read per 500 nodes."""
    sources: dict[tuple[str, str, str], list[str]] = {}
    ids = [node.id for node in found if node.aliases or node.tags]
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        rows = raw.execute(
            "SELECT f.node_id, f.field, f.value_key, f.event_id FROM graph_field_sources f "
            "JOIN events e ON e.id = f.event_id AND e.status IN ('active', 'superseded') "
            f"WHERE f.node_id IN ({_marks(chunk)}) ORDER BY e.pk",
            chunk,
        )
        for node_id, field, key, event_id in rows:
            sources.setdefault((node_id, field, key), []).append(event_id)
    return {key: tuple(events) for key, events in sources.items()}
