"""The events capability's storage contract (``core/events/storage.py``) on SQLite.

``SqliteEventsReader`` also reads inside another capability's unit of work (derivation's
extraction input holds what the events capability's search finds, in the same read).
Stored search documents are trusted under the events rules' document version only.
"""

import sqlite3
from collections.abc import Callable, Mapping, Sequence
from typing import TypeVar

from ...events.cards import EventCard
from ...events.storage import (
    BlockCounts,
    Candidate,
    CandidateQuery,
    Document,
    EventRules,
    EventsReader,
    SearchCandidates,
)
from ...records import Message
from .. import event_rows
from .. import event_search_rows as rows
from ..event_documents import ParsedDocuments, stored_documents
from ..search_index import document_fields
from ..units import UnitDatabase

T = TypeVar("T")


class SqliteEventsReader:
    """``EventsReader`` over the connection of one ``Database`` unit (a read, or another
    capability's write that compares with what search finds)."""

    def __init__(
        self, raw: sqlite3.Connection, rules: EventRules, documents: ParsedDocuments | None = None
    ) -> None:
        self.raw = raw
        self.rules = rules
        self.documents = documents

    def candidates(self, space: str, query: CandidateQuery) -> SearchCandidates:
        return _candidates(self.raw, space, query, self.rules.document_version, self.documents)

    def links(self, space: str, event_ids: Sequence[str]) -> dict[str, str | None]:
        found = event_rows.visible_rows(self.raw, space, event_ids)
        return {row["id"]: _newer(row) for row in found}

    def visible_cards(self, space: str, event_ids: Sequence[str]) -> list[EventCard]:
        return event_rows.visible_cards(self.raw, space, event_ids)


class SqliteEventsStorage:
    def __init__(self, db: UnitDatabase, rules: EventRules, documents: ParsedDocuments) -> None:
        self.db = db
        self.rules = rules
        self.documents = documents

    async def read(self, work: Callable[[EventsReader], T]) -> T:
        return await self.db.read(
            lambda raw: work(SqliteEventsReader(raw, self.rules, self.documents))
        )

    async def stamp_retrieved(self, stamps: Mapping[str, str]) -> None:
        await self.db.write(lambda raw: rows.stamp_retrieved(raw, stamps))

    async def card(self, event_id: str) -> EventCard:
        return await self.db.read(lambda raw: event_rows.get_event(raw, event_id))

    async def expansion(self, event_id: str) -> tuple[EventCard, list[Message]]:
        return await self.db.read(
            lambda raw: (event_rows.get_event(raw, event_id), rows.source_messages(raw, event_id))
        )

    async def cards(
        self,
        space: str | None,
        statuses: tuple[str, ...],
        block_id: str | None,
        limit: int,
        offset: int,
    ) -> list[EventCard]:
        return await self.db.read(
            lambda raw: event_rows.list_events(raw, space, statuses, block_id, limit, offset)
        )

    async def block_counts(self, space: str, thread_id: str | None) -> BlockCounts:
        return await self.db.read(lambda raw: _block_counts(raw, space, thread_id))


def _candidates(
    raw: sqlite3.Connection,
    space: str,
    query: CandidateQuery,
    version: int,
    documents: ParsedDocuments | None,
) -> SearchCandidates:
    """``EventsReader.candidates``: stored documents of ``version`` only; the current turn
    only where cards are asked for (a plain query's ranking needs none)."""
    unique = list({row["id"]: row for row in _candidate_rows(raw, space, query)}.values())
    tokens = query.tokens
    stored = stored_documents(raw, unique, tokens, version, documents) if tokens else {}
    cards: Sequence[EventCard | None] = (
        event_rows.events_from_rows(raw, unique) if query.with_cards else [None] * len(unique)
    )
    if not query.with_cards:  # narrow rows: whole ones only where fields must be tokenised
        unique = _whole_where_undocumented(raw, unique, stored)
    found = [
        _candidate(row, stored.get(row["id"]), card, need_fields=not query.with_cards)
        for row, card in zip(unique, cards, strict=True)
    ]
    turn = rows.current_turn(raw, space) if query.with_cards else 0
    return SearchCandidates(found, turn)


def _candidate_rows(
    raw: sqlite3.Connection, space: str, query: CandidateQuery
) -> list[sqlite3.Row]:
    pools = query.pools
    if query.event_ids is not None:
        return [r for p in pools for r in rows.pool_rows(raw, space, p, query.event_ids)]
    if not query.tokens and query.keep is None:
        return [r for p in pools for r in rows.pool_rows(raw, space, p)]
    columns = "e.*" if query.with_cards else rows.SEARCH_COLUMNS
    found = rows.lexical_rows(raw, space, pools, query.tokens, query.cap, columns)
    if query.keep is not None:
        keep = query.keep
        found += [r for p in pools for r in rows.structured_rows(raw, space, p, keep)]
    return found


def _whole_where_undocumented(
    raw: sqlite3.Connection, found: list[sqlite3.Row], documents: Mapping[str, Document]
) -> list[sqlite3.Row]:
    """``found`` with each row that has no current stored document read whole (its fields
    are tokenised instead), in the same order."""
    missing = [int(row["pk"]) for row in found if row["id"] not in documents]
    if not missing:
        return found
    whole = {row["id"]: row for row in rows.rows_by_pk(raw, missing)}
    return [whole.get(row["id"], row) for row in found]


def _candidate(
    row: sqlite3.Row, document: Document | None, card: EventCard | None, need_fields: bool
) -> Candidate:
    """Fields (three JSON columns decoded) only where the ranking will tokenise them: a
    plain query's candidate without a stored document; a card query ranks the cards."""
    fields = document_fields(row) if need_fields and document is None else None
    return Candidate(row["id"], row["pool"], row["status"], _newer(row), fields, document, card)


def _newer(row: sqlite3.Row) -> str | None:
    return row["superseded_by"] if row["status"] == "superseded" else None


def _block_counts(raw: sqlite3.Connection, space: str, thread_id: str | None) -> BlockCounts:
    total, thread_ids = rows.thread_status(raw, space)
    return BlockCounts(total, thread_ids, rows.open_tail_count(raw, space, thread_id))
