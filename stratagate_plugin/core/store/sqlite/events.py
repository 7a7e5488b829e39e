"""The events capability's storage contract (``core/events/storage.py``) on SQLite.

``candidates_in`` and ``visible_cards_in`` also run inside another capability's unit of
work (derivation compares a block's cards with what search finds, in its own write).
"""

import sqlite3
from collections.abc import Callable, Sequence
from typing import TypeVar

from ...events.cards import EventCard
from ...events.storage import (
    BlockCounts,
    Candidate,
    CandidateQuery,
    Document,
    EventsReader,
    SearchCandidates,
)
from ...records import Message
from .. import event_rows
from .. import event_search_rows as rows
from ..db import Database
from ..search_index import document_fields

T = TypeVar("T")


class SqliteEventsReader:
    """``EventsReader`` over the connection of one ``Database`` unit (a read, or another
    capability's write that compares with what search finds)."""

    def __init__(self, raw: sqlite3.Connection) -> None:
        self.raw = raw

    def candidates(self, namespace: str, query: CandidateQuery) -> SearchCandidates:
        return candidates_in(self.raw, namespace, query)

    def links(self, namespace: str, event_ids: Sequence[str]) -> dict[str, str | None]:
        found = event_rows.visible_rows(self.raw, namespace, event_ids)
        return {row["id"]: _newer(row) for row in found}

    def visible_cards(self, namespace: str, event_ids: Sequence[str]) -> list[EventCard]:
        return visible_cards_in(self.raw, namespace, event_ids)


class SqliteEventsStorage:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def read(self, work: Callable[[EventsReader], T]) -> T:
        return await self.db.read(lambda raw: work(SqliteEventsReader(raw)))

    async def stamp_retrieved(self, event_ids: Sequence[str], now: str) -> None:
        await self.db.write(lambda raw: rows.stamp_retrieved(raw, event_ids, now))

    async def card(self, event_id: str) -> EventCard:
        return await self.db.read(lambda raw: event_rows.get_event(raw, event_id))

    async def expansion(self, event_id: str) -> tuple[EventCard, list[Message]]:
        return await self.db.read(
            lambda raw: (event_rows.get_event(raw, event_id), rows.source_messages(raw, event_id))
        )

    async def cards(
        self,
        namespace: str | None,
        statuses: tuple[str, ...],
        block_id: str | None,
        limit: int,
        offset: int,
    ) -> list[EventCard]:
        return await self.db.read(
            lambda raw: event_rows.list_events(raw, namespace, statuses, block_id, limit, offset)
        )

    async def block_counts(self, namespace: str, thread_id: str | None) -> BlockCounts:
        return await self.db.read(lambda raw: _block_counts(raw, namespace, thread_id))


def candidates_in(
    raw: sqlite3.Connection, namespace: str, query: CandidateQuery
) -> SearchCandidates:
    """``EventsStorage.candidates`` on an open connection (inside the caller's unit)."""
    unique = list({row["id"]: row for row in _candidate_rows(raw, namespace, query)}.values())
    documents = rows.stored_documents(raw, unique, query.tokens) if query.tokens else {}
    cards: Sequence[EventCard | None] = (
        event_rows.events_from_rows(raw, unique) if query.with_cards else [None] * len(unique)
    )
    found = [
        _candidate(row, documents.get(row["id"]), card, need_fields=not query.with_cards)
        for row, card in zip(unique, cards, strict=True)
    ]
    return SearchCandidates(found, rows.current_turn(raw, namespace))


def visible_cards_in(
    raw: sqlite3.Connection, namespace: str, event_ids: Sequence[str]
) -> list[EventCard]:
    """``EventsStorage.visible_cards`` on an open connection."""
    return event_rows.visible_cards(raw, namespace, event_ids)


def _candidate_rows(
    raw: sqlite3.Connection, namespace: str, query: CandidateQuery
) -> list[sqlite3.Row]:
    pools = query.pools
    if query.event_ids is not None:
        return [r for p in pools for r in rows.pool_rows(raw, namespace, p, query.event_ids)]
    if not query.tokens and query.keep is None:
        return [r for p in pools for r in rows.pool_rows(raw, namespace, p)]
    found = rows.lexical_rows(raw, namespace, pools, query.tokens, query.cap)
    if query.keep is not None:
        keep = query.keep
        found += [r for p in pools for r in rows.structured_rows(raw, namespace, p, keep)]
    return found


def _candidate(
    row: sqlite3.Row, document: Document | None, card: EventCard | None, need_fields: bool
) -> Candidate:
    """Fields (three JSON columns decoded) only where the ranking will tokenise them: a
    plain query's candidate without a stored document; a card query ranks the cards."""
    fields = document_fields(row) if need_fields and document is None else None
    return Candidate(row["id"], row["pool"], row["status"], _newer(row), fields, document, card)


def _newer(row: sqlite3.Row) -> str | None:
    return row["superseded_by"] if row["status"] == "superseded" else None


def _block_counts(raw: sqlite3.Connection, namespace: str, thread_id: str | None) -> BlockCounts:
    total, thread_ids = rows.thread_status(raw, namespace)
    return BlockCounts(total, thread_ids, rows.open_tail_count(raw, namespace, thread_id))
