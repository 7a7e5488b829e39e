"""The retrieval capability's storage contract (``core/retrieval/storage.py``) on SQLite."""

import sqlite3
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import TypeVar

from ...events.cards import EventCard
from ...events.storage import EventRules
from ...graph.shapes import NodeRecords
from ...records import Message
from ...retrieval.hits import RawHit
from ...retrieval.storage import (
    BypassRow,
    ChannelMessage,
    CorpusStats,
    RetrievalReader,
    SealedMatch,
    TermPostings,
)
from .. import block_rows, event_rows, graph_reads, raw_search, retrieval_rows, term_index
from .. import event_search_rows as event_reads
from ..units import UnitDatabase
from .events import SqliteEventsReader
from .graph import candidate_records

T = TypeVar("T")


class SqliteRetrievalReader(SqliteEventsReader):
    """``RetrievalReader`` over the connection of one ``Database.read``."""

    def sealed_messages(self, space: str) -> list[ChannelMessage]:
        return retrieval_rows.scan_messages(self.raw, space)

    def sealed_matches(
        self, space: str, tokens: Sequence[str], cap: int, thread_id: str | None
    ) -> list[SealedMatch]:
        return raw_search.sealed_candidates(self.raw, space, tokens, cap, thread_id)

    def raw_hits(self, scored: Sequence[tuple[str, float]]) -> list[RawHit]:
        return raw_search.hits_for(self.raw, scored)

    def term_postings(self, space: str, terms: Sequence[str]) -> dict[str, TermPostings] | None:
        if not term_index.has_index(self.raw):
            return None
        return term_index.postings(self.raw, space, terms)

    def indexed_messages(
        self,
        space: str,
        rowids: Sequence[int],
        reach: int,
        around: int,
        lengths: Mapping[int, int] | None = None,
    ) -> tuple[list[ChannelMessage], list[ChannelMessage]]:
        return retrieval_rows.indexed_messages(self.raw, space, rowids, reach, around, lengths)

    def tails(self, space: str, thread_id: str) -> tuple[list[Message], list[Message]]:
        return block_rows.thread_and_other_tails(self.raw, space, thread_id)

    def tail_messages(self, space: str, current_thread: str | None) -> list[ChannelMessage]:
        return retrieval_rows.tail_messages(self.raw, space, current_thread)

    def term_statistics(
        self, space: str, terms: Sequence[str], blocks: Sequence[str]
    ) -> CorpusStats:
        return retrieval_rows.term_statistics(self.raw, space, terms, blocks)

    def block_lengths(self, blocks: Sequence[str]) -> dict[str, int]:
        return retrieval_rows.block_lengths(self.raw, blocks)

    def block_texts(self, message_ids: Sequence[str]) -> dict[str, str]:
        return retrieval_rows.ready_block_texts(self.raw, message_ids)

    def block_messages(self, block_id: str) -> list[tuple[str, str]]:
        return retrieval_rows.block_message_texts(self.raw, block_id)

    def graph_records(self, space: str, terms: Sequence[str], cap: int) -> NodeRecords:
        return candidate_records(self.raw, space, terms, cap)

    def cited_messages(self, space: str, event_ids: Sequence[str]) -> list[str]:
        return graph_reads.cited_messages(self.raw, space, event_ids)

    def from_thread(self, event_ids: Sequence[str], thread_id: str) -> set[str]:
        return event_reads.events_from_thread(self.raw, event_ids, thread_id)

    def created_at(self, message_ids: Sequence[str]) -> dict[str, str]:
        return retrieval_rows.created_at(self.raw, message_ids)

    def happened_of(
        self, space: str, message_ids: Sequence[str]
    ) -> list[tuple[str, str | None, str | None]]:
        return retrieval_rows.happened_of(self.raw, space, message_ids)

    def bypass(self, space: str) -> tuple[int, list[BypassRow]]:
        return _bypass(self.raw, space)

    def card(self, event_id: str) -> EventCard:
        return event_rows.get_event(self.raw, event_id)


class SqliteRetrievalStorage:
    def __init__(self, db: UnitDatabase, rules: EventRules) -> None:
        self.db = db
        self.rules = rules

    async def read(self, work: Callable[[RetrievalReader], T]) -> T:
        return await self.db.read(lambda raw: work(SqliteRetrievalReader(raw, self.rules)))

    async def sealed_matches(
        self, space: str, tokens: Sequence[str], cap: int, thread_id: str | None
    ) -> list[SealedMatch]:
        return await self.read(lambda reader: reader.sealed_matches(space, tokens, cap, thread_id))

    async def raw_hits(self, scored: Sequence[tuple[str, float]]) -> list[RawHit]:
        return await self.read(lambda reader: reader.raw_hits(scored))

    async def latest_message_time(self, space: str) -> datetime | None:
        return await self.db.read(lambda raw: retrieval_rows.latest_message_time(raw, space))

    async def tails(self, space: str, thread_id: str) -> tuple[list[Message], list[Message]]:
        return await self.read(lambda reader: reader.tails(space, thread_id))


def _bypass(raw: sqlite3.Connection, space: str) -> tuple[int, list[BypassRow]]:
    turn, rows = event_reads.turn_and_bypass_rows(raw, space)
    found = [
        BypassRow(
            row["id"],
            row["last_adopted_turn"],
            row["mention_count"],
            row["criticality"],
            bool(row["pinned"]),
            row["forced_cap"],
            row["status"],
            row["floor_weight"],
            row["updated_at"],
        )
        for row in rows
    ]
    return turn, found
