"""Event retrieval use cases over an open database: search, expand, and the block listing.

Searching reads candidates and ranks them in one read; stamping ``last_retrieved_at`` is a
separate small write (skipped with ``track_retrieval=False``). Nothing here reinforces:
``mention_count`` and ``last_adopted_turn`` move only on adoption.
"""

import sqlite3
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel

from ..blocks.service import block_view
from ..clock import iso, parse_iso, to_utc, utc_now
from ..errors import InvalidInput, NotFound
from ..records import BlockView, Message
from ..service_base import ServiceBase
from ..store import Database, block_rows, event_rows
from ..store import event_queries_rows as rows
from ..store.search_index import row_document
from ..text.search_terms import query_tokens
from .cards import EventCard, Pool
from .ranking import (
    Document,
    EventFilters,
    EventHit,
    EventSearch,
    TemporalIntent,
    is_plain,
    rank_events,
    rank_plain,
)

BlockScope = Literal["session", "namespace"]
EmptyReason = Literal[
    "no_blocks_in_namespace", "blocks_exist_in_other_threads", "open_tail_pending"
]
POOLS: tuple[Pool, ...] = ("conversation", "agent")
MIN_CANDIDATES, MAX_CANDIDATES, CANDIDATES_PER_RESULT = 100, 2000, 10


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


async def search_events(
    db: Database,
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
    event_ids: Iterable[str] | None = None,
    agent_weight: float = 1.0,
    track_retrieval: bool = True,
) -> list[EventHit]:
    """Spec §6.4 event search; ``event_ids`` is a hard scope (topic browsing)."""
    filters = EventFilters(
        participants=tuple(p for p in participants if p.strip()),
        event_type=event_type,
        happened_from=_moment("happened_from", happened_from),
        happened_to=_moment("happened_to", happened_to),
        temporal_intent=_intent(temporal_intent),
        event_ids=None if event_ids is None else frozenset(event_ids),
    )
    request = EventSearch(tuple(query_tokens(query)), limit, offset, filters, agent_weight)
    hits = await db.read(lambda raw: search_in(raw, namespace, request))
    if track_retrieval and hits:
        await stamp_retrieval(db, [hit.card.id for hit in hits])
    return hits


async def stamp_retrieval(db: Database, event_ids: Sequence[str]) -> None:
    now = iso(utc_now())
    await db.write(lambda raw: rows.stamp_retrieved(raw, event_ids, now))


def search_in(raw: sqlite3.Connection, namespace: str, request: EventSearch) -> list[EventHit]:
    """Candidates of both pools, ranked (runs on the database thread)."""
    pools = POOLS if request.agent_lane_weight > 0 else POOLS[:1]
    found = candidate_rows(raw, namespace, pools, request)
    unique = list({row["id"]: row for row in found}.values())
    if is_plain(request):
        return plain_hits(raw, unique, request)
    cards = event_rows.events_from_rows(raw, unique)
    documents = rows.stored_documents(raw, unique, request.tokens) if request.tokens else {}
    return rank_events(cards, request, rows.current_turn(raw, namespace), documents)


def plain_hits(
    raw: sqlite3.Connection, found: Sequence[sqlite3.Row], request: EventSearch
) -> list[EventHit]:
    """A plain query ranked from stored documents; cards are built for the page only."""
    pools: dict[str, dict[str, Document]] = {}
    stored = rows.stored_documents(raw, found, request.tokens)
    for row in found:
        document = stored.get(row["id"]) or row_document(row)
        pools.setdefault(row["pool"], {})[row["id"]] = document
    page = rank_plain(pools, request)
    by_id = {row["id"]: row for row in found}
    cards = event_rows.events_from_rows(raw, [by_id[key] for key, _ in page])
    return [
        EventHit(card=card, rank_score=score) for card, (_, score) in zip(cards, page, strict=True)
    ]


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


async def expand_event(
    db: Database, event_id: str, *, include_hidden: bool = False
) -> EventExpansion:
    """The full card with its source messages; forgotten/archived events are not found."""

    def query(raw: sqlite3.Connection) -> EventExpansion:
        card = event_rows.get_event(raw, event_id)
        if card.status not in event_rows.VISIBLE and not include_hidden:
            raise NotFound(f"event {event_id!r} is {card.status}")
        return EventExpansion(card=card, messages=rows.source_messages(raw, event_id))

    return await db.read(query)


async def get_blocks(
    db: Database, namespace: str, thread_id: str, *, scope: BlockScope = "session"
) -> BlocksReport:
    """Ready blocks (this thread, or the namespace) at decayed levels, with status counts."""
    if scope not in ("session", "namespace"):
        raise InvalidInput("scope must be 'session' or 'namespace'")
    return await db.read(lambda raw: blocks_report(raw, namespace, thread_id, scope))


def blocks_report(
    raw: sqlite3.Connection, namespace: str, thread_id: str, scope: BlockScope
) -> BlocksReport:
    listed = block_rows.list_blocks(raw, namespace, thread_id if scope == "session" else None)
    views = [block_view(raw, b) for b in listed if b.processing_status == "ready"]
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
    """Event use cases of the ``StrataGate`` façade: search, expansion, agent block listing."""
