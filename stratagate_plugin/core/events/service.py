"""Event use cases: search, expansion, listing, and the agent's block listing.

Searching reads candidates, ranks them, folds superseded cards under their newer ones and
pages (``search``) in one consistent read of ``EventsStorage``; ``last_retrieved_at`` is
stamped behind it (``stamps.py``: the search never waits for a write; skipped with
``track_retrieval=False``).
Nothing here reinforces: ``mention_count`` and ``last_adopted_turn`` move only on adoption.
"""

from collections.abc import Sequence
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel

from ..blocks.service import RECENT_BLOCKS, BlocksService
from ..clock import iso, parse_iso, to_utc, utc_now
from ..errors import InvalidInput, NotFound
from ..records import BlockView, Message
from ..retrieval.query import Query, parse_query
from ..service_base import EngineParts, ServiceBase
from .cards import EventCard
from .ranking import EventFilters, EventHit, EventSearch, TemporalIntent
from .search import search_with_history
from .stamps import RetrievalStamps
from .storage import EventsStorage

VISIBLE = ("active", "superseded")
BlockScope = Literal["session", "namespace"]
EmptyReason = Literal[
    "no_blocks_in_namespace", "blocks_exist_in_other_threads", "open_tail_pending"
]
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
    offset: int = 0
    """Newest ready blocks skipped (the list holds up to ``RECENT_BLOCKS`` after them)."""
    omitted_block_count: int = 0
    """Ready blocks in scope older than the list (the next page's, and beyond)."""
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
            "offset": self.offset,
            "omittedBlockCount": self.omitted_block_count,
            "namespaceBlockCount": self.namespace_block_count,
            "namespaceThreadIds": self.namespace_thread_ids,
            "openTailCount": self.open_tail_count,
            "emptyReason": self.empty_reason,
        }


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


def empty_reason(shown: int, space_blocks: int, open_tail: int) -> EmptyReason | None:
    """Why nothing is shown: an unsealed tail first, then where blocks do exist."""
    if shown:
        return None
    if open_tail:
        return "open_tail_pending"
    return "blocks_exist_in_other_threads" if space_blocks else "no_blocks_in_namespace"


class EventsService(ServiceBase):
    """Event cards: search (what the search tool, ``retrieve()`` and recall share),
    expansion, listing, agent blocks (rendered by the blocks capability)."""

    def __init__(self, parts: EngineParts, blocks: BlocksService) -> None:
        super().__init__(parts)
        self.blocks = blocks
        self.stamps = RetrievalStamps(self.store.stamp_retrieved)

    @property
    def store(self) -> EventsStorage:
        return self.storage.events

    async def ranked(
        self,
        space: str,
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
        hits = await self.store.read(lambda reader: search_with_history(reader, space, request))
        if track_retrieval:
            self.note_found(hits)
        return hits

    def note_found(self, hits: Sequence[EventHit]) -> None:
        """Stamp these hits' events as retrieved now, behind the caller (``stamps.py``)."""
        if hits:
            self.stamps.note([hit.card.id for hit in hits], iso(utc_now()))

    async def search(
        self,
        space: str,
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
            space,
            parse_query(query),
            limit=limit,
            agent_weight=self.config.agent_memory_weight,
            offset=offset,
            filters=filters,
            track_retrieval=track_retrieval,
        )

    async def expand(self, event_id: str, *, include_hidden: bool = False) -> EventExpansion:
        """The full card with its source messages; forgotten/archived events are not found."""
        card, messages = await self.store.expansion(event_id)
        if card.status not in VISIBLE and not include_hidden:
            raise NotFound(f"event {event_id!r} is {card.status}")
        return EventExpansion(card=card, messages=messages)

    async def agent_blocks(
        self,
        space: str,
        thread_id: str,
        scope: BlockScope = "session",
        limit: int = RECENT_BLOCKS,
        offset: int = 0,
    ) -> BlocksReport:
        """Up to ``limit`` ready blocks (this thread, or the namespace) at decayed levels,
        newest first after the ``offset`` newest, shown oldest first; how many older ones
        were left out, and status counts."""
        if scope not in ("session", "namespace"):
            raise InvalidInput("scope must be 'session' or 'namespace'")
        thread = thread_id if scope == "session" else None
        if offset < 0:
            raise InvalidInput("offset must be 0 or more")
        views, ready = await self.blocks.recent_views(space, thread, limit, offset)
        counts = await self.store.block_counts(space, thread)
        return BlocksReport(
            scope=scope,
            namespace=space,
            thread_id=thread_id,
            blocks=views,
            offset=offset,
            omitted_block_count=max(0, ready - offset - len(views)),
            namespace_block_count=counts.namespace_block_count,
            namespace_thread_ids=counts.namespace_thread_ids,
            open_tail_count=counts.open_tail_count,
            empty_reason=empty_reason(
                len(views), counts.namespace_block_count, counts.open_tail_count
            ),
        )

    async def cards(
        self,
        space: str | None = None,
        *,
        block_id: str | None = None,
        include_hidden: bool = False,
        limit: int = 1000,
        offset: int = 0,
    ) -> list[EventCard]:
        statuses = VISIBLE + (("forgotten", "archived") if include_hidden else ())
        return await self.store.cards(space, statuses, block_id, limit, offset)

    async def get(self, event_id: str) -> EventCard:
        return await self.store.card(event_id)
