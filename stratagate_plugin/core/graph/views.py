"""A node as a reader sees it, now or as of a date (spec §4 effective view; bi-temporal). Pure.

Now: a fact or edge is *current* when active or disputed with at least one active source
event, *historical* otherwise (superseded, or only superseded events say it); archived ones
are hidden. As of a date D: what we believed then — learned by D and not yet superseded at
D is current (its ``valid_to`` unknown then, so not shown); learned by D and superseded by
D is history. About a valid time T (now, or as of D): every statement known then whose
validity ``[valid_from, valid_to)`` — its end as known then — holds T is current.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from .shapes import (
    GRAPH_PROVENANCE_LIMIT,
    GraphEdge,
    GraphFact,
    GraphNode,
    NodeRecords,
    normalise_key,
    value_text,
)

LIVE = ("active", "disputed")
EXPOSABLE = ("active", "superseded")
STATE_CHARS = 500


@dataclass(frozen=True)
class Moment:
    """When the graph is read: ``as_of`` (belief time) and ``valid_at`` (world time)."""

    as_of: datetime | None = None
    valid_at: str | None = None


NOW = Moment()
R = TypeVar("R", GraphFact, GraphEdge)


class EdgeView(BaseModel):
    model_config = ConfigDict(frozen=True)

    edge: GraphEdge
    direction: str  # "out" (this node → other) or "in"
    other_id: str
    other_name: str


class NodeView(BaseModel):
    """The node with its facts and edges split into current and historical, and the visible
    source events (all of them; cards show the first ``GRAPH_PROVENANCE_LIMIT``)."""

    model_config = ConfigDict(frozen=True)

    node: GraphNode
    current_facts: tuple[GraphFact, ...] = ()
    historical_facts: tuple[GraphFact, ...] = ()
    current_edges: tuple[EdgeView, ...] = ()
    historical_edges: tuple[EdgeView, ...] = ()
    source_event_ids: tuple[str, ...] = ()
    # alias → the visible events that gave it (factories: a ``{}`` default is deep-copied
    # for every view, and a page assembles hundreds)
    alias_sources: dict[str, tuple[str, ...]] = Field(default_factory=dict)
    tag_sources: dict[str, tuple[str, ...]] = Field(default_factory=dict)

    @property
    def importance(self) -> int:
        """How many visible events the node cites (the stored count: a listing's views
        hold no sources)."""
        return self.node.visible_sources

    def current_state(self) -> str:
        """Current facts as ``key: value`` lines (disputed ones marked)."""
        lines = [
            f"{f.key}: {value_text(f.value)}" + (" [disputed]" if f.status == "disputed" else "")
            for f in self.current_facts
        ]
        return "; ".join(lines)[:STATE_CHARS]


def is_current(record: GraphFact | GraphEdge, status: Mapping[str, str], when: Moment) -> bool:
    """True now / believed at ``as_of``; about a valid time, every statement known then
    (replaced ones too: they still say what held before) whose validity holds it."""
    if when.valid_at is not None:
        learned = when.as_of is None or record.learned_at <= when.as_of
        seen = any(status.get(i) in EXPOSABLE for i in record.source_event_ids)
        return record.status != "archived" and learned and seen and _valid_at(record, when)
    if when.as_of is None:
        live = any(status.get(i) == "active" for i in record.source_event_ids)
        return record.status in LIVE and live
    return _believed_at(record, when.as_of)


def is_history(record: GraphFact | GraphEdge, status: Mapping[str, str], when: Moment) -> bool:
    """Shown as history: not current, not archived, learned by the moment read."""
    if record.status == "archived" or is_current(record, status, when):
        return False
    return when.as_of is None or record.learned_at <= when.as_of


def _believed_at(record: GraphFact | GraphEdge, moment: datetime) -> bool:
    if record.status == "archived" or record.learned_at > moment:
        return False
    return record.superseded_at is None or record.superseded_at > moment


def _valid_at(record: GraphFact | GraphEdge, when: Moment) -> bool:
    if when.valid_at is None:
        return True
    valid_to = _known_valid_to(record, when)
    starts = record.valid_from is None or record.valid_from <= when.valid_at
    return starts and (valid_to is None or when.valid_at < valid_to)


def _known_valid_to(record: GraphFact | GraphEdge, when: Moment) -> str | None:
    """``valid_to`` as known at the moment read (a later supersede was not known yet)."""
    if when.as_of is not None and record.superseded_at and record.superseded_at > when.as_of:
        return None
    return record.valid_to


def as_known(record: Any, when: Moment) -> Any:
    """The record as it looked at ``when.as_of``: active, no end, if superseded later."""
    if when.as_of is None or record.superseded_at is None or record.superseded_at <= when.as_of:
        return record
    return record.model_copy(update={"status": "active", "valid_to": None, "superseded_at": None})


def assemble(found: NodeRecords, when: Moment = NOW) -> list[NodeView]:
    """The views at ``when`` of the nodes visible then, in the order read (with their
    aliases' and tags' sources when those were read)."""
    facts_by: dict[str, list[GraphFact]] = {}
    edges_by: dict[str, list[GraphEdge]] = {}
    for fact in found.facts:
        facts_by.setdefault(fact.node_id, []).append(fact)
    for edge in found.edges:
        for end in dict.fromkeys((edge.from_node_id, edge.to_node_id)):
            edges_by.setdefault(end, []).append(edge)
    views = [
        node_view(
            node,
            facts_by.get(node.id, []),
            edges_by.get(node.id, []),
            found.names,
            found.statuses,
            when,
        )
        for node in found.nodes
        if visible_at(node, when)
    ]
    if found.field_sources is None:
        return views
    return [with_field_sources(view, found.field_sources) for view in views]


def with_field_sources(
    view: NodeView, found: Mapping[tuple[str, str, str], Sequence[str]]
) -> NodeView:
    """``view`` with the visible events behind each of its aliases and tags (spec §4's
    per-field provenance; an alias is found under its key, a tag as written)."""
    node = view.node
    aliases = {
        alias: tuple(found.get((node.id, "alias", normalise_key(alias)), ()))
        for alias in node.aliases
    }
    tags = {tag: tuple(found.get((node.id, "tag", tag), ())) for tag in node.tags}
    return view.model_copy(update={"alias_sources": aliases, "tag_sources": tags})


def node_view(
    node: GraphNode,
    facts: Sequence[GraphFact],
    edges: Sequence[GraphEdge],
    names: Mapping[str, str],
    status: Mapping[str, str],
    when: Moment = NOW,
) -> NodeView:
    """Split the node's records at ``when``; ``names``: node id → name of edge ends;
    ``status``: event id → status (only exposable events count as sources)."""
    ordered = sorted(facts, key=lambda f: (f.valid_from or "", f.learned_at), reverse=True)
    visible = [i for i in node.source_event_ids if status.get(i) in EXPOSABLE]
    current_facts, historical_facts = _split(ordered, status, when)
    current_edges, historical_edges = _split(edges, status, when)
    return NodeView(
        node=node,
        current_facts=tuple(_shown(as_known(f, when), status) for f in current_facts),
        historical_facts=tuple(_shown(f, status) for f in historical_facts),
        current_edges=tuple(
            _edge_view(node.id, _shown(as_known(e, when), status), names) for e in current_edges
        ),
        historical_edges=tuple(
            _edge_view(node.id, _shown(e, status), names) for e in historical_edges
        ),
        source_event_ids=tuple(visible),
    )


def _split(
    records: Sequence[R], status: Mapping[str, str], when: Moment
) -> tuple[list[R], list[R]]:
    """(current, history) in the order given: ``is_current`` and ``is_history`` with the
    current test made once per record."""
    current: list[R] = []
    history: list[R] = []
    for record in records:
        if is_current(record, status, when):
            current.append(record)
        elif record.status != "archived" and (
            when.as_of is None or record.learned_at <= when.as_of
        ):
            history.append(record)
    return current, history


def _shown(record: Any, status: Mapping[str, str]) -> Any:
    """The record citing only its visible events: a forgotten or purged event is never
    shown as a source (the record is kept or hidden by the rules above, not by this)."""
    kept = tuple(i for i in record.source_event_ids if status.get(i) in EXPOSABLE)
    if kept == record.source_event_ids:
        return record
    return record.model_copy(update={"source_event_ids": kept})


def _edge_view(node_id: str, edge: GraphEdge, names: Mapping[str, str]) -> EdgeView:
    out = edge.from_node_id == node_id
    other = edge.to_node_id if out else edge.from_node_id
    return EdgeView(
        edge=edge,
        direction="out" if out else "in",
        other_id=other,
        other_name=names.get(other, other),
    )


def visible_at(node: GraphNode, when: Moment) -> bool:
    """A node exists for a reader at ``when``: not archived, created by ``as_of``."""
    return node.status in LIVE and (when.as_of is None or node.created_at <= when.as_of)


def fact_line(fact: GraphFact, sources: int = GRAPH_PROVENANCE_LIMIT) -> dict[str, Any]:
    """A fact for a card: key, value, status, validity and its first ``sources`` events
    (0: none, for recall's compact lines)."""
    line: dict[str, Any] = {"key": fact.key, "value": fact.value, "status": fact.status}
    for name in ("valid_from", "valid_to"):
        if getattr(fact, name):
            line["validFrom" if name == "valid_from" else "validTo"] = getattr(fact, name)
    if sources:
        line["sourceEventIds"] = list(fact.source_event_ids[:sources])
    return line


def relation_line(view: EdgeView, sources: int = GRAPH_PROVENANCE_LIMIT) -> dict[str, Any]:
    arrow = "->" if view.direction == "out" else "<-"
    line: dict[str, Any] = {"relation": f"{arrow} {view.edge.relation} {view.other_name}"}
    line |= {"nodeId": view.other_id, "status": view.edge.status}
    if view.edge.valid_from:
        line["validFrom"] = view.edge.valid_from
    if view.edge.valid_to:
        line["validTo"] = view.edge.valid_to
    if sources:
        line["sourceEventIds"] = list(view.edge.source_event_ids[:sources])
    return line


def compact_card(view: NodeView, limit: int = GRAPH_PROVENANCE_LIMIT) -> dict[str, Any]:
    """A node for a tool result, the CLI or recall: current facts and relations, history in
    short, at most ``limit`` source events."""
    node = view.node
    card: dict[str, Any] = {"id": node.id, "name": node.name, "type": node.type}
    if node.aliases:
        card["aliases"] = [a[:160] for a in node.aliases]
    if node.tags:
        card["tags"] = [t[:120] for t in node.tags]
    provenance = {
        "aliases": _field_sources(node.aliases, view.alias_sources, 160, limit),
        "tags": _field_sources(node.tags, view.tag_sources, 120, limit),
    }
    if node.aliases or node.tags:  # spec §4 ``metadataProvenance``
        card["metadataProvenance"] = {name: found for name, found in provenance.items() if found}
    card |= {"status": node.status, "currentState": view.current_state()}
    card["facts"] = [fact_line(f) for f in view.current_facts]
    card["currentRelations"] = [relation_line(e) for e in view.current_edges]
    if view.historical_facts:
        card["historicalFacts"] = [fact_line(f) for f in view.historical_facts[:limit]]
    if view.historical_edges:
        card["historicalRelations"] = [relation_line(e) for e in view.historical_edges[:limit]]
    card["sourceEventIds"] = list(view.source_event_ids[:limit])
    card["importance"] = view.importance
    return card


def _field_sources(
    values: Sequence[str], given: Mapping[str, Sequence[str]], chars: int, limit: int
) -> list[dict[str, Any]]:
    """Each alias or tag with the events that gave it (none read: an empty list)."""
    return [
        {"value": value[:chars], "sourceEventIds": list(given.get(value, ())[:limit])}
        for value in values
    ]


def cited_event_ids(view: NodeView, limit: int = 24) -> list[str]:
    """The events a node's card cites, in card order: its facts, relations, aliases and tags
    first, then its own sources (the events a reader may want quoted)."""
    shown = GRAPH_PROVENANCE_LIMIT
    facts = (*view.current_facts, *view.historical_facts[:shown])
    edges = (*view.current_edges, *view.historical_edges[:shown])
    fields = (*view.alias_sources.values(), *view.tag_sources.values())
    ids = [i for fact in facts for i in fact.source_event_ids[:shown]]
    ids += [i for edge in edges for i in edge.edge.source_event_ids[:shown]]
    ids += [i for sources in fields for i in sources[:shown]]
    return list(dict.fromkeys([*ids, *view.source_event_ids]))[:limit]


def source_event_line(card: Any, chars: int = 200) -> dict[str, Any]:
    """A cited event as a card's reader needs it: its title, its first quoted words and the
    messages it was read from (expand those with ``memory_expand_event``)."""
    line: dict[str, Any] = {"id": card.id, "title": card.title[:chars], "status": card.status}
    if card.quotes:
        line["quote"] = card.quotes[0][:chars]
    line["messageIds"] = list(card.source_message_ids[:GRAPH_PROVENANCE_LIMIT])
    return line
