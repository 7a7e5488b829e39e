"""Graph use cases of the façade: search, a node, the importance listing, near duplicates,
back-fill, and running one projection job (the derivation worker's graph step).

A projection job reads its batch's events, asks the projector outside any transaction —
the embedded offline projector by default, the model through the ``PROJECT_GRAPH``
structured task when configured — and commits in one transaction that first checks the
claim, validates the answer against the events' status *then* (a projection citing no
exposable event of its batch fails the job, nothing written), applies it, writes each
event's node ids back onto it and finishes the job.
"""

import asyncio
from collections.abc import Callable
from datetime import datetime
from typing import Any

from ..clock import iso, parse_iso, utc_now
from ..derivation.fallback import Derived, derive
from ..errors import InvalidInput, NotFound
from ..events.cards import EventCard
from ..llm.base import StructuredModel, StructuredTask
from ..llm.offline.graph import USER, project_graph
from ..llm.offline.roles import KIN_RELATIONS
from ..llm.prompts import load_prompt
from ..llm.tasks import PROJECT_GRAPH
from ..records import Job
from ..service_base import ServiceBase
from ..text.search_terms import query_tokens
from .apply import apply_projection
from .projection import EventTimes, reason_text, validate_projection
from .search import DEFAULT_LIMIT, GraphHit, candidate_cap, search_nodes
from .shapes import NODE_TYPES, GraphProjection, PossibleDuplicate, RecordParts
from .storage import GraphStorage, GraphTransaction, ProjectionBatch, Written
from .views import Moment, NodeView, assemble, cited_event_ids

LOST = "lost"
CONTEXT_NODES, RECENT_NODES = 32, 24
LISTING_PAGE = 100
NODE_HISTORY = 1000  # replaced statements one node's detail shows


def moment(as_of: datetime | str | None, valid_at: str | None = None) -> Moment:
    """A reading moment from a date or time (a bare date means the end of that day, UTC)."""
    if as_of is None:
        return Moment(valid_at=valid_at)
    if isinstance(as_of, datetime):
        return Moment(as_of, valid_at)
    text = as_of.strip()
    try:
        when = parse_iso(text + "T23:59:59.999999+00:00" if len(text) == 10 else text)
    except ValueError:
        raise InvalidInput(f"not a date or ISO-8601 time: {as_of!r}") from None
    return Moment(when, valid_at)


class GraphService(ServiceBase):
    """The knowledge graph on the ``StrataGate`` façade."""

    @property
    def store(self) -> GraphStorage:
        return self.storage.graph

    async def search(
        self,
        space: str,
        query: str,
        limit: int = DEFAULT_LIMIT,
        as_of: datetime | str | None = None,
    ) -> list[GraphHit]:
        """Nodes matching ``query`` (BM25 over names, facts, relations), now or as of a date."""
        terms = query_tokens(query)
        when = moment(as_of)
        found = await self.store.search_records(space, terms, candidate_cap(limit), when.as_of)
        return search_nodes(terms, assemble(found, when), limit)

    async def node(
        self, node_id: str, as_of: datetime | str | None = None, valid_at: str | None = None
    ) -> NodeView:
        """One node: current and historical facts, edges both ways, validity, source events,
        and the events behind each alias and tag."""
        when = moment(as_of, valid_at)
        views = assemble(await self.store.node_records(node_id, when.as_of, NODE_HISTORY), when)
        if not views:
            raise NotFound(f"no graph node with id {node_id!r}")
        return views[0]

    async def nodes(
        self,
        space: str,
        type: str | None = None,
        offset: int = 0,
        limit: int = LISTING_PAGE,
        as_of: datetime | str | None = None,
        parts: RecordParts = "all",
    ) -> list[NodeView]:
        """Nodes by importance (how many events they cite): the first 100, then more.
        ``parts`` says what their views hold: ``all``; ``edges`` (no facts, no fields'
        sources: the canvas draws nodes and edges); ``nodes`` (only the node and its
        importance: the graph page lists names). What is not read is empty, not absent."""
        if type is not None and type not in NODE_TYPES:
            raise InvalidInput(f"unknown node type {type!r}: use {', '.join(NODE_TYPES)}")
        if offset < 0 or not 1 <= limit <= 1000:
            raise InvalidInput("offset must be ≥ 0 and limit 1–1000")
        when = moment(as_of)
        found = await self.store.top_records(space, type, (offset, limit), when.as_of, parts)
        return assemble(found, when)

    async def source_events(self, view: NodeView, limit: int = 12) -> list[EventCard]:
        """The first ``limit`` visible events a node's card cites (its facts', relations',
        aliases' and own sources, in that order): their titles, quotes and messages, so
        sources read as words. Bounded: a card is a tool result (the page asks for more)."""
        ids = cited_event_ids(view, limit)
        cards = {c.id: c for c in await self.store.visible_cards(view.node.namespace, ids)}
        return [cards[i] for i in ids if i in cards]

    async def duplicates(self, space: str) -> list[PossibleDuplicate]:
        """Nodes kept apart whose names nearly match (listed for a person to judge)."""
        rows = await self.store.duplicates(space)
        return [PossibleDuplicate(node_id=r[0], other_id=r[1], reason=r[2]) for r in rows]

    async def backfill(self) -> int:
        """Queue every visible event no projection batch holds yet; how many (one read when
        there is nothing to do, so an open takes no write lock)."""
        if not await self.store.backfill_due():
            return 0
        return await self.store.backfill(iso(utc_now()))


class Projector:
    """Runs one claimed graph job: the offline projector, or ``model`` when given, with
    ``fallback`` answering when the model fails (``derivation/fallback.py``)."""

    def __init__(
        self,
        store: GraphStorage,
        model: StructuredModel | None,
        clock: Callable[[], datetime],
        fallback: StructuredModel | None = None,
    ) -> None:
        self.store, self.model, self.clock, self.fallback = store, model, clock, fallback

    async def run(self, job: Job) -> tuple[str, str | None]:
        """The job's outcome, and the model's error when the offline projector answered."""
        given = await self.store.batch(
            job.target_id, USER, KIN_RELATIONS, (RECENT_NODES, CONTEXT_NODES)
        )
        payload = _payload(job.target_id, given)
        answer = await self._projection(payload)
        projection = answer.result
        times = {e["id"]: EventTimes(e["chronology"], e["stated"]) for e in payload["events"]}
        moment_ = self.clock()
        batch = given.event_ids

        def commit(tx: GraphTransaction) -> str:
            if not tx.holds(job):
                return LOST
            status = tx.event_statuses(batch)
            exposable = [i for i, s in status.items() if s in ("active", "superseded")]
            active = [i for i, s in status.items() if s == "active"]
            checked = validate_projection(projection, batch, exposable, active)
            space = tx.batch_space(job.target_id)
            applied = apply_projection(tx, space, checked, times, iso(moment_))
            tx.write_back(batch)
            reason = reason_text(checked.warnings, applied.duplicates)
            done = "succeeded" if applied.node_ids else "skipped"
            detail = f"{len(applied.node_ids)} nodes, {len(applied.edge_ids)} edges"
            detail += f"; {reason}" if reason else ""
            written = Written(applied.node_ids, applied.edge_ids, reason)
            tx.finish(job, (done, detail), written, moment_)
            tx.mark_job(job.id, answer.derived_by, answer.error)
            return done

        return await self.store.project(commit), answer.error

    async def _projection(self, payload: dict[str, Any]) -> Derived[GraphProjection]:
        if self.model is None:
            projection = await asyncio.to_thread(project_graph, payload)  # off the loop
            return Derived(projection, "offline")
        task = StructuredTask(PROJECT_GRAPH, GraphProjection, load_prompt(PROJECT_GRAPH), payload)

        async def accept(projection: GraphProjection) -> GraphProjection:
            return projection

        return await derive(self.model, task, accept, self.fallback)


def _payload(batch_id: str, given: ProjectionBatch) -> dict[str, Any]:
    events = [_event_entry(card) for card in given.cards]
    nodes = [
        {"id": n.id, "name": n.name, "type": n.type, "aliases": list(n.aliases)}
        for n in given.context
    ]
    kin = [{"from": one, "relation": relation, "to": other} for one, relation, other in given.kin]
    return {"batch_id": batch_id, "events": events, "nodes": nodes, "kin": kin}


def _event_entry(card: EventCard) -> dict[str, Any]:
    temporal = card.temporal
    entry: dict[str, Any] = {
        "id": card.id,
        "title": card.title,
        "summary": card.summary,
        "tags": card.tags,
        "quotes": card.quotes,
        "participants": temporal.get("participants", []),
        "event_type": temporal.get("event_type", "other"),
        "status": temporal.get("status", "unknown"),
        "criticality": card.criticality,
        "created_at": iso(card.created_at),
    }
    times = EventTimes.of(temporal, iso(card.created_at))
    entry |= {"chronology": times.chronology, "stated": times.stated}
    for key in ("mentioned_at", "happened_start"):
        if key in temporal:
            entry[key] = temporal[key]
    return entry
