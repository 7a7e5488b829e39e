"""Validating a projection and deciding what it changes (spec §4 apply rules). Pure.

Nothing is stated without a source: every node, fact and edge must cite at least one event
of its batch that is still exposable (active or superseded). Ids from outside the batch
or no longer exposable are dropped with a warning; a record left citing none rejects the
whole projection before anything is written, so a batch is applied whole or not at all.
An alias or tag cites the events that gave it (its field provenance, by default the node's
own sources); one citing none of the batch is dropped with a warning.

A new fact with key K supersedes the node's active facts with key K (``valid_to`` = its
``valid_from``, ``superseded_at`` = when it was learned); the same value again only adds
sources. An edge (from, relation) to a different node supersedes the old edge the same way.
A statement made before what is believed (a back-filled older event) is history at once.
"""

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..clock import iso, parse_iso
from ..errors import StrataGateError
from ..events.cards import chronology_key
from .shapes import Believed, EdgeDraft, GraphProjection, NodeDraft

MAX_REASON = 500


class ProjectionRejected(StrataGateError):
    """The projection cites no event of its batch for some record: nothing was written."""

    def __init__(self, problems: Sequence[str]) -> None:
        self.problems = list(problems)
        super().__init__("graph projection rejected: " + "; ".join(self.problems))


@dataclass
class Checked:
    """A projection that passed, its source lists cut to the batch's exposable events."""

    projection: GraphProjection
    warnings: list[str] = field(default_factory=list)


def validate_projection(
    projection: GraphProjection,
    batch_ids: Collection[str],
    exposable: Collection[str],
    active: Collection[str] | None = None,
) -> Checked:
    """The projection with valid sources only; ``ProjectionRejected`` listing every record
    that cites none, or an edge whose end is not a node of the projection. ``active``: the
    batch events still active; a fact or edge citing none of them (only events already
    replaced) would be current without a live source, so it is dropped with a warning."""
    allowed = set(batch_ids) & set(exposable)
    problems: list[str] = []
    warnings: list[str] = []

    def sources(what: str, ids: Sequence[str]) -> list[str]:
        kept = [i for i in dict.fromkeys(ids) if i in allowed]
        if dropped := [i for i in ids if i not in allowed]:
            warnings.append(f"{what}: dropped sources outside the batch {sorted(set(dropped))}")
        if not kept:
            problems.append(f"{what} cites no exposable event of its batch")
        return kept

    def field_sources(what: str, ids: Sequence[str]) -> list[str]:
        """An alias's or tag's sources: one citing none of the batch is dropped, not fatal."""
        kept = [i for i in dict.fromkeys(ids) if i in allowed]
        if not kept:
            warnings.append(f"{what}: dropped, it cites no exposable event of its batch")
        return kept

    nodes = [_checked_node(node, sources, field_sources) for node in projection.nodes]
    refs = [node.ref for node in nodes]
    if duplicated := sorted({ref for ref in refs if refs.count(ref) > 1}):
        problems.append(f"node refs used twice: {duplicated}")
    edges = []
    for index, edge in enumerate(projection.edges):
        what = f"edge {index} ({edge.from_ref} -{edge.relation}-> {edge.to_ref})"
        if edge.from_ref not in refs or edge.to_ref not in refs:
            problems.append(f"{what} names a node the projection does not hold")
        edges.append(
            edge.model_copy(update={"source_event_ids": sources(what, edge.source_event_ids)})
        )
    if problems:
        raise ProjectionRejected(problems)
    checked = GraphProjection(nodes=nodes, edges=edges)
    if active is not None:
        checked = _live_only(checked, set(active), warnings)
    return Checked(checked, warnings)


def _live_only(
    projection: GraphProjection, active: set[str], warnings: list[str]
) -> GraphProjection:
    """Facts and edges citing at least one active event (spec §4: a current statement needs
    an active source); the nodes keep theirs, replaced events still say who was there."""
    nodes = []
    for node in projection.nodes:
        kept = [fact for fact in node.facts if active & set(fact.source_event_ids)]
        if len(kept) < len(node.facts):
            warnings.append(f"node {node.ref}: dropped facts citing only replaced events")
        nodes.append(node.model_copy(update={"facts": kept}))
    edges = [edge for edge in projection.edges if active & set(edge.source_event_ids)]
    if len(edges) < len(projection.edges):
        warnings.append("dropped edges citing only replaced events")
    return GraphProjection(nodes=nodes, edges=edges)


def _checked_node(node: NodeDraft, sources: Any, field_sources: Any) -> NodeDraft:
    """The node with its facts' sources checked, and each alias and tag citing the batch
    events that gave it (those citing none dropped)."""
    fields: dict[str, Any] = {}
    for kind, plural, values in (("alias", "aliases", node.aliases), ("tag", "tags", node.tags)):
        cited = {v: field_sources(f"{kind} {v!r} of {node.ref}", node.field_sources(kind, v))
                 for v in values}  # fmt: skip
        fields[plural] = [v for v in values if cited[v]]
        fields[f"{kind}_sources"] = {v: ids for v, ids in cited.items() if ids}
    facts = [
        fact.model_copy(
            update={
                "source_event_ids": sources(f"fact {node.ref}.{fact.key}", fact.source_event_ids)
            }
        )
        for fact in node.facts
    ]
    own = sources(f"node {node.ref}", node.source_event_ids)
    return node.model_copy(update={"source_event_ids": own, "facts": facts, **fields})


@dataclass(frozen=True)
class EventTimes:
    """An event's chronology (happened start ?? end ?? mentioned ?? created: when it was
    true) and when it was stated (mentioned ?? created)."""

    chronology: str
    stated: str

    @classmethod
    def of(cls, temporal: Mapping[str, Any], created_at: str) -> "EventTimes":
        """In UTC, so that times written with other offsets compare as text."""
        stated = temporal.get("mentioned_at")
        stated = stated if isinstance(stated, str) else created_at
        return cls(_utc(chronology_key(temporal, created_at)), _utc(stated))


def _utc(text: str) -> str:
    try:
        return iso(parse_iso(text))
    except ValueError:
        return text


def latest(
    event_ids: Iterable[str], times: Mapping[str, EventTimes]
) -> tuple[str | None, str | None]:
    """(default ``valid_from``, when stated): the latest of the sources' times."""
    found = [times[i] for i in event_ids if i in times]
    if not found:
        return None, None
    return max(t.chronology for t in found), max(t.stated for t in found)


@dataclass(frozen=True)
class Decision:
    """What writing one new fact or edge does: merge into ``merge_into`` (same statement),
    else insert it, as history when ``history`` (valid until ``history_until``), else
    superseding ``supersede``."""

    merge_into: str | None = None
    supersede: tuple[str, ...] = ()
    history: bool = False
    history_until: str | None = None


def decide(target: str, stated_at: str | None, believed: Sequence[Believed]) -> Decision:
    """The supersede-by-key rule for one new statement against the active ones with its key
    (facts) or its (from, relation) (edges). A statement made before the believed one (an
    older event projected later) does not replace it: it is history, valid until that one."""
    for old in believed:
        if old.target == target:
            return Decision(merge_into=old.id)
    later = [old for old in believed if _before(stated_at, old.stated_at)]
    if later:
        ends = [old.valid_from or old.stated_at or "" for old in later]
        return Decision(history=True, history_until=min(ends) or None)
    return Decision(supersede=tuple(old.id for old in believed))


def _before(mine: str | None, theirs: str | None) -> bool:
    return mine is not None and theirs is not None and mine < theirs


def edge_key(edge: EdgeDraft) -> tuple[str, str]:
    return edge.from_ref, edge.relation.strip()


def reason_text(warnings: Sequence[str], duplicates: Sequence[str]) -> str:
    """The job's reason (≤ 500 characters): warnings, then possible duplicates listed."""
    parts = list(warnings) + [f"possible duplicate: {line}" for line in duplicates]
    text = "; ".join(parts)
    return text if len(text) <= MAX_REASON else text[: MAX_REASON - 1] + "…"
