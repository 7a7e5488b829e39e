"""What the evidence gate needs from storage (the contract a database implements).

Opening a batch, the flags and the reads are single operations. Assessing and recording a
use decide between reads and writes (which batch, a replay or a new receipt, what is
reinforced), so the service runs its decision inside one transaction over ``GateUnit``:
the unit's operations read and write rows, the decisions stay in ``gate.evidence``.
"""

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, NamedTuple, Protocol, TypeVar

from ..events.cards import EventCard
from .records import Assessment, Batch
from .trail import BatchUse, EventMark, MessageMark

__all__ = ["BatchOpening", "GateStorage", "GateUnit", "NewReceipt", "StoredReceipt"]

T = TypeVar("T")


class StoredReceipt(NamedTuple):
    batch_id: str
    payload: str
    """The canonical payload a replay is compared with (``gate.receipt_decision``)."""


class NewReceipt(NamedTuple):
    """A use recorded under ``receipt_id``: the events it adopted and its audit."""

    namespace: str
    receipt_id: str
    batch_id: str
    payload: str
    event_ids: Sequence[str]
    audit: dict[str, Any]


class BatchOpening(NamedTuple):
    """What a retrieval tool call exposed: its refs (with titles, where known)."""

    namespace: str
    thread_id: str
    tool: str
    evidence_refs: Sequence[str]
    titles: Mapping[str, str]


class GateUnit(Protocol):
    """Row operations inside one transaction (synchronous: the unit runs on the database's
    own thread, and its writes commit together or not at all)."""

    def batch_choices(self, space: str, thread_id: str, batch_id: str | None) -> list[Batch]:
        """The named batch of the thread (the latest by sequence when ``batch_id`` is None);
        when there is none, every batch of the thread (what ``gate.select_batch`` lists)."""
        ...

    def batches(self, space: str, thread_id: str, status: str | None = None) -> list[Batch]:
        """The thread's batches by sequence (optionally only those with ``status``)."""
        ...

    def latest_batch_id(self, space: str, thread_id: str) -> str | None: ...

    def batch_turn(self, batch_id: str) -> int:
        """The namespace turn the batch was opened at (``NotFound`` if unknown)."""
        ...

    def save_assessment(self, assessment: Assessment, now: str) -> Batch:
        """Stores (overwrites) the batch's assessment; the batch as now stored."""
        ...

    def receipt(self, space: str, receipt_id: str) -> StoredReceipt | None: ...

    def current_turn(self, space: str) -> int: ...

    def reinforce(self, space: str, event_ids: Iterable[str], turn: int, now: str) -> list[str]:
        """``mention_count + 1`` and ``last_adopted_turn = turn`` for each visible event of
        the namespace, once each; the ids reinforced, in input order."""
        ...

    def insert_receipt(self, receipt: NewReceipt, now: str) -> None:
        """Stores the receipt (a second one with the same id fails: replays are decided
        before, from ``receipt``)."""
        ...

    def mark_recorded(self, batch_id: str, now: str) -> Batch: ...


class GateStorage(Protocol):
    async def transaction(self, work: Callable[[GateUnit], T]) -> T:
        """``work`` run in one write transaction: all of its writes or none (it raises)."""
        ...

    async def open_batch(self, opening: BatchOpening, now: str) -> Batch:
        """A new unresolved batch, last in its thread (refs once each, in order), stamped
        with the namespace turn; ``titles`` kept for its refs only."""
        ...

    async def batches(self, space: str, thread_id: str, status: str | None) -> list[Batch]:
        """The thread's batches by sequence (optionally only those with ``status``)."""
        ...

    async def thread_uses(self, space: str, thread_id: str) -> list[BatchUse]:
        """Every batch of the thread by sequence, with its receipt if recorded."""
        ...

    async def marks(
        self, event_ids: Sequence[str], message_ids: Sequence[str], snippet_chars: int
    ) -> tuple[dict[str, EventMark], dict[str, MessageMark]]:
        """Of the ids that exist (whatever an event's status): events' titles, statuses and
        times; messages' roles, times and first ``snippet_chars`` characters."""
        ...

    async def set_pinned(self, event_id: str, pinned: bool, now: str) -> EventCard:
        """The card after the flag is set (``NotFound`` if unknown)."""
        ...

    async def forget(self, event_id: str, now: str) -> EventCard:
        """Hidden from every view with its graph provenance stripped (idempotent);
        ``InvalidInput`` for an archived event, ``NotFound`` if unknown."""
        ...

    async def restore(self, event_id: str, now: str) -> EventCard:
        """Undoes ``forget`` (superseded again when it has a successor; its graph
        projection queued again); idempotent."""
        ...

    async def card_at_turn(self, event_id: str) -> tuple[EventCard, int]:
        """The card whatever its status (``NotFound`` if unknown) and its space's turn."""
        ...
