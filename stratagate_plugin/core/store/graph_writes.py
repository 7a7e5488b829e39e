"""Graph writes: the records a projection writes, the forget cascade, the search terms.

Every function runs inside the caller's transaction. What a projection writes is decided
by ``graph/apply.py`` (resolution, supersede rules) through ``store/sqlite/graph.py``'s
transaction; ``strip_event_provenance`` runs in the same transaction as the forget (or
import undo) that calls it, so the graph never cites an event that is gone.
"""

import json
import sqlite3
from collections.abc import Iterable, Sequence

from ..graph.shapes import Believed, FactValue, value_text
from ..graph.storage import CurrentFact, Stated
from ..ids import new_id
from ..text.search_terms import tokenize
from . import graph_reads as reads
from . import graph_statements
from .event_rows import locked_temporal
from .postgres.job_claims import HOLDS_TO_COMMIT
from .rows import dump_json
from .units import on_postgres

_LIVE = "status IN ('active', 'disputed') AND superseded_at IS NULL"
_LIVE_NODES = ("active", "disputed")


def insert_node(
    raw: sqlite3.Connection,
    space: str,
    name: tuple[str, str],
    type_: str,
    tags: Sequence[str],
    now: str,
) -> str:
    """A new node named (name, its key); its id."""
    node_id = new_id("node")
    raw.execute(
        "INSERT INTO graph_nodes(id, namespace, name, type, name_key, tags_json, "
        "created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (node_id, space, name[0], type_, name[1], dump_json(list(tags)), now, now),
    )
    return node_id


def node_tags(raw: sqlite3.Connection, node_id: str) -> list[str]:
    """The node's tags, read to be written back whole (``set_tags``): on PostgreSQL its row
    is locked to the commit first, as a forget's ``_strip_fields`` locks it (each rewrote
    the list it had read, so a tag added or a forgotten one removed could be lost)."""
    return list(json.loads(_locked_tags(raw, node_id) or "[]"))


def _locked_tags(raw: sqlite3.Connection, node_id: str) -> str | None:
    lock = HOLDS_TO_COMMIT if on_postgres(raw) else ""
    row = raw.execute(f"SELECT tags_json FROM graph_nodes WHERE id = ?{lock}", (node_id,))
    found = row.fetchone()
    return None if found is None else str(found[0])


def set_tags(raw: sqlite3.Connection, node_id: str, tags: Sequence[str], now: str) -> None:
    raw.execute(
        "UPDATE graph_nodes SET tags_json = ?, updated_at = ? WHERE id = ?",
        (dump_json(list(tags)), now, node_id),
    )


def name_key(raw: sqlite3.Connection, node_id: str) -> str:
    row = raw.execute("SELECT name_key FROM graph_nodes WHERE id = ?", (node_id,)).fetchone()
    return str(row[0])


def alias_keys(raw: sqlite3.Connection, node_id: str) -> list[str]:
    rows = raw.execute("SELECT alias_key FROM graph_aliases WHERE node_id = ?", (node_id,))
    return [row[0] for row in rows]


def add_alias(raw: sqlite3.Connection, space: str, node_id: str, alias: tuple[str, str]) -> None:
    raw.execute(
        "INSERT INTO graph_aliases(node_id, namespace, alias, alias_key) VALUES (?, ?, ?, ?)",
        (node_id, space, *alias),
    )


def list_duplicate(
    raw: sqlite3.Connection, space: str, node_id: str, other_id: str, reason: str, now: str
) -> None:
    raw.execute(
        "INSERT OR IGNORE INTO graph_duplicates(node_id, other_id, namespace, reason, "
        "created_at) VALUES (?, ?, ?, ?, ?)",
        (node_id, other_id, space, reason, now),
    )


def add_terms(raw: sqlite3.Connection, space: str, node_id: str, texts: Sequence[str]) -> None:
    terms = sorted({term for text in texts for term in tokenize(text)})
    raw.executemany(
        "INSERT OR IGNORE INTO graph_terms(namespace, term, node_id) VALUES (?, ?, ?)",
        [(space, term, node_id) for term in terms],
    )


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


def current_facts(raw: sqlite3.Connection, node_id: str, key: str) -> list[CurrentFact]:
    rows = raw.execute(
        f"SELECT id, value_json, valid_from, stated_at FROM graph_facts WHERE node_id = ? "
        f"AND key = ? AND {_LIVE}",
        (node_id, key),
    )
    return [CurrentFact(row[0], json.loads(row[1]), row[2], row[3]) for row in rows]


def current_edges(raw: sqlite3.Connection, from_id: str, relation: str) -> list[Believed]:
    rows = raw.execute(
        f"SELECT id, to_node_id, valid_from, stated_at FROM graph_edges WHERE from_node_id = ? "
        f"AND relation = ? AND {_LIVE}",
        (from_id, relation),
    )
    return [Believed(*row) for row in rows]


def insert_fact(
    raw: sqlite3.Connection, node_id: str, key: str, value: FactValue, made: Stated
) -> str:
    fact_id = new_id("gfact")
    raw.execute(
        "INSERT INTO graph_facts(id, node_id, key, value_json, confidence, valid_from, "
        "stated_at, learned_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (fact_id, node_id, key, dump_json(value), *made),
    )
    return fact_id


def insert_edge(
    raw: sqlite3.Connection, space: str, ends: tuple[str, str], relation: str, made: Stated
) -> str:
    edge_id = new_id("gedge")
    raw.execute(
        "INSERT INTO graph_edges(id, namespace, from_node_id, to_node_id, relation, confidence, "
        "valid_from, stated_at, learned_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (edge_id, space, *ends, relation, *made),
    )
    return edge_id


_TABLES = {"fact": "graph_facts", "edge": "graph_edges"}


def mark_history(
    raw: sqlite3.Connection, kind: str, record_id: str, valid_to: str | None, now: str
) -> None:
    raw.execute(
        f"UPDATE {_TABLES[kind]} SET status = 'superseded', valid_to = ?, superseded_at = ? "
        "WHERE id = ?",
        (valid_to, now, record_id),
    )


def supersede(
    raw: sqlite3.Connection, kind: str, old_id: str, new_id_: str, valid_from: str | None, now: str
) -> None:
    """``old_id`` valid until ``new_id_`` holds (never before it began)."""
    raw.execute(
        f"UPDATE {_TABLES[kind]} SET status = 'superseded', valid_to = CASE WHEN valid_from > ? "
        "THEN valid_from ELSE ? END, superseded_at = ?, superseded_by = ? WHERE id = ?",
        (valid_from or now, valid_from or now, now, new_id_, old_id),
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
    edges = graph_statements.edges_of(raw, node_ids)
    ends = {e.from_node_id for e in edges} | {e.to_node_id for e in edges}
    return list(dict.fromkeys([*node_ids, *sorted(ends)]))


def rebuild_terms(raw: sqlite3.Connection, node_ids: Sequence[str]) -> None:
    """The search terms of each live node from scratch (after a forget took statements
    away): name, aliases, tags, type, and every statement not archived (current or history):
    facts, edge ends, relations."""
    if not node_ids:
        return
    found = [node for node in reads.nodes(raw, node_ids) if node.status in _LIVE_NODES]
    ids = [node.id for node in found]
    facts = [f for f in graph_statements.facts_of(raw, ids) if f.status != "archived"]
    edges = [e for e in graph_statements.edges_of(raw, ids) if e.status != "archived"]
    names = reads.names_of(
        raw, list({e.from_node_id for e in edges} | {e.to_node_id for e in edges})
    )
    for node in found:
        texts = [node.name, *node.aliases, *node.tags, node.type]
        texts += [f"{f.key} {value_text(f.value)}" for f in facts if f.node_id == node.id]
        for edge in edges:
            if node.id in (edge.from_node_id, edge.to_node_id):
                other = edge.to_node_id if edge.from_node_id == node.id else edge.from_node_id
                texts += [names.get(other, other), edge.relation]
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
        temporal = locked_temporal(raw, event_id)
        if temporal is None:
            continue
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
        held = _locked_tags(raw, node_id)
        if held is not None:
            tags = [tag for tag in json.loads(held) if tag != key]
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
