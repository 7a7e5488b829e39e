"""Timeline use cases: the filtered listing, one event's story, the conflicts.

Each is one read of ``TimelineStorage``; weights are computed here with
``events.weights`` at the space's current turn (browsing never reinforces or stamps).
"""

from pydantic import BaseModel, ConfigDict

from ..curation.actions import event_details
from ..curation.records import EventBrief, EventDetails, MessageCard
from ..events.cards import EventCard
from ..events.weights import card_weight
from ..service_base import ServiceBase
from .filters import PAGE_SIZE, TimelineFilter
from .storage import TimelineStorage
from .trajectory import WeightPoint, weight_trajectory

CONFLICT_PAGE = 20


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True)


class TimelineEntry(_Frozen):
    """One row of the timeline: the card, when it stands in time, its weight now."""

    card: EventCard
    chronology: str
    weight: float


class TimelinePage(_Frozen):
    entries: list[TimelineEntry]
    offset: int
    limit: int
    has_more: bool
    current_turn: int


class TimelineDetail(_Frozen):
    """An event's details with its weight now and over turns, and its versions oldest first."""

    details: EventDetails
    current_turn: int
    weight: float
    trajectory: list[WeightPoint]
    versions: list[EventBrief]


class ConflictSide(_Frozen):
    card: EventCard
    sources: list[MessageCard]


class ConflictPair(_Frozen):
    """Two active events marked as contradicting each other, the newer first."""

    newer: ConflictSide
    older: ConflictSide


class ConflictPage(_Frozen):
    pairs: list[ConflictPair]
    offset: int
    limit: int
    has_more: bool


class TimelineService(ServiceBase):
    """The memory page's long-term views over events, newest first."""

    @property
    def store(self) -> TimelineStorage:
        return self.storage.timeline

    async def events(
        self, query: TimelineFilter, *, offset: int = 0, limit: int = PAGE_SIZE
    ) -> TimelinePage:
        """One page of events matching ``query``, by chronology, newest first."""
        found = await self.store.page(query, offset, limit)
        turn = found.current_turn
        entries = [
            TimelineEntry(card=card, chronology=chronology, weight=card_weight(card, turn))
            for card, chronology in found.cards
        ]
        return TimelinePage(
            entries=entries, offset=offset, limit=limit, has_more=found.has_more, current_turn=turn
        )

    async def event(self, event_id: str) -> TimelineDetail:
        """The event whatever its status, with sources, links, adoptions, receipts, its
        weight over turns and the chain of its versions."""
        story = await self.store.story(event_id)
        card, turn = story.details.card, story.current_turn
        adopted = [a.turn for a in story.details.adoptions if a.turn is not None]
        return TimelineDetail(
            details=event_details(story.details),
            current_turn=turn,
            weight=card_weight(card, turn),
            trajectory=weight_trajectory(card, adopted, turn),
            versions=story.versions,
        )

    async def conflicts(
        self, space: str, *, offset: int = 0, limit: int = CONFLICT_PAGE
    ) -> ConflictPage:
        """Pairs of active events still marked in conflict, newest first, with sources."""
        found = await self.store.conflicts(space, offset, limit)

        def side(event_id: str) -> ConflictSide:
            card = found.cards[event_id]
            sources = [found.sources[m] for m in card.source_message_ids if m in found.sources]
            return ConflictSide(card=card, sources=sources)

        pairs = [ConflictPair(newer=side(a), older=side(b)) for a, b in found.pairs]
        return ConflictPage(pairs=pairs, offset=offset, limit=limit, has_more=found.has_more)
