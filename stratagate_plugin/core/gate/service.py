"""Evidence-gate use cases over ``GateStorage`` (spec §7, §8): batches, assess, record_use,
flags.

Assessing and recording a use run the pure rules of ``gate`` inside one transaction of
``GateStorage`` (over a ``GateUnit``); the other calls are one operation each. Batches are
persisted per namespace and thread, so a restart mid-turn loses none. Only ``record_use``
ever reinforces, and only the events its batch's sufficient assessment adopted; a receipt
makes a replay a no-op.

The receipt's audit carries the turn the batch was opened at (not the turn of the call),
so a replay after the namespace turn moved on is still recognised as identical.
"""

from collections.abc import Mapping, Sequence

from pydantic import BaseModel, ConfigDict

from ..clock import iso, utc_now
from ..errors import InvalidInput, require_names
from ..events.cards import EventCard
from ..events.weights import card_weight
from ..service_base import ServiceBase
from . import evidence as gate
from .evidence import Citation, RecordPlan
from .records import Assessment, Batch, BatchStatus, Strategy, Verdict, parse_ref
from .storage import BatchOpening, GateStorage, GateUnit, NewReceipt
from .trail import SNIPPET_CHARS, EvidenceTrail


class Assessed(BaseModel):
    """``memory_assess``'s answer: the batch with its stored assessment, and the latest id."""

    model_config = ConfigDict(frozen=True)

    batch: Batch
    latest_batch_id: str

    @property
    def assessment(self) -> Assessment:
        assert self.batch.assessment is not None
        return self.batch.assessment


class UseRecord(BaseModel):
    """``memory_record_use``'s answer; ``incremented`` is empty for a replay."""

    model_config = ConfigDict(frozen=True)

    batch_id: str
    batch_status: BatchStatus
    namespace: str
    retrieval_sequence: int
    retrieved_count: int
    evidence_refs: tuple[str, ...]
    duplicate_evidence_refs: tuple[str, ...]
    event_ids: tuple[str, ...]
    incremented: tuple[str, ...]
    citations: tuple[Citation, ...]
    verdict: Verdict | None
    missing: str | None
    next_strategy: Strategy | None
    replayed: bool
    unresolved_batch_ids: tuple[str, ...]


class GateService(ServiceBase):
    """Evidence-gate use cases of the ``StrataGate`` façade."""

    @property
    def store(self) -> GateStorage:
        return self.storage.gate

    async def open_batch(
        self,
        space: str,
        thread_id: str,
        tool: str,
        evidence_refs: Sequence[str],
        titles: Mapping[str, str] | None = None,
    ) -> Batch:
        """Persist the batch an explicit retrieval tool call exposed (``tool`` in BATCH_TOOLS)."""
        require_names(namespace=space, thread_id=thread_id)
        if tool not in gate.BATCH_TOOLS:
            raise InvalidInput(f"{tool!r} does not open retrieval batches")
        _check_refs(evidence_refs)
        now = iso(utc_now())
        opening = BatchOpening(space, thread_id, tool, evidence_refs, titles or {})
        return await self.store.open_batch(opening, now)

    async def assess(
        self,
        space: str,
        thread_id: str,
        batch_id: str | None,
        verdict: object,
        evidence_refs: Sequence[object],
        fit: object,
        missing: object,
        next_strategy: object,
    ) -> Assessed:
        """Normalise and store (overwrite) the assessment of an unresolved batch (§7.1)."""
        now = iso(utc_now())

        def unit(rows: GateUnit) -> Assessed:
            batch = _select(rows, space, thread_id, batch_id)
            judged = gate.assess_batch(batch, verdict, evidence_refs, fit, missing, next_strategy)
            stored = rows.save_assessment(judged, now)
            latest = rows.latest_batch_id(space, thread_id)
            return Assessed(batch=stored, latest_batch_id=latest or batch.id)

        return await self.store.transaction(unit)

    async def record_use(
        self,
        space: str,
        thread_id: str,
        batch_id: str | None,
        evidence_refs: Sequence[object],
        receipt_id: str,
    ) -> UseRecord:
        """Adopt refs of a batch under ``receipt_id`` (§7.2–7.3); ``[]`` is always allowed.

        Order: select → plan → payload → receipt decision (a replay returns here) → unresolved
        check → reinforce → receipt row → mark recorded. An omitted ``batch_id`` means the
        receipt's own batch on a replay, else the thread's latest batch.
        """
        if not isinstance(receipt_id, str) or not receipt_id.strip():
            raise InvalidInput("record_use needs a non-blank receipt_id")
        now = iso(utc_now())

        def unit(rows: GateUnit) -> UseRecord:
            stored = rows.receipt(space, receipt_id)
            wanted = batch_id if batch_id is not None or stored is None else stored.batch_id
            batch = _select(rows, space, thread_id, wanted)
            plan = gate.plan_record_use(batch, evidence_refs)
            audit = plan.audit(thread_id, rows.batch_turn(batch.id))
            payload = gate.receipt_payload(plan.event_ids, audit)
            existing = stored.payload if stored else None
            if gate.receipt_decision(existing, payload) == "replay":
                return _use_record(rows, batch, plan, (), replayed=True)
            gate.ensure_unresolved(batch)
            turn = rows.current_turn(space)
            done = rows.reinforce(space, plan.event_ids, turn, now)
            receipt = NewReceipt(space, receipt_id, batch.id, payload, plan.event_ids, audit)
            rows.insert_receipt(receipt, now)
            recorded = rows.mark_recorded(batch.id, now)
            return _use_record(rows, recorded, plan, tuple(done), replayed=False)

        return await self.store.transaction(unit)

    async def unresolved_batches(self, space: str, thread_id: str) -> list[Batch]:
        """The thread's batches still awaiting ``record_use`` (for the host's finish step)."""
        return await self.store.batches(space, thread_id, "unresolved")

    async def list_batches(self, space: str, thread_id: str) -> list[Batch]:
        return await self.store.batches(space, thread_id, None)

    async def evidence_trail(self, space: str, thread_id: str) -> EvidenceTrail:
        """Every batch of the thread with its receipt, and the events and messages their
        refs name (three queries, whatever the thread's length): the chat's citation tails."""
        uses = await self.store.thread_uses(space, thread_id)
        refs = [parse_ref(ref) for use in uses for ref in use.evidence_refs]
        events = sorted({r.target_id for r in refs if r and r.kind == "event"})
        messages = sorted({r.message_id for r in refs if r and r.message_id})
        marked, said = await self.store.marks(events, messages, SNIPPET_CHARS)
        return EvidenceTrail(uses=tuple(uses), events=marked, messages=said)

    # -- event flags and weights ---------------------------------------------------------------

    async def pin_event(self, event_id: str) -> EventCard:
        """A pinned event weighs 1 until unpinned."""
        now = iso(utc_now())
        return await self.store.set_pinned(event_id, True, now)

    async def unpin_event(self, event_id: str) -> EventCard:
        now = iso(utc_now())
        return await self.store.set_pinned(event_id, False, now)

    async def forget_event(self, event_id: str) -> EventCard:
        """Hide the event from every search, recall and derived view; sources stay."""
        now = iso(utc_now())
        return await self.store.forget(event_id, now)

    async def restore_event(self, event_id: str) -> EventCard:
        """Undo ``forget_event``."""
        now = iso(utc_now())
        return await self.store.restore(event_id, now)

    async def event_weight(self, event_id: str, at_turn: int | None = None) -> float:
        """The event's weight at ``at_turn`` (default: its namespace's current turn)."""
        card, current = await self.store.card_at_turn(event_id)
        return card_weight(card, current if at_turn is None else at_turn)


def _check_refs(evidence_refs: Sequence[str]) -> None:
    if isinstance(evidence_refs, str):
        raise InvalidInput("evidence_refs must be a list of refs")
    for ref in evidence_refs:
        if not isinstance(ref, str) or parse_ref(ref) is None:
            raise InvalidInput(f"malformed evidence ref {ref!r}")


def _select(rows: GateUnit, space: str, thread_id: str, batch_id: str | None) -> Batch:
    """``gate.select_batch`` over the named (or latest) batch, or all for the error."""
    return gate.select_batch(rows.batch_choices(space, thread_id, batch_id), batch_id)


def _use_record(
    rows: GateUnit,
    batch: Batch,
    plan: RecordPlan,
    incremented: tuple[str, ...],
    *,
    replayed: bool,
) -> UseRecord:
    judged = plan.assessment
    open_ids = [b.id for b in rows.batches(batch.namespace, batch.thread_id, "unresolved")]
    return UseRecord(
        batch_id=batch.id,
        batch_status=batch.status,
        namespace=batch.namespace,
        retrieval_sequence=batch.sequence,
        retrieved_count=len(batch.evidence_refs),
        evidence_refs=plan.evidence_refs,
        duplicate_evidence_refs=plan.duplicate_evidence_refs,
        event_ids=plan.event_ids,
        incremented=incremented,
        citations=plan.citations,
        verdict=judged.verdict if judged else None,
        missing=judged.missing if judged else None,
        next_strategy=judged.next_strategy if judged else None,
        replayed=replayed,
        unresolved_batch_ids=tuple(open_ids),
    )
