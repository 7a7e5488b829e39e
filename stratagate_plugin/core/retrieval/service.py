"""Façade facet: event and raw search, block listings for agents, automatic recall."""

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime

from ..events import service as event_queries
from ..events.ranking import EventHit, TemporalIntent
from ..events.service import BlocksReport, EventExpansion
from ..service_base import ServiceBase
from . import fused as fused_retrieval
from . import raw_channel as retrieval
from . import recall
from .fused import Retrieved
from .hits import RawHit
from .recall import AutoContext


class RetrievalService(ServiceBase):
    async def search_events(
        self,
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
        track_retrieval: bool = True,
    ) -> list[EventHit]:
        """Spec §6.4: BM25 + structured rankings over both pools; never reinforces."""
        return await event_queries.search_events(
            self.db,
            namespace,
            query,
            limit=limit,
            offset=offset,
            participants=participants,
            event_type=event_type,
            happened_from=happened_from,
            happened_to=happened_to,
            temporal_intent=temporal_intent,
            agent_weight=self.config.agent_memory_weight,
            track_retrieval=track_retrieval,
        )

    async def search_raw(
        self, namespace: str, query: str, limit: int = 6, thread_id: str | None = None
    ) -> list[RawHit]:
        """Sealed L5 messages with their neighbours; ``thread_id`` limits it to one thread."""
        return await retrieval.search_raw(self.db, namespace, query, limit, thread_id)

    async def search_raw_ranked(self, namespace: str, query: str, limit: int = 6) -> list[RawHit]:
        """Sealed L5 messages in the fused ``retrieve()`` order, with their neighbours."""
        return await fused_retrieval.search_raw_ranked(self.db, namespace, query, limit)

    async def expand_event(self, event_id: str) -> EventExpansion:
        return await event_queries.expand_event(self.db, event_id)

    async def agent_blocks(
        self, namespace: str, thread_id: str, scope: event_queries.BlockScope = "session"
    ) -> BlocksReport:
        """Ready blocks at their decayed levels plus why the list may be empty."""
        return await event_queries.get_blocks(self.db, namespace, thread_id, scope=scope)

    async def retrieve(self, namespace: str, query: str, k: int = 20) -> list[Retrieved]:
        """The fused first-step evidence (raw, event and block channels) as message ids."""
        return await fused_retrieval.retrieve(self.db, namespace, query, k)

    async def build_auto_context(
        self, namespace: str, thread_id: str, latest_user_message: str
    ) -> AutoContext:
        """Automatic recall for one model call (≤ 4 events within ~900 tokens); no reinforcing."""
        config = replace(recall.DEFAULT_RECALL, agent_weight=self.config.agent_memory_weight)
        return await recall.build_auto_context(
            self.db, namespace, thread_id, latest_user_message, config=config
        )
