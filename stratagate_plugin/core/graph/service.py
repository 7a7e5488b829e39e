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
import sqlite3
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
from ..store import (
    Database,
    derivation_marks,
    event_rows,
    graph_jobs,
    graph_reads,
    graph_writes,
    jobs,
)
from ..text.search_terms import query_tokens
from .projection import EventTimes, reason_text, validate_projection
from .resolution import normalise_key
from .search import DEFAULT_LIMIT, MAX_LIMIT, GraphHit, search_nodes
from .shapes import NODE_TYPES, GraphProjection, PossibleDuplicate
from .views import Moment, NodeView, cited_event_ids

LOST = "lost"
CONTEXT_NODES, RECENT_NODES = 32, 24
LISTING_PAGE = 100
NODE_HISTORY = 1000  # replaced statements one node's detail shows
CANDIDATES_PER_RESULT, CANDIDATE_FLOOR = 3, 16


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


def search_graph_in(
    raw: sqlite3.Connection, namespace: str, query: str, limit: int, when: Moment
) -> list[GraphHit]:
    """§6.5 over the nodes sharing a term with the query (read inside a caller's read)."""
    terms = query_tokens(query)
    ids = graph_reads.candidates(raw, namespace, terms, candidate_cap(limit))
    return search_nodes(terms, graph_reads.views(raw, ids, when), limit)


def candidate_cap(limit: int) -> int:
    """Nodes read and ranked for ``limit`` results: three times as many (at least 16), by
    shared query terms then importance. Reading a node's view is the search's cost, so the
    cap follows what is asked (24 for the default 8, 60 for the largest 20), not a constant."""
    return max(CANDIDATE_FLOOR, CANDIDATES_PER_RESULT * min(max(limit, 1), MAX_LIMIT))


class GraphService(ServiceBase):
    """The knowledge graph on the ``StrataGate`` façade."""

    async def search(
        self,
        namespace: str,
        query: str,
        limit: int = DEFAULT_LIMIT,
        as_of: datetime | str | None = None,
    ) -> list[GraphHit]:
        """Nodes matching ``query`` (BM25 over names, facts, relations), now or as of a date."""
        when = moment(as_of)

        def read(raw: sqlite3.Connection) -> list[GraphHit]:
            hits = search_graph_in(raw, namespace, query, limit, when)
            views = graph_reads.with_fields_sources(raw, [hit.view for hit in hits])
            return [hit.model_copy(update={"view": v}) for hit, v in zip(hits, views, strict=True)]

        return await self.db.read(read)

    async def node(
        self, node_id: str, as_of: datetime | str | None = None, valid_at: str | None = None
    ) -> NodeView:
        """One node: current and historical facts, edges both ways, validity, source events,
        and the events behind each alias and tag."""
        when = moment(as_of, valid_at)

        def read(raw: sqlite3.Connection) -> NodeView | None:
            found = graph_reads.views(raw, [node_id], when, NODE_HISTORY)
            return graph_reads.with_field_sources(raw, found[0]) if found else None

        view = await self.db.read(read)
        if view is None:
            raise NotFound(f"no graph node with id {node_id!r}")
        return view

    async def nodes(
        self,
        namespace: str,
        type: str | None = None,
        offset: int = 0,
        limit: int = LISTING_PAGE,
        as_of: datetime | str | None = None,
    ) -> list[NodeView]:
        """Nodes by importance (how many events they cite): the first 100, then more."""
        if type is not None and type not in NODE_TYPES:
            raise InvalidInput(f"unknown node type {type!r}: use {', '.join(NODE_TYPES)}")
        if offset < 0 or not 1 <= limit <= 1000:
            raise InvalidInput("offset must be ≥ 0 and limit 1–1000")
        when = moment(as_of)
        bound = iso(when.as_of) if when.as_of else None

        def read(raw: sqlite3.Connection) -> list[NodeView]:
            ids = graph_reads.top_node_ids(raw, namespace, type, offset, limit, bound)
            return graph_reads.with_fields_sources(raw, graph_reads.views(raw, ids, when))

        return await self.db.read(read)

    async def source_events(self, view: NodeView, limit: int = 12) -> list[EventCard]:
        """The first ``limit`` visible events a node's card cites (its facts', relations',
        aliases' and own sources, in that order): their titles, quotes and messages, so
        sources read as words. Bounded: a card is a tool result (the page asks for more)."""
        ids = cited_event_ids(view, limit)

        def read(raw: sqlite3.Connection) -> list[EventCard]:
            cards = {c.id: c for c in event_rows.visible_cards(raw, view.node.namespace, ids)}
            return [cards[i] for i in ids if i in cards]

        return await self.db.read(read)

    async def duplicates(self, namespace: str) -> list[PossibleDuplicate]:
        """Nodes kept apart whose names nearly match (listed for a person to judge)."""
        rows = await self.db.read(lambda raw: graph_reads.duplicates(raw, namespace))
        return [PossibleDuplicate(node_id=r[0], other_id=r[1], reason=r[2]) for r in rows]

    async def backfill(self) -> int:
        """Queue every visible event no projection batch holds yet; how many (one read when
        there is nothing to do, so an open takes no write lock)."""
        if not await self.db.read(graph_jobs.backfill_due):
            return 0
        now = iso(utc_now())
        return await self.db.write(lambda raw: graph_jobs.backfill(raw, now))


class Projector:
    """Runs one claimed graph job: the offline projector, or ``model`` when given, with
    ``fallback`` answering when the model fails (``derivation/fallback.py``)."""

    def __init__(
        self,
        db: Database,
        model: StructuredModel | None,
        clock: Callable[[], datetime],
        fallback: StructuredModel | None = None,
    ) -> None:
        self.db, self.model, self.clock, self.fallback = db, model, clock, fallback

    async def run(self, job: Job) -> tuple[str, str | None]:
        """The job's outcome, and the model's error when the offline projector answered."""
        payload, batch = await self.db.read(lambda raw: _payload(raw, job.target_id))
        answer = await self._projection(payload)
        projection = answer.result
        times = {e["id"]: EventTimes(e["chronology"], e["stated"]) for e in payload["events"]}
        moment_ = self.clock()

        def commit(raw: sqlite3.Connection) -> str:
            if not jobs.holds(raw, job):
                return LOST
            status = graph_reads.event_statuses(raw, batch)
            exposable = [i for i, s in status.items() if s in ("active", "superseded")]
            active = [i for i, s in status.items() if s == "active"]
            checked = validate_projection(projection, batch, exposable, active)
            namespace = graph_jobs.batch_namespace(raw, job.target_id)
            applied = graph_writes.apply_projection(raw, namespace, checked, times, iso(moment_))
            graph_writes.write_back(raw, batch)
            reason = reason_text(checked.warnings, applied.duplicates)
            graph_jobs.finish_batch(raw, job.target_id, applied.node_ids, applied.edge_ids, reason)
            done = "succeeded" if applied.node_ids else "skipped"
            detail = f"{len(applied.node_ids)} nodes, {len(applied.edge_ids)} edges"
            jobs.finish(raw, job.id, done, moment_, detail + (f"; {reason}" if reason else ""))
            derivation_marks.mark_job(raw, job.id, answer.derived_by, answer.error)
            return done

        return await self.db.write(commit), answer.error

    async def _projection(self, payload: dict[str, Any]) -> Derived[GraphProjection]:
        if self.model is None:
            projection = await asyncio.to_thread(project_graph, payload)  # off the loop
            return Derived(projection, "offline")
        task = StructuredTask(PROJECT_GRAPH, GraphProjection, load_prompt(PROJECT_GRAPH), payload)

        async def accept(projection: GraphProjection) -> GraphProjection:
            return projection

        return await derive(self.model, task, accept, self.fallback)


def _payload(raw: sqlite3.Connection, batch_id: str) -> tuple[dict[str, Any], list[str]]:
    batch = graph_jobs.batch_events(raw, batch_id)
    namespace = graph_jobs.batch_namespace(raw, batch_id)
    cards = event_rows.visible_cards(raw, namespace, batch)
    events = [_event_entry(card) for card in cards]
    payload = {"batch_id": batch_id, "events": events, "nodes": _context(raw, namespace, cards)}
    return payload | {"kin": _kin(raw, namespace, cards)}, batch


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


def _kin(raw: sqlite3.Connection, namespace: str, cards: list[EventCard]) -> list[dict[str, str]]:
    """The kinship edges of the batch's speakers (its participants and the user) already in
    the graph, so "my sister" in this batch can be the sister an earlier one named."""
    keys = {normalise_key(p) for card in cards for p in card.temporal.get("participants", [])}
    keys.add(normalise_key(USER))
    people = [
        k.node_id for k in graph_reads.known_by_keys(raw, namespace, keys) if k.type == "person"
    ]
    found = graph_reads.kin_edges(raw, people, KIN_RELATIONS)
    return [{"from": one, "relation": relation, "to": other} for one, relation, other in found]


def _context(
    raw: sqlite3.Connection, namespace: str, cards: list[EventCard]
) -> list[dict[str, Any]]:
    """Existing nodes the batch names (by participant), then the most recently updated;
    at most 32 (the model reuses their names)."""
    keys = {normalise_key(p) for card in cards for p in card.temporal.get("participants", [])}
    named = [k.node_id for k in graph_reads.known_by_keys(raw, namespace, keys)]
    recent = graph_reads.recent_node_ids(raw, namespace, RECENT_NODES)
    ids = list(dict.fromkeys([*named, *recent]))[:CONTEXT_NODES]
    return [
        {"id": n.id, "name": n.name, "type": n.type, "aliases": list(n.aliases)}
        for n in graph_reads.nodes(raw, ids)
    ]
