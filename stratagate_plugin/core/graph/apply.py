"""Applying a checked projection (spec §4): resolve each draft to a node, merge or supersede
each statement, list near matches, add search terms. The decisions are ``resolution`` and
``projection``'s; this drives them over a ``GraphTransaction`` (one write transaction), so
a node one draft created is the node the next draft resolves to.
"""

import json
from collections.abc import Mapping
from dataclasses import dataclass, field

from .projection import Checked, Decision, EventTimes, decide, latest
from .resolution import first_letters, keys_of, near_matches, normalise_key, resolve
from .shapes import (
    MAX_ALIASES,
    MAX_TAGS,
    Believed,
    EdgeDraft,
    FactDraft,
    FactValue,
    NodeDraft,
    value_text,
)
from .storage import GraphTransaction, Stated


@dataclass
class Applied:
    """What one projection wrote: its nodes and edges, and the near matches it listed."""

    node_ids: list[str] = field(default_factory=list)
    edge_ids: list[str] = field(default_factory=list)
    duplicates: list[str] = field(default_factory=list)


def apply_projection(
    tx: GraphTransaction,
    space: str,
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
        node_id = _node(tx, space, draft, now, applied)
        refs[draft.ref] = node_id
        tx.add_terms(space, node_id, [draft.name, *draft.aliases, *draft.tags, draft.type])
        for fact in draft.facts:
            _fact(tx, node_id, fact, times, now)
            tx.add_sources("node", node_id, fact.source_event_ids)
            tx.add_terms(space, node_id, [f"{fact.key} {value_text(fact.value)}"])
    names = {draft.ref: draft.name for draft in checked.projection.nodes}
    for edge in checked.projection.edges:
        applied.edge_ids.append(_edge(tx, space, refs, edge, times, now))
        tx.add_terms(space, refs[edge.from_ref], [names[edge.to_ref], edge.relation])
        tx.add_terms(space, refs[edge.to_ref], [names[edge.from_ref], edge.relation])
    touched = list(dict.fromkeys(refs.values()))
    tx.recount(touched)
    applied.node_ids = touched
    return applied


def _node(tx: GraphTransaction, space: str, draft: NodeDraft, now: str, applied: Applied) -> str:
    keys = keys_of(draft.name, draft.aliases)
    node_id = resolve(draft.type, keys, tx.known_by_keys(space, keys))
    if node_id is None:
        name = (draft.name, normalise_key(draft.name))
        node_id = tx.insert_node(space, name, draft.type, draft.tags[:MAX_TAGS], now)
        _list_near(tx, space, node_id, draft, keys, now, applied)
    else:
        tags = list(dict.fromkeys([*tx.node_tags(node_id), *draft.tags]))[:MAX_TAGS]
        tx.set_tags(node_id, tags, now)
    _add_aliases(tx, space, node_id, draft)
    _tag_sources(tx, node_id, draft)
    tx.add_sources("node", node_id, draft.source_event_ids)
    return node_id


def _list_near(
    tx: GraphTransaction,
    space: str,
    node_id: str,
    draft: NodeDraft,
    keys: frozenset[str],
    now: str,
    applied: Applied,
) -> None:
    """Near matches are kept apart and listed (``graph_duplicates`` and the job's reason)."""
    candidates = tx.near_candidates(space, first_letters(keys))
    candidates += tx.known_by_keys(space, keys)
    for other, reason in near_matches(node_id, draft.type, keys, candidates).items():
        tx.list_duplicate(space, node_id, other, reason, now)
        applied.duplicates.append(f"{draft.name} ({node_id}) ~ {other}: {reason}")


def _tag_sources(tx: GraphTransaction, node_id: str, draft: NodeDraft) -> None:
    """Each of the draft's tags the node holds cites the events that gave it."""
    held = set(tx.node_tags(node_id))
    for tag in draft.tags:
        if tag in held:
            tx.add_field_sources(node_id, "tag", tag, draft.field_sources("tag", tag))


def _add_aliases(tx: GraphTransaction, space: str, node_id: str, draft: NodeDraft) -> None:
    """Other spellings the node was proposed under (its own name key is not an alias), each
    citing the events that gave it: the proposed name its node's sources, an alias its own."""
    own, stored = tx.name_key(node_id), tx.alias_keys(node_id)
    held, room = set(stored), MAX_ALIASES - len(stored)
    names = [(draft.name, draft.source_event_ids)]
    names += [(alias, draft.field_sources("alias", alias)) for alias in draft.aliases]
    for name, sources in names:
        key = normalise_key(name)
        if not key or key == own:
            continue
        if key not in held and room <= 0:
            continue
        if key not in held:
            tx.add_alias(space, node_id, (name.strip(), key))
            held.add(key)
            room -= 1
        tx.add_field_sources(node_id, "alias", key, sources)


def _fact(
    tx: GraphTransaction,
    node_id: str,
    fact: FactDraft,
    times: Mapping[str, EventTimes],
    now: str,
) -> None:
    default, stated = latest(fact.source_event_ids, times)
    valid_from = fact.valid_from or default
    target = _target(fact.value)
    current = tx.current_facts(node_id, fact.key)
    believed = [Believed(f.id, _target(f.value), f.valid_from, f.stated_at) for f in current]
    decision = decide(target, stated, believed)
    if decision.merge_into:
        tx.add_sources("fact", decision.merge_into, fact.source_event_ids)
        return
    made = Stated(fact.confidence, valid_from, stated, now)
    fact_id = tx.insert_fact(node_id, fact.key, fact.value, made)
    tx.add_sources("fact", fact_id, fact.source_event_ids)
    _settle(tx, "fact", fact_id, decision, valid_from, now)


def _edge(
    tx: GraphTransaction,
    space: str,
    refs: Mapping[str, str],
    edge: EdgeDraft,
    times: Mapping[str, EventTimes],
    now: str,
) -> str:
    start, end = refs[edge.from_ref], refs[edge.to_ref]
    relation = edge.relation.strip()
    default, stated = latest(edge.source_event_ids, times)
    valid_from = edge.valid_from or default
    current = tx.current_edges(start, relation)
    believed = [old for old in current if edge.exclusive or old.target == end]
    decision = decide(end, stated, believed)
    if decision.merge_into:
        tx.add_sources("edge", decision.merge_into, edge.source_event_ids)
        return decision.merge_into
    made = Stated(edge.confidence, valid_from, stated, now)
    edge_id = tx.insert_edge(space, (start, end), relation, made)
    tx.add_sources("edge", edge_id, edge.source_event_ids)
    _settle(tx, "edge", edge_id, decision, valid_from, now)
    return edge_id


def _settle(
    tx: GraphTransaction,
    kind: str,
    record_id: str,
    decision: Decision,
    valid_from: str | None,
    now: str,
) -> None:
    """A new statement older than the believed one is history at once; else it supersedes."""
    if decision.history:
        tx.mark_history(kind, record_id, decision.history_until, now)
    for old in decision.supersede:
        tx.supersede(kind, old, record_id, valid_from, now)


def _target(value: FactValue) -> str:
    """A fact value as the supersede rule compares it: the same value, the same text."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
