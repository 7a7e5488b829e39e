"""What the timeline views need from storage (the contract a database implements).

Each operation is one consistent read returning records; the weights shown are computed
by the service with ``events.weights``, never by the storage.
"""

from typing import NamedTuple, Protocol

from ..curation.records import EventBrief, MessageCard
from ..curation.storage import EventRows
from ..events.cards import EventCard
from .filters import TimelineFilter

__all__ = ["ConflictRows", "EventStory", "TimelinePageRows", "TimelineStorage"]


class TimelinePageRows(NamedTuple):
    cards: list[tuple[EventCard, str]]
    """Up to the limit asked, newest first, each with its chronology (when it stands)."""
    has_more: bool
    current_turn: int


class EventStory(NamedTuple):
    details: EventRows
    current_turn: int
    versions: list[EventBrief]
    """The chain of the event's versions, oldest first."""


class ConflictRows(NamedTuple):
    pairs: list[tuple[str, str]]
    """Ids of two active events marked in conflict, the newer first."""
    cards: dict[str, EventCard]
    sources: dict[str, MessageCard]
    has_more: bool


class TimelineStorage(Protocol):
    async def page(self, query: TimelineFilter, offset: int, limit: int) -> TimelinePageRows:
        """The events matching ``query`` from ``offset``, by chronology, newest first."""
        ...

    async def story(self, event_id: str) -> EventStory:
        """The event whatever its status (``NotFound`` if unknown), with its versions."""
        ...

    async def conflicts(self, space: str, offset: int, limit: int) -> ConflictRows:
        """Pairs of active events still in conflict, newest first, with their sources."""
        ...
