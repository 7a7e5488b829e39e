"""Timeline use cases of the façade: the filtered listing, one event's story, the conflicts.

Each is one read. Rows become cards only for the page shown; weights are computed with
``events.weights`` at the space's current turn (browsing never reinforces or stamps).
"""

import sqlite3

from pydantic import BaseModel, ConfigDict

from ..curation.actions import EventBrief, EventDetails, MessageCard
from ..curation.service import event_details_in
from ..events.cards import EventCard
from ..events.weights import card_weight
from ..service_base import ServiceBase
from ..store import curation_rows, event_rows, timeline_rows
from ..store.event_search_rows import current_turn
from .filters import PAGE_SIZE, TimelineFilter
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

    async def timeline(
        self, query: TimelineFilter, *, offset: int = 0, limit: int = PAGE_SIZE
    ) -> TimelinePage:
        """One page of events matching ``query``, by chronology, newest first."""
        return await self.db.read(lambda raw: _timeline(raw, query, offset, limit))

    async def timeline_event(self, event_id: str) -> TimelineDetail:
        """The event whatever its status, with sources, links, adoptions, receipts, its
        weight over turns and the chain of its versions."""
        return await self.db.read(lambda raw: _detail(raw, event_id))

    async def conflict_queue(
        self, namespace: str, *, offset: int = 0, limit: int = CONFLICT_PAGE
    ) -> ConflictPage:
        """Pairs of active events still marked in conflict, newest first, with sources."""
        return await self.db.read(lambda raw: _conflicts(raw, namespace, offset, limit))


def _timeline(
    raw: sqlite3.Connection, query: TimelineFilter, offset: int, limit: int
) -> TimelinePage:
    found = timeline_rows.timeline_rows(raw, query, offset, limit + 1)
    turn = current_turn(raw, query.namespace)
    shown = found[:limit]
    cards = event_rows.events_from_rows(raw, shown)
    entries = [
        TimelineEntry(card=card, chronology=row["chronology"], weight=card_weight(card, turn))
        for card, row in zip(cards, shown, strict=True)
    ]
    return TimelinePage(
        entries=entries, offset=offset, limit=limit, has_more=len(found) > limit, current_turn=turn
    )


def _detail(raw: sqlite3.Connection, event_id: str) -> TimelineDetail:
    details = event_details_in(raw, event_id)
    card = details.card
    turn = current_turn(raw, card.namespace)
    adopted = [a.turn for a in details.adoptions if a.turn is not None]
    chain = timeline_rows.version_chain(raw, event_id)
    briefs = curation_rows.briefs(raw, chain)
    return TimelineDetail(
        details=details,
        current_turn=turn,
        weight=card_weight(card, turn),
        trajectory=weight_trajectory(card, adopted, turn),
        versions=[briefs[i] for i in chain if i in briefs],
    )


def _conflicts(raw: sqlite3.Connection, namespace: str, offset: int, limit: int) -> ConflictPage:
    found = timeline_rows.conflict_pairs(raw, namespace, offset, limit + 1)
    shown = found[:limit]
    ids = list(dict.fromkeys(i for pair in shown for i in pair))
    cards = {c.id: c for c in event_rows.events_from_rows(raw, timeline_rows.rows_by_id(raw, ids))}
    messages = [m for card in cards.values() for m in card.source_message_ids]
    by_message = {m.message.id: m for m in curation_rows.message_cards(raw, messages)}

    def side(event_id: str) -> ConflictSide:
        card = cards[event_id]
        sources = [by_message[m] for m in card.source_message_ids if m in by_message]
        return ConflictSide(card=card, sources=sources)

    pairs = [ConflictPair(newer=side(a), older=side(b)) for a, b in shown]
    return ConflictPage(pairs=pairs, offset=offset, limit=limit, has_more=len(found) > limit)
