"""What the blocks service needs from storage (the contract a database implements).

Recording a turn is one transaction that writes the turn's L5 messages and its receipt and
seals every full tail before it returns; *whether* a tail is full, where a block ends and
its L4/L3 texts are the blocks' rules (``sealing.py``), handed to the operation as a
``Sealer`` that the storage asks inside the transaction. Reads return blocks with what
their views need (``BlockParts``); the decayed levels and the views are computed by the
service with the rules, never by the storage.
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import NamedTuple, Protocol

from ..records import Block, BlockMark, Job, LiftSource, Message, MessageIn, TurnReceipt
from ..spaces.storage import SpaceDefaults
from .transcript import TranscriptMessage

__all__ = [
    "BlockParts",
    "BlocksStorage",
    "Conversation",
    "EventLink",
    "NewBlock",
    "OpenTail",
    "RailEntry",
    "RailRows",
    "ReceiptExists",
    "Sealer",
    "TurnToRecord",
]


class ReceiptExists(Exception):
    """The turn's receipt is already stored: the recording unit rolled back whole."""


@dataclass(frozen=True)
class EventLink:
    id: str
    title: str
    status: str


@dataclass(frozen=True)
class OpenTail:
    """The thread's unsealed turns against the block size that seals them."""

    turns: int
    messages: int
    capacity: int


@dataclass(frozen=True)
class Conversation:
    """One thread of a space as the selector lists it (its id is the host's session id)."""

    thread_id: str
    blocks: int
    messages: int
    turns: int
    last_at: datetime | None
    title: str = ""
    """The conversation's title where it came with one (an imported chat history)."""


@dataclass(frozen=True)
class NewBlock:
    """Where a block cut from the head of an open tail ends, and its computed views."""

    taken: int
    """How many of the tail's messages (in position order) the block takes."""
    readable: str
    condensed: str
    raw_tokens: int
    """Its L5 view's estimated tokens (stored, so the rail reads no messages to size it)."""


class Sealer(Protocol):
    """The blocks' sealing rules, asked by the storage inside the recording transaction."""

    def full(self, open_user_messages: int, block_turn_size: int) -> bool:
        """Whether an open tail with this many user messages is sealed now."""
        ...

    def cut(self, tail: Sequence[TranscriptMessage], block_turn_size: int) -> NewBlock:
        """The block the head of ``tail`` makes (at most ``block_turn_size`` user turns)."""
        ...


class TurnToRecord(NamedTuple):
    namespace: str
    thread_id: str
    messages: Sequence[MessageIn]
    at: datetime
    receipt_id: str
    defaults: SpaceDefaults
    """The block settings a space the turn creates starts with."""
    tools_thread: str | None = None


class BlockParts(NamedTuple):
    """A block with what its views and its decayed level are computed from."""

    block: Block
    messages: list[Message]
    """Its L5 messages in order (a block without any has no view: ``NotFound``)."""
    latest_ready: int
    """The thread's newest ready position (what ready blocks age against)."""
    decay_lambda: float


class RailEntry(NamedTuple):
    block: Block
    transcript: Sequence[TranscriptMessage]
    """Its messages, read only where its L5 size was not stored (``raw_tokens`` None)."""
    jobs: list[Job]
    """Its derivation jobs (summary, extraction), oldest first."""
    events: list[EventLink]
    """The events extracted from it, forgotten ones left out."""
    raw_tokens: int | None = None
    """Its L5 view's estimated tokens as stored when it sealed."""


class RailRows(NamedTuple):
    total: int
    """How many blocks the thread has (its newest block's sequence)."""
    tail: OpenTail
    entries: list[RailEntry]
    """The page's blocks, oldest first."""
    latest_ready: int
    decay_lambda: float


class BlocksStorage(Protocol):
    async def record_turn(self, turn: TurnToRecord, sealer: Sealer) -> TurnReceipt:
        """One transaction: the turn's messages, its receipt and provenance, the namespace
        and thread made on first use, and every tail ``sealer`` finds full sealed into a
        pending block with its summary job. ``ReceiptExists`` (nothing written) when the
        receipt is stored already; ``InvalidInput`` when no message is the user's."""
        ...

    async def replayed_receipt(
        self, space: str, receipt_id: str, thread_id: str, messages: Sequence[MessageIn]
    ) -> TurnReceipt:
        """What the receipt recorded (``replayed``); ``ReceiptConflict`` when it recorded
        another turn than ``messages`` in ``thread_id``, ``NotFound`` when unknown."""
        ...

    async def holds_turn(
        self, space: str, receipt_id: str, thread_id: str, messages: Sequence[MessageIn]
    ) -> bool:
        """Whether the receipt is stored with exactly this turn."""
        ...

    async def recorded_receipts(self, space: str, receipt_ids: Sequence[str]) -> set[str]:
        """The receipts among ``receipt_ids`` that are stored."""
        ...

    async def seal_tail(self, space: str, thread_id: str, now: str, sealer: Sealer) -> str | None:
        """One transaction: the whole open tail sealed as one block; None if it is empty."""
        ...

    async def has_idle_tails(self, before: datetime) -> bool:
        """Whether any open tail's newest message is older than ``before`` (a read)."""
        ...

    async def seal_idle_tails(self, before: datetime, now: str, sealer: Sealer) -> list[str]:
        """One transaction: every open tail whose newest message is older than ``before``
        sealed whole; the new blocks' ids."""
        ...

    async def parts(
        self, space: str | None = None, thread_id: str | None = None
    ) -> list[BlockParts]:
        """Every block (of the space, of the thread) by space, thread and sequence."""
        ...

    async def block(self, block_id: str) -> BlockParts:
        """One block; ``NotFound`` when unknown."""
        ...

    async def recent_parts(
        self, space: str, thread_id: str | None, limit: int, offset: int = 0
    ) -> tuple[list[BlockParts], int]:
        """The newest ``limit`` ready blocks of the space (or of its thread) after the
        ``offset`` newest, oldest first, and how many ready blocks it holds in all."""
        ...

    async def marks(self, space: str, thread_id: str) -> list[BlockMark]:
        """The thread's blocks oldest first, without their texts."""
        ...

    async def messages(self, block_id: str) -> list[Message]:
        """The block's L5 messages in order; ``NotFound`` when the block is unknown."""
        ...

    async def open_tail(self, space: str, thread_id: str) -> list[Message]:
        """The thread's unsealed messages in order."""
        ...

    async def mark_ready(self, block_id: str, now: str, derived: dict[str, object] | None) -> Block:
        """The block ready at the thread's next ready position, anchored at L5 there (a
        ready block is returned as it is); ``NotFound`` when unknown."""
        ...

    async def reanchor(
        self, block_id: str, level_of: Callable[[BlockParts], int], source: LiftSource, now: str
    ) -> BlockParts:
        """One transaction: the ready block anchored at ``level_of(its parts)`` as of the
        thread's newest ready position, its parts after; ``BlockNotReady`` for a pending
        block, ``NotFound`` (nothing written) for an unknown one or one without messages."""
        ...

    async def conversations(self, space: str, limit: int) -> list[Conversation]:
        """The space's threads, most recently active first."""
        ...

    async def thread_titles(self, space: str) -> dict[str, str]:
        """The space's titled threads: thread id → title."""
        ...

    async def set_thread_titles(self, space: str, titles: dict[str, str]) -> int:
        """One transaction: the existing threads of ``titles`` titled; how many changed."""
        ...

    async def rail(
        self, space: str, thread_id: str, window: Callable[[int], tuple[int, int]]
    ) -> RailRows:
        """One read: the thread's blocks with sequence in ``window(total)`` (first, last);
        ``NotFound`` for an unknown thread."""
        ...

    async def rail_entry(self, block_id: str) -> RailRows:
        """One read: the block as the only entry of its thread's rail rows."""
        ...

    async def failed_job(self, block_id: str) -> Job | None:
        """The block's failed derivation job, the summary's first; ``NotFound`` when the
        block is unknown."""
        ...
