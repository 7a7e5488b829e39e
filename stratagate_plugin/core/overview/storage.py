"""What the overview service needs from storage (the contract a database implements).

Counts are tallies read from indexes and the counters recording keeps, never from whole
tables; a usage receipt comes back as stored (its JSON decoded) and the service turns it
into an audit entry with the overview's rules.
"""

from datetime import datetime
from typing import Any, NamedTuple, Protocol

from ..records import Job

__all__ = ["OverviewStorage", "ReceiptRow", "SpaceTallies"]


class SpaceTallies(NamedTuple):
    """A space's blocks, events and jobs by state, its threads, messages, open-tail turns
    and the receipts that adopted an event."""

    namespace: str
    blocks: dict[str, int]
    events: dict[str, int]
    jobs: dict[str, dict[str, int]]
    """Job kind → status → how many."""
    threads: int
    messages: int
    open_turns: int
    adoptions: int


class ReceiptRow(NamedTuple):
    """A usage receipt with its JSON decoded and its batch's tool, thread and turn."""

    receipt_id: str
    batch_id: str
    event_ids: list[str]
    audit: dict[str, Any]
    created_at: str
    tool: str | None
    thread_id: str | None
    turn: int | None


class OverviewStorage(Protocol):
    async def tallies(self, space: str) -> SpaceTallies:
        """One consistent read of the space's counts (zeros for an unknown space)."""
        ...

    async def jobs(self, space: str, status: str | None, offset: int, limit: int) -> list[Job]:
        """Up to ``limit`` jobs of the space from ``offset`` (of one status, or all), last
        changed first."""
        ...

    async def retry_failed(self, space: str, now: datetime) -> int:
        """One transaction: every failed job of the space retried by its kind's rule (a
        derivation job reset in place, a topic batch queued again as a fresh job); how many."""
        ...

    async def receipts(self, space: str, offset: int, limit: int) -> list[ReceiptRow]:
        """Up to ``limit`` usage receipts of the space from ``offset``, newest first."""
        ...

    async def receipt(self, space: str, receipt_id: str) -> dict[str, Any] | None:
        """One usage receipt as stored, its JSON decoded, with its batch (None: unknown)."""
        ...

    async def set_every_space(self, block_turn_size: int, block_decay_lambda: float) -> int:
        """One transaction: the block size and decay written into every space, when each
        was last used left as it is; how many spaces."""
        ...
