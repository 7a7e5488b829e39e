"""The retrieval capability's storage contract (``core/retrieval/storage.py``) on SQLite."""

import sqlite3
from collections.abc import Sequence
from datetime import datetime

from ...graph.views import Moment, NodeView
from ...records import Message
from ...retrieval.hits import RawHit
from ...retrieval.query import Window
from ...retrieval.raw_channel import CorpusStats
from ...retrieval.storage import BypassRow, ChannelQuery, ChannelRows, SealedMatch
from .. import block_rows, graph_reads, raw_search, retrieval_rows
from .. import event_search_rows as event_reads
from ..db import Database


class SqliteRetrievalStorage:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def sealed_matches(
        self, namespace: str, tokens: Sequence[str], cap: int, thread_id: str | None
    ) -> list[SealedMatch]:
        return await self.db.read(
            lambda raw: raw_search.sealed_candidates(raw, namespace, tokens, cap, thread_id)
        )

    async def raw_hits(self, scored: Sequence[tuple[str, float]]) -> list[RawHit]:
        return await self.db.read(lambda raw: raw_search.hits_for(raw, scored))

    async def latest_message_time(self, namespace: str) -> datetime | None:
        return await self.db.read(lambda raw: retrieval_rows.latest_message_time(raw, namespace))

    async def dated_messages(
        self, namespace: str, windows: Sequence[Window]
    ) -> tuple[set[str], set[str]]:
        return await self.db.read(
            lambda raw: retrieval_rows.dated_messages(raw, namespace, windows)
        )

    async def channel_messages(self, namespace: str, query: ChannelQuery) -> ChannelRows:
        return await self.db.read(lambda raw: retrieval_rows.channel_rows(raw, namespace, query))

    async def term_statistics(
        self, namespace: str, terms: Sequence[str], blocks: Sequence[str]
    ) -> CorpusStats:
        return await self.db.read(
            lambda raw: retrieval_rows.term_statistics(raw, namespace, terms, blocks)
        )

    async def block_texts(self, message_ids: Sequence[str]) -> dict[str, str]:
        return await self.db.read(lambda raw: retrieval_rows.ready_block_texts(raw, message_ids))

    async def block_messages(self, block_ids: Sequence[str]) -> dict[str, list[tuple[str, str]]]:
        return await self.db.read(
            lambda raw: {b: retrieval_rows.block_message_texts(raw, b) for b in block_ids}
        )

    async def graph_views(
        self, namespace: str, terms: Sequence[str], cap: int, when: Moment
    ) -> list[NodeView]:
        return await self.db.read(lambda raw: _graph_views(raw, namespace, terms, cap, when))

    async def cited_messages(self, namespace: str, event_ids: Sequence[str]) -> list[str]:
        return await self.db.read(lambda raw: graph_reads.cited_messages(raw, namespace, event_ids))

    async def tails(self, namespace: str, thread_id: str) -> tuple[list[Message], list[Message]]:
        return await self.db.read(
            lambda raw: (
                block_rows.open_tail(raw, namespace, thread_id),
                block_rows.open_tails(raw, namespace, thread_id),
            )
        )

    async def from_thread(self, event_ids: Sequence[str], thread_id: str) -> set[str]:
        return await self.db.read(
            lambda raw: event_reads.events_from_thread(raw, event_ids, thread_id)
        )

    async def bypass(self, namespace: str) -> tuple[int, list[BypassRow]]:
        return await self.db.read(lambda raw: _bypass(raw, namespace))


def _graph_views(
    raw: sqlite3.Connection, namespace: str, terms: Sequence[str], cap: int, when: Moment
) -> list[NodeView]:
    return graph_reads.views(raw, graph_reads.candidates(raw, namespace, terms, cap), when)


def _bypass(raw: sqlite3.Connection, namespace: str) -> tuple[int, list[BypassRow]]:
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
        for row in event_reads.bypass_rows(raw, namespace)
    ]
    return event_reads.current_turn(raw, namespace), found
