"""Graph writes: applying a checked projection, the forget cascade, the search terms.

Every function runs inside the caller's transaction: a projection is applied whole with its
job's finish, and ``strip_event_provenance`` runs in the same transaction as the forget
(or import undo) that calls it, so the graph never cites an event that is gone.
"""

import json
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from ..graph import projection as rules
from ..graph.projection import Believed, Checked, EventTimes
from ..graph.resolution import first_letters, keys_of, near_matches, normalise_key, resolve
from ..graph.shapes import MAX_ALIASES, MAX_TAGS, EdgeDraft, FactDraft, NodeDraft
from ..ids import new_id
from ..text.search_terms import tokenize
from . import graph_reads as reads
from .rows import dump_json

_LIVE = "status IN ('active', 'disputed') AND superseded_at IS NULL"


@dataclass
class Applied:
    """What one projection wrote: its nodes and edges, and the near matches it listed."""

    node_ids: list[str] = field(default_factory=list)
    edge_ids: list[str] = field(default_factory=list)
    duplicates: list[str] = field(default_factory=list)


def apply_projection(
    raw: sqlite3.Connection,
    namespace: str,
    checked: Checked,
    times: Mapping[str, EventTimes],
    now: str,
) -> Applied:
    """Resolve, insert and supersede, adding each statement's search terms to its nodes (a
    term once added stays: history is searchable too), so a node with a long history costs
    no more to extend than a new one."""
    applied = Applied()
    refs: dict[str, str] = {}
    for draft in checked.projection.nodes:
        node_id = _node(raw, namespace, draft, now, applied)
        refs[draft.ref] = node_id
        add_terms(raw, namespace, node_id, [draft.name, *draft.aliases, *draft.tags, draft.type])
        for fact in draft.facts:
            _fact(raw, node_id, fact, times, now)
            add_sources(raw, "node", node_id, fact.source_event_ids)
            add_terms(raw, namespace, node_id, [f"{fact.key} {rules.value_text(fact.value)}"])
    names = {draft.ref: draft.name for draft in checked.projection.nodes}
    for edge in checked.projection.edges:
        applied.edge_ids.append(_edge(raw, namespace, refs, edge, times, now))
        add_terms(raw, namespace, refs[edge.from_ref], [names[edge.to_ref], edge.relation])
        add_terms(raw, namespace, refs[edge.to_ref], [names[edge.from_ref], edge.relation])
    touched = list(dict.fromkeys(refs.values()))
    recount(raw, touched)
    applied.node_ids = touched
    return applied


def add_terms(raw: sqlite3.Connection, namespace: str, node_id: str, texts: Sequence[str]) -> None:
    terms = sorted({term for text in texts for term in tokenize(text)})
    raw.executemany(
        "INSERT OR IGNORE INTO graph_terms(namespace, term, node_id) VALUES (?, ?, ?)",
        [(namespace, term, node_id) for term in terms],
    )


def _node(
    raw: sqlite3.Connection, namespace: str, draft: NodeDraft, now: str, applied: Applied
) -> str:
    keys = keys_of(draft.name, draft.aliases)
    node_id = resolve(draft.type, keys, reads.known_by_keys(raw, namespace, keys))
    if node_id is None:
        node_id = new_id("node")
        raw.execute(
            "INSERT INTO graph_nodes(id, namespace, name, type, name_key, tags_json, "
            "created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (node_id, namespace, draft.name, draft.type, normalise_key(draft.name),
             dump_json(draft.tags[:MAX_TAGS]), now, now),
        )  # fmt: skip
        _list_near(raw, namespace, node_id, draft, keys, now, applied)
    else:
        _merge_metadata(raw, node_id, draft, now)
    _add_aliases(raw, namespace, node_id, draft)
    _tag_sources(raw, node_id, draft)
    add_sources(raw, "node", node_id, draft.source_event_ids)
    return node_id


def _list_near(
    raw: sqlite3.Connection,
    namespace: str,
    node_id: str,
    draft: NodeDraft,
    keys: frozenset[str],
    now: str,
    applied: Applied,
) -> None:
    """Near matches are kept apart and listed (``graph_duplicates`` and the job's reason)."""
    candidates = reads.near_candidates(raw, namespace, first_letters(keys))
    candidates += reads.known_by_keys(raw, namespace, keys)
    for other, reason in near_matches(node_id, draft.type, keys, candidates).items():
        raw.execute(
            "INSERT OR IGNORE INTO graph_duplicates(node_id, other_id, namespace, reason, "
            "created_at) VALUES (?, ?, ?, ?, ?)",
            (node_id, other, namespace, reason, now),
        )
        applied.duplicates.append(f"{draft.name} ({node_id}) ~ {other}: {reason}")


def _merge_metadata(raw: sqlite3.Connection, node_id: str, draft: NodeDraft, now: str) -> None:
    row = raw.execute("SELECT tags_json FROM graph_nodes WHERE id = ?", (node_id,)).fetchone()
    tags = list(dict.fromkeys([*json.loads(row[0]), *draft.tags]))[:MAX_TAGS]
    raw.execute(
        "UPDATE graph_nodes SET tags_json = ?, updated_at = ? WHERE id = ?",
        (dump_json(tags), now, node_id),
    )


def _tag_sources(raw: sqlite3.Connection, node_id: str, draft: NodeDraft) -> None:
    """Each of the draft's tags the node holds cites the events that gave it."""
    row = raw.execute("SELECT tags_json FROM graph_nodes WHERE id = ?", (node_id,)).fetchone()
    held = set(json.loads(row[0]))
    for tag in draft.tags:
        if tag in held:
            add_field_sources(raw, node_id, "tag", tag, draft.field_sources("tag", tag))


def _add_aliases(raw: sqlite3.Connection, namespace: str, node_id: str, draft: NodeDraft) -> None:
    """Other spellings the node was proposed under (its own name key is not an alias), each
    citing the events that gave it: the proposed name its node's sources, an alias its own."""
    row = raw.execute("SELECT name_key FROM graph_nodes WHERE id = ?", (node_id,)).fetchone()
    count = raw.execute("SELECT COUNT(*) FROM graph_aliases WHERE node_id = ?", (node_id,))
    room = MAX_ALIASES - int(count.fetchone()[0])
    names = [(draft.name, draft.source_event_ids)]
    names += [(alias, draft.field_sources("alias", alias)) for alias in draft.aliases]
    for name, sources in names:
        key = normalise_key(name)
        if not key or key == row[0]:
            continue
        held = raw.execute(
            "SELECT 1 FROM graph_aliases WHERE node_id = ? AND alias_key = ?", (node_id, key)
        ).fetchone()
        if held is None and room <= 0:
            continue
        if held is None:
            raw.execute(
                "INSERT INTO graph_aliases(node_id, namespace, alias, alias_key) "
                "VALUES (?, ?, ?, ?)",
                (node_id, namespace, name.strip(), key),
            )
            room -= 1
        add_field_sources(raw, node_id, "alias", key, sources)


def add_field_sources(
    raw: sqlite3.Connection, node_id: str, field: str, key: str, ids: Iterable[str]
) -> None:
    raw.executemany(
        "INSERT OR IGNORE INTO graph_field_sources(node_id, field, value_key, event_id) "
        "VALUES (?, ?, ?, ?)",
        [(node_id, field, key, event_id) for event_id in ids],
    )


def add_sources(raw: sqlite3.Connection, kind: str, record_id: str, ids: Iterable[str]) -> None:
    raw.executemany(
        "INSERT OR IGNORE INTO graph_sources(record_kind, record_id, event_id) VALUES (?, ?, ?)",
        [(kind, record_id, event_id) for event_id in ids],
    )


def _fact(
    raw: sqlite3.Connection,
    node_id: str,
    fact: FactDraft,
    times: Mapping[str, EventTimes],
    now: str,
) -> None:
    default, stated = rules.latest(fact.source_event_ids, times)
    valid_from = fact.valid_from or default
    target = dump_json(fact.value)
    rows = raw.execute(
        f"SELECT id, value_json, valid_from, stated_at FROM graph_facts WHERE node_id = ? "
        f"AND key = ? AND {_LIVE}",
        (node_id, fact.key),
    ).fetchall()
    decision = rules.decide(target, stated, [Believed(*row) for row in rows])
    if decision.merge_into:
        add_sources(raw, "fact", decision.merge_into, fact.source_event_ids)
        return
    fact_id = new_id("gfact")
    raw.execute(
        "INSERT INTO graph_facts(id, node_id, key, value_json, confidence, valid_from, "
        "stated_at, learned_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (fact_id, node_id, fact.key, target, fact.confidence, valid_from, stated, now),
    )
    add_sources(raw, "fact", fact_id, fact.source_event_ids)
    _settle(raw, "graph_facts", fact_id, decision, valid_from, now)


def _edge(
    raw: sqlite3.Connection,
    namespace: str,
    refs: Mapping[str, str],
    edge: EdgeDraft,
    times: Mapping[str, EventTimes],
    now: str,
) -> str:
    start, end = refs[edge.from_ref], refs[edge.to_ref]
    relation = edge.relation.strip()
    default, stated = rules.latest(edge.source_event_ids, times)
    valid_from = edge.valid_from or default
    rows = raw.execute(
        f"SELECT id, to_node_id, valid_from, stated_at FROM graph_edges WHERE from_node_id = ? "
        f"AND relation = ? AND {_LIVE}",
        (start, relation),
    ).fetchall()
    believed = [Believed(*row) for row in rows if edge.exclusive or row[1] == end]
    decision = rules.decide(end, stated, believed)
    if decision.merge_into:
        add_sources(raw, "edge", decision.merge_into, edge.source_event_ids)
        return decision.merge_into
    edge_id = new_id("gedge")
    raw.execute(
        "INSERT INTO graph_edges(id, namespace, from_node_id, to_node_id, relation, confidence, "
        "valid_from, stated_at, learned_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (edge_id, namespace, start, end, relation, edge.confidence, valid_from, stated, now),
    )
    add_sources(raw, "edge", edge_id, edge.source_event_ids)
    _settle(raw, "graph_edges", edge_id, decision, valid_from, now)
    return edge_id


def _settle(
    raw: sqlite3.Connection,
    table: str,
    record_id: str,
    decision: rules.Decision,
    valid_from: str | None,
    now: str,
) -> None:
    """A new statement older than the believed one is history at once; else it supersedes."""
    if decision.history:
        raw.execute(
            f"UPDATE {table} SET status = 'superseded', valid_to = ?, superseded_at = ? "
            "WHERE id = ?",
            (decision.history_until, now, record_id),
        )
    for old in decision.supersede:  # valid until the new one holds (never before it began)
        raw.execute(
            f"UPDATE {table} SET status = 'superseded', valid_to = CASE WHEN valid_from > ? "
            "THEN valid_from ELSE ? END, superseded_at = ?, superseded_by = ? WHERE id = ?",
            (valid_from or now, valid_from or now, now, record_id, old),
        )


def recount(raw: sqlite3.Connection, node_ids: Sequence[str]) -> None:
    """A node's importance: how many events it cites."""
    raw.executemany(
        "UPDATE graph_nodes SET source_count = (SELECT COUNT(*) FROM graph_sources WHERE "
        "record_kind = 'node' AND record_id = ?) WHERE id = ?",
        [(node_id, node_id) for node_id in node_ids],
    )


def _with_neighbours(raw: sqlite3.Connection, node_ids: Sequence[str]) -> list[str]:
    """The nodes and the other ends of their edges (whose endpoint terms name them)."""
    edges = reads.edges_of(raw, node_ids)
    ends = {e.from_node_id for e in edges} | {e.to_node_id for e in edges}
    return list(dict.fromkeys([*node_ids, *sorted(ends)]))


def rebuild_terms(raw: sqlite3.Connection, node_ids: Sequence[str]) -> None:
    """The search terms of each node from scratch (after a forget took statements away):
    name, aliases, tags, type, facts, edge ends, relations."""
    if not node_ids:
        return
    for view in reads.views(raw, node_ids, history=None):
        node = view.node
        texts = [node.name, *node.aliases, *node.tags, node.type]
        for fact in (*view.current_facts, *view.historical_facts):
            texts.append(f"{fact.key} {rules.value_text(fact.value)}")
        for edge in (*view.current_edges, *view.historical_edges):
            texts += [edge.other_name, edge.edge.relation]
        raw.execute("DELETE FROM graph_terms WHERE node_id = ?", (node.id,))
        add_terms(raw, node.namespace, node.id, texts)


def write_back(raw: sqlite3.Connection, event_ids: Sequence[str]) -> None:
    """Each event gets ``participant_node_ids``: the nodes citing it (its temporal json)."""
    for event_id in event_ids:
        cited = [
            row[0]
            for row in raw.execute(
                "SELECT record_id FROM graph_sources WHERE event_id = ? AND record_kind = 'node' "
                "ORDER BY record_id",
                (event_id,),
            )
        ]
        row = raw.execute("SELECT temporal_json FROM events WHERE id = ?", (event_id,)).fetchone()
        if row is None:
            continue
        temporal = json.loads(row[0])
        if cited:
            temporal["participant_node_ids"] = cited
        else:
            temporal.pop("participant_node_ids", None)
        raw.execute(
            "UPDATE events SET temporal_json = ? WHERE id = ?", (dump_json(temporal), event_id)
        )


def strip_event_provenance(raw: sqlite3.Connection, event_ids: Sequence[str]) -> list[str]:
    """Take the events out of every node, fact, edge, alias and tag; delete what is left
    citing nothing (a deleted statement's predecessor is believed again). Returns the nodes
    deleted.
    Called in the transaction that forgets the events (or undoes their import)."""
    ids = list(dict.fromkeys(event_ids))
    if not ids:
        return []
    marks = ",".join("?" * len(ids))
    bare_fields = _strip_fields(raw, ids)
    hit = raw.execute(
        f"SELECT DISTINCT record_kind, record_id FROM graph_sources WHERE event_id IN ({marks})",
        ids,
    ).fetchall()
    if not hit and not bare_fields:
        return []
    raw.execute(f"DELETE FROM graph_sources WHERE event_id IN ({marks})", ids)
    orphans = {
        kind: [r for k, r in hit if k == kind and _sourceless(raw, k, r)]
        for kind in ("node", "fact", "edge")
    }
    touched = {r for k, r in hit if k == "node"} | bare_fields
    touched |= _owners(raw, orphans["fact"], orphans["edge"])
    _delete_statements(raw, "graph_facts", orphans["fact"])
    _delete_statements(raw, "graph_edges", orphans["edge"])
    gone = orphans["node"]
    touched |= set(_with_neighbours(raw, gone))
    _delete_nodes(raw, gone)
    alive = [n for n in touched if n not in gone]
    recount(raw, alive)
    rebuild_terms(raw, _with_neighbours(raw, alive))
    return gone


def _strip_fields(raw: sqlite3.Connection, event_ids: Sequence[str]) -> set[str]:
    """Take the events out of every alias's and tag's provenance, deleting the aliases and
    tags left citing nothing; the nodes that lost one."""
    marks = ",".join("?" * len(event_ids))
    hit = raw.execute(
        "SELECT DISTINCT node_id, field, value_key FROM graph_field_sources "
        f"WHERE event_id IN ({marks})",
        event_ids,
    ).fetchall()
    raw.execute(f"DELETE FROM graph_field_sources WHERE event_id IN ({marks})", event_ids)
    changed: set[str] = set()
    for node_id, kind, key in hit:
        if raw.execute(
            "SELECT 1 FROM graph_field_sources WHERE node_id = ? AND field = ? AND value_key = ?",
            (node_id, kind, key),
        ).fetchone():
            continue
        changed.add(node_id)
        if kind == "alias":
            raw.execute(
                "DELETE FROM graph_aliases WHERE node_id = ? AND alias_key = ?", (node_id, key)
            )
            continue
        row = raw.execute("SELECT tags_json FROM graph_nodes WHERE id = ?", (node_id,)).fetchone()
        if row is not None:
            tags = [tag for tag in json.loads(row[0]) if tag != key]
            raw.execute(
                "UPDATE graph_nodes SET tags_json = ? WHERE id = ?", (dump_json(tags), node_id)
            )
    return changed


def _sourceless(raw: sqlite3.Connection, kind: str, record_id: str) -> bool:
    row = raw.execute(
        "SELECT 1 FROM graph_sources WHERE record_kind = ? AND record_id = ? LIMIT 1",
        (kind, record_id),
    ).fetchone()
    return row is None


def _owners(raw: sqlite3.Connection, fact_ids: Sequence[str], edge_ids: Sequence[str]) -> set[str]:
    found: set[str] = set()
    for fact_id in fact_ids:
        found |= {
            r[0] for r in raw.execute("SELECT node_id FROM graph_facts WHERE id = ?", (fact_id,))
        }
    for edge_id in edge_ids:
        for row in raw.execute(
            "SELECT from_node_id, to_node_id FROM graph_edges WHERE id = ?", (edge_id,)
        ):
            found |= {row[0], row[1]}
    return found


def _delete_statements(raw: sqlite3.Connection, table: str, record_ids: Sequence[str]) -> None:
    """Delete facts or edges; those they had superseded are current again."""
    for record_id in record_ids:
        raw.execute(
            f"UPDATE {table} SET status = 'active', valid_to = NULL, superseded_at = NULL, "
            "superseded_by = NULL WHERE superseded_by = ?",
            (record_id,),
        )
        raw.execute(f"DELETE FROM {table} WHERE id = ?", (record_id,))


def _delete_nodes(raw: sqlite3.Connection, node_ids: Sequence[str]) -> None:
    for node_id in node_ids:
        facts = [
            r[0] for r in raw.execute("SELECT id FROM graph_facts WHERE node_id = ?", (node_id,))
        ]
        edges = [
            r[0]
            for r in raw.execute(
                "SELECT id FROM graph_edges WHERE from_node_id = ? OR to_node_id = ?",
                (node_id, node_id),
            )
        ]
        _delete_statements(raw, "graph_facts", facts)
        _delete_statements(raw, "graph_edges", edges)
        for kind, ids in (("fact", facts), ("edge", edges), ("node", [node_id])):
            raw.executemany(
                "DELETE FROM graph_sources WHERE record_kind = ? AND record_id = ?",
                [(kind, record_id) for record_id in ids],
            )
        raw.execute("DELETE FROM graph_terms WHERE node_id = ?", (node_id,))
        raw.execute(
            "DELETE FROM graph_duplicates WHERE node_id = ? OR other_id = ?", (node_id, node_id)
        )
        raw.execute("DELETE FROM graph_aliases WHERE node_id = ?", (node_id,))
        raw.execute("DELETE FROM graph_field_sources WHERE node_id = ?", (node_id,))
        raw.execute("DELETE FROM graph_nodes WHERE id = ?", (node_id,))
