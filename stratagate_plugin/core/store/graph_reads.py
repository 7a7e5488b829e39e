"""Graph reads: nodes with their aliases and sources, facts, edges (a view's records in few
statements: ``graph_records.py``), search candidates by term, the importance listing and
resolution candidates."""

import sqlite3
from collections.abc import Iterable, Sequence
from typing import Any

from ..graph.shapes import GraphNode, Known
from .graph_statements import sources_of
from .rows import record_from_row

CANDIDATES = 60  # the most a search reads (``graph.service.candidate_cap``)
KIN_EDGES = 200  # kinship edges a projection batch is handed (its speakers')


def _marks(values: Sequence[Any]) -> str:
    return ",".join("?" * len(values))


def nodes(raw: sqlite3.Connection, node_ids: Sequence[str]) -> list[GraphNode]:
    """The nodes by id with their aliases and sources, in the order given (missing ids
    skipped)."""
    ids = list(dict.fromkeys(node_ids))
    if not ids:
        return []
    rows = raw.execute(f"SELECT * FROM graph_nodes WHERE id IN ({_marks(ids)})", ids).fetchall()
    aliases: dict[str, list[str]] = {i: [] for i in ids}
    for node_id, alias in raw.execute(
        f"SELECT node_id, alias FROM graph_aliases WHERE node_id IN ({_marks(ids)}) ORDER BY rowid",
        ids,
    ):
        aliases[node_id].append(alias)
    cited = sources_of(raw, "node", ids)
    by_id = {
        row["id"]: record_from_row(
            GraphNode,
            row,
            aliases=tuple(aliases[row["id"]]),
            source_event_ids=tuple(cited[row["id"]]),
        )
        for row in rows
    }
    return [by_id[i] for i in ids if i in by_id]


def kin_edges(
    raw: sqlite3.Connection, from_ids: Sequence[str], relations: Iterable[str]
) -> list[tuple[str, str, str]]:
    """(person, relation, relative) for the current kinship edges from those person nodes
    to persons: what a later batch's "my sister" may mean (``KIN_EDGES`` at most)."""
    ids, wanted = list(dict.fromkeys(from_ids)), sorted(set(relations))
    if not ids or not wanted:
        return []
    rows = raw.execute(
        f"SELECT a.name, e.relation, b.name FROM graph_edges e "
        f"JOIN graph_nodes a ON a.id = e.from_node_id JOIN graph_nodes b ON b.id = e.to_node_id "
        f"WHERE e.from_node_id IN ({_marks(ids)}) AND e.relation IN ({_marks(wanted)}) "
        f"AND e.status IN ('active', 'disputed') AND e.superseded_at IS NULL "
        f"AND a.type = 'person' AND b.type = 'person' AND b.status IN ('active', 'disputed') "
        f"ORDER BY e.learned_at, e.id LIMIT ?",
        [*ids, *wanted, KIN_EDGES],
    )
    return [(row[0], row[1], row[2]) for row in rows]


def event_statuses(raw: sqlite3.Connection, event_ids: Iterable[str]) -> dict[str, str]:
    """Each cited event's status, from the index alone (migration 28: a row lookup per
    event through the unique id index cost ~3x as much; the planner prefers that one)."""
    ids = list(dict.fromkeys(event_ids))
    found: dict[str, str] = {}
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        rows = raw.execute(
            f"SELECT id, status FROM events INDEXED BY events_id_status "
            f"WHERE id IN ({_marks(chunk)})",
            chunk,
        )
        found.update({row[0]: row[1] for row in rows})
    return found


def names_of(raw: sqlite3.Connection, node_ids: list[str]) -> dict[str, str]:
    if not node_ids:
        return {}
    rows = raw.execute(
        f"SELECT id, name FROM graph_nodes WHERE id IN ({_marks(node_ids)})", node_ids
    )
    return {row[0]: row[1] for row in rows}


def candidates(
    raw: sqlite3.Connection, space: str, terms: Sequence[str], limit: int = CANDIDATES
) -> list[str]:
    """Nodes sharing a term with the query, most shared terms first, then importance."""
    wanted = list(dict.fromkeys(terms))
    if not wanted:
        return []
    rows = raw.execute(
        f"SELECT t.node_id, COUNT(*) AS shared FROM graph_terms t JOIN graph_nodes n "
        f"ON n.id = t.node_id WHERE t.namespace = ? AND t.term IN ({_marks(wanted)}) "
        "GROUP BY t.node_id, n.pk, n.source_count ORDER BY shared DESC, n.source_count DESC, n.pk "
        "LIMIT ?",
        [space, *wanted, limit],
    )
    return [row[0] for row in rows]


def top_node_ids(
    raw: sqlite3.Connection,
    space: str,
    type_: str | None,
    offset: int,
    limit: int,
    as_of: str | None = None,
) -> list[str]:
    """Nodes by importance (number of sources), most first; ``as_of``: created by then."""
    rows = raw.execute(
        "SELECT id FROM graph_nodes WHERE namespace = ? AND status IN ('active', 'disputed') "
        "AND (? IS NULL OR type = ?) AND (? IS NULL OR created_at <= ?) "
        "ORDER BY source_count DESC, pk LIMIT ? OFFSET ?",
        (space, type_, type_, as_of, as_of, limit, offset),
    )
    return [row[0] for row in rows]


def node_space(raw: sqlite3.Connection, node_id: str) -> str | None:
    row = raw.execute("SELECT namespace FROM graph_nodes WHERE id = ?", (node_id,)).fetchone()
    return None if row is None else str(row[0])


def known_by_keys(raw: sqlite3.Connection, space: str, keys: Iterable[str]) -> list[Known]:
    """Nodes whose name or an alias normalises to one of ``keys`` (any type)."""
    wanted = list(dict.fromkeys(keys))
    if not wanted:
        return []
    marks = _marks(wanted)
    rows = raw.execute(
        f"SELECT id FROM graph_nodes WHERE namespace = ? AND name_key IN ({marks}) UNION "
        f"SELECT node_id FROM graph_aliases WHERE namespace = ? AND alias_key IN ({marks})",
        [space, *wanted, space, *wanted],
    )
    return known(raw, [row[0] for row in rows])


def near_candidates(raw: sqlite3.Connection, space: str, letters: Iterable[str]) -> list[Known]:
    """Nodes whose name key begins with one of ``letters`` (index range scans)."""
    ids: list[str] = []
    for letter in sorted(set(letters)):
        rows = raw.execute(
            "SELECT id FROM graph_nodes WHERE namespace = ? AND name_key >= ? AND name_key < ? "
            "LIMIT 500",
            (space, letter, letter + "\U0010ffff"),
        )
        ids += [row[0] for row in rows]
    return known(raw, ids)


def known(raw: sqlite3.Connection, node_ids: Sequence[str]) -> list[Known]:
    ids = list(dict.fromkeys(node_ids))
    if not ids:
        return []
    keys: dict[str, set[str]] = {}
    types: dict[str, str] = {}
    for node_id, type_, key in raw.execute(
        f"SELECT id, type, name_key FROM graph_nodes WHERE id IN ({_marks(ids)})", ids
    ):
        keys.setdefault(node_id, set()).add(key)
        types[node_id] = type_
    for node_id, key in raw.execute(
        f"SELECT node_id, alias_key FROM graph_aliases WHERE node_id IN ({_marks(ids)})", ids
    ):
        keys.setdefault(node_id, set()).add(key)
    return [Known(i, types[i], frozenset(keys[i])) for i in ids if i in types]


def duplicates(raw: sqlite3.Connection, space: str) -> list[sqlite3.Row]:
    return raw.execute(
        "SELECT node_id, other_id, reason FROM graph_duplicates WHERE namespace = ? "
        "ORDER BY created_at, node_id",
        (space,),
    ).fetchall()


def recent_node_ids(raw: sqlite3.Connection, space: str, limit: int) -> list[str]:
    rows = raw.execute(
        "SELECT id FROM graph_nodes WHERE namespace = ? ORDER BY updated_at DESC, pk DESC LIMIT ?",
        (space, limit),
    )
    return [row[0] for row in rows]


def cited_messages(raw: sqlite3.Connection, space: str, event_ids: Sequence[str]) -> list[str]:
    """The messages the visible events cite, event by event in the order given."""
    ids = list(dict.fromkeys(event_ids))
    if not ids:
        return []
    rows = raw.execute(
        f"SELECT s.event_id, s.message_id FROM event_sources s JOIN events e ON e.id = s.event_id "
        f"WHERE s.event_id IN ({_marks(ids)}) AND e.namespace = ? "
        "AND e.status IN ('active', 'superseded') ORDER BY s.position",
        [*ids, space],
    )
    by_event: dict[str, list[str]] = {}
    for event_id, message_id in rows:
        by_event.setdefault(event_id, []).append(message_id)
    return list(dict.fromkeys(m for i in ids for m in by_event.get(i, [])))
