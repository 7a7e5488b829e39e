"""Façade facet: evidence batches, adoption receipts, weights, pins and memory_remember."""

from collections.abc import Mapping, Sequence

from ..events.cards import EventCard
from ..remember import service as agent_remember
from ..remember.rules import Category
from ..remember.service import Remembered
from ..service_base import ServiceBase
from . import service as agent_gate
from .evidence import Batch


class GateFacet(ServiceBase):
    async def open_batch(
        self,
        namespace: str,
        thread_id: str,
        tool: str,
        evidence_refs: Sequence[str],
        titles: Mapping[str, str] | None = None,
    ) -> Batch:
        """Every explicit retrieval or expansion exposes its refs through a new batch."""
        return await agent_gate.open_batch(
            self.db, namespace, thread_id, tool, evidence_refs, titles
        )

    async def assess(
        self,
        namespace: str,
        thread_id: str,
        batch_id: str | None,
        verdict: object,
        evidence_refs: Sequence[object],
        fit: object,
        missing: object,
        next_strategy: object,
    ) -> agent_gate.Assessed:
        return await agent_gate.assess(
            self.db,
            namespace,
            thread_id,
            batch_id,
            verdict,
            evidence_refs,
            fit,
            missing,
            next_strategy,
        )

    async def record_use(
        self,
        namespace: str,
        thread_id: str,
        batch_id: str | None,
        evidence_refs: Sequence[object],
        receipt_id: str,
    ) -> agent_gate.UseRecord:
        """Close a batch; only events its sufficient assessment adopted are reinforced."""
        return await agent_gate.record_use(
            self.db, namespace, thread_id, batch_id, evidence_refs, receipt_id
        )

    async def unresolved_batches(self, namespace: str, thread_id: str) -> list[Batch]:
        return await agent_gate.unresolved_batches(self.db, namespace, thread_id)

    async def pin_event(self, event_id: str) -> EventCard:
        return await agent_gate.pin_event(self.db, event_id)

    async def unpin_event(self, event_id: str) -> EventCard:
        return await agent_gate.unpin_event(self.db, event_id)

    async def forget_event(self, event_id: str) -> EventCard:
        return await agent_gate.forget_event(self.db, event_id)

    async def restore_event(self, event_id: str) -> EventCard:
        return await agent_gate.restore_event(self.db, event_id)

    async def event_weight(self, event_id: str, at_turn: int | None = None) -> float:
        return await agent_gate.event_weight(self.db, event_id, at_turn)

    async def remember(
        self, namespace: str, thread_id: str, content: str, category: Category | None = None
    ) -> Remembered:
        """memory_remember: duplicate → reinforce, ambiguous → decider, else add (agent pool)."""
        return await agent_remember.remember(
            self.db,
            self.model,
            namespace,
            thread_id,
            content,
            category,
            task_timeout_s=self.config.structured_task_timeout_s,
            defaults=self._defaults,
        )
