"""The timeline's storage contract (``core/timeline/storage.py``) on SQLite."""

import sqlite3

from ...timeline.filters import TimelineFilter
from ...timeline.storage import ConflictRows, EventStory, TimelinePageRows
from .. import curation_rows, event_rows, timeline_rows
from ..event_search_rows import current_turn
from ..units import UnitDatabase
from .curation import event_details_in


class SqliteTimelineStorage:
    def __init__(self, db: UnitDatabase) -> None:
        self.db = db

    async def page(self, query: TimelineFilter, offset: int, limit: int) -> TimelinePageRows:
        return await self.db.read(lambda raw: _page(raw, query, offset, limit))

    async def story(self, event_id: str) -> EventStory:
        return await self.db.read(lambda raw: _story(raw, event_id))

    async def conflicts(self, space: str, offset: int, limit: int) -> ConflictRows:
        return await self.db.read(lambda raw: _conflicts(raw, space, offset, limit))


def _page(
    raw: sqlite3.Connection, query: TimelineFilter, offset: int, limit: int
) -> TimelinePageRows:
    found = timeline_rows.timeline_rows(raw, query, offset, limit + 1)
    shown = found[:limit]
    cards = event_rows.events_from_rows(raw, shown)
    chronologies = [row["chronology"] for row in shown]
    return TimelinePageRows(
        list(zip(cards, chronologies, strict=True)),
        len(found) > limit,
        current_turn(raw, query.namespace),
    )


def _story(raw: sqlite3.Connection, event_id: str) -> EventStory:
    details = event_details_in(raw, event_id)
    chain = timeline_rows.version_chain(raw, event_id)
    briefs = curation_rows.briefs(raw, chain)
    versions = [briefs[i] for i in chain if i in briefs]
    return EventStory(details, current_turn(raw, details.card.namespace), versions)


def _conflicts(raw: sqlite3.Connection, space: str, offset: int, limit: int) -> ConflictRows:
    found = timeline_rows.conflict_pairs(raw, space, offset, limit + 1)
    shown = found[:limit]
    ids = list(dict.fromkeys(i for pair in shown for i in pair))
    cards = {c.id: c for c in event_rows.events_from_rows(raw, timeline_rows.rows_by_id(raw, ids))}
    messages = [m for card in cards.values() for m in card.source_message_ids]
    sources = {m.message.id: m for m in curation_rows.message_cards(raw, messages)}
    return ConflictRows(list(shown), cards, sources, len(found) > limit)
