"""Event use cases of the façade: search, expansion, listing, and the agent's block listing.

Searching reads candidates and ranks them in one read; stamping ``last_retrieved_at`` is a
separate small write (skipped with ``track_retrieval=False``). Nothing here reinforces:
``mention_count`` and ``last_adopted_turn`` move only on adoption.
"""

import sqlite3
from collections.abc import Iterable, Sequence
from datetime import datetime
from functools import partial
from typing import Any, Literal

from pydantic import BaseModel

from ..blocks.views import block_view
from ..clock import iso, parse_iso, to_utc, utc_now
from ..errors import InvalidInput, NotFound
from ..records import BlockView, Message
from ..retrieval.query import Query, parse_query
from ..service_base import ServiceBase
from ..store import block_rows, event_rows
from ..store import event_search_rows as rows
from ..store.search_index import row_document
from . import history
from .cards import EventCard, Pool
from .ranking import (
    Document,
    EventFilters,
    EventHit,
    EventSearch,
    TemporalIntent,
    is_plain,
    page_of,
    rank_events,
    rank_plain,
)

BlockScope = Literal["session", "namespace"]
EmptyReason = Literal[
    "no_blocks_in_namespace", "blocks_exist_in_other_threads", "open_tail_pending"
]
POOLS: tuple[Pool, ...] = ("conversation", "agent")
MIN_CANDIDATES, MAX_CANDIDATES, CANDIDATES_PER_RESULT = 100, 2000, 10
NO_FILTERS = EventFilters()


class EventExpansion(BaseModel):
    """``memory_expand_event``: the full card and the messages it cites, in citation order."""

    card: EventCard
    messages: list[Message]


class BlocksReport(BaseModel):
    """``memory_get_blocks``: ready blocks at their decayed levels plus why the list is empty."""

    scope: BlockScope
    namespace: str
    thread_id: str
    blocks: list[BlockView]
    namespace_block_count: int
    namespace_thread_ids: list[str]
    open_tail_count: int
    empty_reason: EmptyReason | None

    def status(self) -> dict[str, Any]:
        """The tool's status object (camelCase keys)."""
        return {
            "scope": self.scope,
            "namespace": self.namespace,
            "threadId": self.thread_id,
            "blockCount": len(self.blocks),
            "namespaceBlockCount": self.namespace_block_count,
            "namespaceThreadIds": self.namespace_thread_ids,
            "openTailCount": self.open_tail_count,
            "emptyReason": self.empty_reason,
        }


def search_in(raw: sqlite3.Connection, namespace: str, request: EventSearch) -> list[EventHit]:
    """Candidates of both pools, ranked (runs on the database thread)."""
    unique = _candidates(raw, namespace, request)
    if is_plain(request):
        return plain_hits(raw, unique, request)
    cards = event_rows.events_from_rows(raw, unique)
    documents = rows.stored_documents(raw, unique, request.tokens) if request.tokens else {}
    return rank_events(cards, request, rows.current_turn(raw, namespace), documents)


def search_with_history(
    raw: sqlite3.Connection, namespace: str, request: EventSearch
) -> list[EventHit]:
    """``search_in`` with every superseded card folded under its newer card (``history``):
    the whole fused order is folded first, then paged, so pages agree."""
    found = {row["id"]: row for row in _candidates(raw, namespace, request)}
    order = ranked_order(raw, namespace, list(found.values()), request)
    links = supersession_links(raw, namespace, found.values(), [key for key, _ in order])
    page = page_of(history.fold(order, links), request)
    by_id = {card.id: card for card in cards_of(raw, namespace, [key for key, _ in page], found)}
    read = partial(event_rows.visible_cards, raw, namespace)
    return [
        EventHit(card=by_id[key], rank_score=score, history=history.history_of(by_id[key], read))
        for key, score in page
        if key in by_id
    ]


def _candidates(raw: sqlite3.Connection, namespace: str, request: EventSearch) -> list[sqlite3.Row]:
    pools = POOLS if request.agent_lane_weight > 0 else POOLS[:1]
    found = candidate_rows(raw, namespace, pools, request)
    return list({row["id"]: row for row in found}.values())


def ranked_order(
    raw: sqlite3.Connection, namespace: str, found: Sequence[sqlite3.Row], request: EventSearch
) -> list[tuple[str, float]]:
    """Every fused (id, score), unpaged."""
    if is_plain(request):
        return rank_plain(_plain_documents(raw, found, request), request, paged=False)
    cards = event_rows.events_from_rows(raw, list(found))
    documents = rows.stored_documents(raw, found, request.tokens) if request.tokens else {}
    turn = rows.current_turn(raw, namespace)
    hits = rank_events(cards, request, turn, documents, paged=False)
    return [(hit.card.id, hit.rank_score) for hit in hits]


def supersession_links(
    raw: sqlite3.Connection,
    namespace: str,
    found: Iterable[sqlite3.Row],
    ids: Sequence[str],
) -> dict[str, str | None]:
    """``superseded_by`` of the ranked cards and of every visible card up their chains (a
    superseder that is no longer visible stays out, so the chain ends before it)."""
    links = {row["id"]: _newer(row) for row in found}
    asked: set[str] = set()
    missing = history.unknown_links(ids, links)
    for _ in range(history.MAX_CHAIN):
        missing -= asked
        if not missing:
            break
        asked |= missing
        read = event_rows.visible_rows(raw, namespace, sorted(missing))
        links.update({row["id"]: _newer(row) for row in read})
        missing = history.unknown_links([row["id"] for row in read], links)
    return links


def _newer(row: sqlite3.Row) -> str | None:
    return row["superseded_by"] if row["status"] == "superseded" else None


def cards_of(
    raw: sqlite3.Connection,
    namespace: str,
    ids: Sequence[str],
    known: dict[str, sqlite3.Row],
) -> list[EventCard]:
    """The cards of ``ids``, from the candidate rows or read (a head outside them)."""
    missing = [key for key in ids if key not in known]
    read = {row["id"]: row for row in event_rows.visible_rows(raw, namespace, missing)}
    rows_in_order = [known.get(key) or read.get(key) for key in ids]
    return event_rows.events_from_rows(raw, [row for row in rows_in_order if row is not None])


def plain_hits(
    raw: sqlite3.Connection, found: Sequence[sqlite3.Row], request: EventSearch
) -> list[EventHit]:
    """A plain query ranked from stored documents; cards are built for the page only."""
    page = rank_plain(_plain_documents(raw, found, request), request)
    by_id = {row["id"]: row for row in found}
    cards = event_rows.events_from_rows(raw, [by_id[key] for key, _ in page])
    return [
        EventHit(card=card, rank_score=score) for card, (_, score) in zip(cards, page, strict=True)
    ]


def _plain_documents(
    raw: sqlite3.Connection, found: Sequence[sqlite3.Row], request: EventSearch
) -> dict[str, dict[str, Document]]:
    """Each pool's BM25 documents: stored ones, else tokenised from the row."""
    pools: dict[str, dict[str, Document]] = {}
    stored = rows.stored_documents(raw, found, request.tokens)
    for row in found:
        document = stored.get(row["id"]) or row_document(row)
        pools.setdefault(row["pool"], {})[row["id"]] = document
    return pools


def candidate_rows(
    raw: sqlite3.Connection, namespace: str, pools: Sequence[str], request: EventSearch
) -> list[sqlite3.Row]:
    """Scope ids, or lexical ∪ structured matches, or (no query, no filter) whole pools."""
    filters = request.filters
    checks = filters.checks()
    if filters.event_ids is not None:
        return [r for p in pools for r in rows.pool_rows(raw, namespace, p, filters.event_ids)]
    if not request.tokens and not checks:
        return [r for p in pools for r in rows.pool_rows(raw, namespace, p)]
    cap = min(MAX_CANDIDATES, max(MIN_CANDIDATES, request.lane * CANDIDATES_PER_RESULT))
    found = rows.lexical_rows(raw, namespace, pools, request.tokens, cap)
    if checks:
        keep = filters.any_check()
        found += [r for p in pools for r in rows.structured_rows(raw, namespace, p, keep)]
    return found


def _moment(label: str, value: datetime | str | None) -> datetime | None:
    if value is None or isinstance(value, datetime):
        return None if value is None else to_utc(value)
    try:
        return parse_iso(value)
    except ValueError as error:
        raise InvalidInput(f"{label} must be an ISO-8601 date or time, got {value!r}") from error


def _intent(value: str | None) -> TemporalIntent | None:
    if value is None:
        return None
    if value not in ("first", "latest"):
        raise InvalidInput("temporal_intent must be 'first' or 'latest'")
    return "first" if value == "first" else "latest"


def blocks_report(
    raw: sqlite3.Connection, namespace: str, thread_id: str, scope: BlockScope
) -> BlocksReport:
    listed = block_rows.list_blocks(raw, namespace, thread_id if scope == "session" else None)
    views = [
        block_view(block_rows.block_parts(raw, b)) for b in listed if b.processing_status == "ready"
    ]
    total, thread_ids = rows.thread_status(raw, namespace)
    tail = rows.open_tail_count(raw, namespace, thread_id if scope == "session" else None)
    return BlocksReport(
        scope=scope,
        namespace=namespace,
        thread_id=thread_id,
        blocks=views,
        namespace_block_count=total,
        namespace_thread_ids=thread_ids,
        open_tail_count=tail,
        empty_reason=empty_reason(len(views), total, tail),
    )


def empty_reason(shown: int, namespace_blocks: int, open_tail: int) -> EmptyReason | None:
    """Why nothing is shown: an unsealed tail first, then where blocks do exist."""
    if shown:
        return None
    if open_tail:
        return "open_tail_pending"
    return "blocks_exist_in_other_threads" if namespace_blocks else "no_blocks_in_namespace"


class EventsService(ServiceBase):
    """Event cards: search (what the search tool, ``retrieve()`` and recall share),
    expansion, listing, agent blocks."""

    async def ranked(
        self,
        namespace: str,
        query: Query,
        *,
        limit: int,
        agent_weight: float,
        offset: int = 0,
        filters: EventFilters = NO_FILTERS,
        track_retrieval: bool = True,
    ) -> list[EventHit]:
        """Spec §6.4 event search of ``query.terms`` under ``filters``; never reinforces.

        A superseded card is folded under the card that replaced it (``history.py``)."""
        request = EventSearch(query.terms, limit, offset, filters, agent_weight)
        hits = await self.db.read(lambda raw: search_with_history(raw, namespace, request))
        if track_retrieval and hits:
            ids = [hit.card.id for hit in hits]
            now = iso(utc_now())
            await self.db.write(lambda raw: rows.stamp_retrieved(raw, ids, now))
        return hits

    async def search(
        self,
        namespace: str,
        query: str,
        *,
        limit: int = 6,
        offset: int = 0,
        participants: Sequence[str] = (),
        event_type: str | None = None,
        happened_from: datetime | str | None = None,
        happened_to: datetime | str | None = None,
        temporal_intent: TemporalIntent | None = None,
        track_retrieval: bool = True,
    ) -> list[EventHit]:
        """Spec §6.4: BM25 + structured rankings over both pools, the agent pool weighted."""
        filters = EventFilters(
            participants=tuple(p for p in participants if p.strip()),
            event_type=event_type,
            happened_from=_moment("happened_from", happened_from),
            happened_to=_moment("happened_to", happened_to),
            temporal_intent=_intent(temporal_intent),
        )
        return await self.ranked(
            namespace,
            parse_query(query),
            limit=limit,
            agent_weight=self.config.agent_memory_weight,
            offset=offset,
            filters=filters,
            track_retrieval=track_retrieval,
        )

    async def expand(self, event_id: str, *, include_hidden: bool = False) -> EventExpansion:
        """The full card with its source messages; forgotten/archived events are not found."""

        def read(raw: sqlite3.Connection) -> EventExpansion:
            card = event_rows.get_event(raw, event_id)
            if card.status not in event_rows.VISIBLE and not include_hidden:
                raise NotFound(f"event {event_id!r} is {card.status}")
            return EventExpansion(card=card, messages=rows.source_messages(raw, event_id))

        return await self.db.read(read)

    async def agent_blocks(
        self, namespace: str, thread_id: str, scope: BlockScope = "session"
    ) -> BlocksReport:
        """Ready blocks (this thread, or the namespace) at decayed levels, with status counts."""
        if scope not in ("session", "namespace"):
            raise InvalidInput("scope must be 'session' or 'namespace'")
        return await self.db.read(lambda raw: blocks_report(raw, namespace, thread_id, scope))

    async def cards(
        self,
        namespace: str | None = None,
        *,
        block_id: str | None = None,
        include_hidden: bool = False,
        limit: int = 1000,
        offset: int = 0,
    ) -> list[EventCard]:
        statuses = event_rows.VISIBLE + (("forgotten", "archived") if include_hidden else ())
        return await self.db.read(
            lambda raw: event_rows.list_events(raw, namespace, statuses, block_id, limit, offset)
        )

    async def get(self, event_id: str) -> EventCard:
        return await self.db.read(lambda raw: event_rows.get_event(raw, event_id))
