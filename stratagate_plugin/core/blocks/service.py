"""Blocks on the façade: recording turns, sealing tails, views at their decayed level,
expansion, and the block rail of a conversation (the short-term page).

A turn is one ``BEGIN IMMEDIATE`` transaction that writes L5 and seals a full tail into a
pending block (L4/L3 by rule) before any model is called. A shorter tail is sealed whole
when its session ends or goes idle, so no tail stays open for ever.
"""

import uuid
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from ..clock import iso, to_utc, utc_now
from ..errors import InvalidInput, require_names
from ..records import (
    Block,
    BlockMark,
    BlockView,
    Job,
    LiftSource,
    Message,
    MessageIn,
    ToolTrace,
    TurnReceipt,
)
from ..service_base import ServiceBase
from ..text.clean import valid_text
from . import rail
from . import rules as block_rules
from .rail import RAIL_PAGE, BlockRail, Conversation, RailBlock
from .sealing import SEALER
from .storage import BlockParts, BlocksStorage, ReceiptExists, TurnToRecord
from .views import block_view, current_level, rail_blocks

__all__ = ["BlocksService"]

RECENT_BLOCKS = 40
"""Ready blocks the agent's block listing shows at most, the newest (``recent_views``)."""


class BlocksService(ServiceBase):
    """Recording and reading blocks."""

    @property
    def store(self) -> BlocksStorage:
        return self.storage.blocks

    async def append_turn(
        self,
        space: str,
        thread_id: str,
        *,
        user: str,
        assistant: str = "",
        tool_calls: Sequence[ToolTrace | dict[str, Any]] = (),
        at: datetime | None = None,
        receipt_id: str | None = None,
        tools_thread: str | None = None,
    ) -> TurnReceipt:
        """Record one completed turn (user + assistant with its tool traces)."""
        messages = _turn_messages(user, assistant, tool_calls, at)
        return await self.record_turn(
            space, thread_id, messages, at=at, receipt_id=receipt_id, tools_thread=tools_thread
        )

    async def holds_turn(
        self,
        space: str,
        thread_id: str,
        receipt_id: str,
        *,
        user: str,
        assistant: str = "",
        tool_calls: Sequence[ToolTrace | dict[str, Any]] = (),
        at: datetime | None = None,
    ) -> bool:
        """Whether ``receipt_id`` was recorded with exactly this turn (as ``append_turn``
        would record it): a receipt keyed by a turn number alone may name another turn that
        reused the number."""
        messages = _turn_messages(user, assistant, tool_calls, at)
        thread, receipt = valid_text(thread_id), valid_text(receipt_id)
        return await self.store.holds_turn(space, receipt, thread, messages)

    async def record_turn(
        self,
        space: str,
        thread_id: str,
        messages: Sequence[MessageIn],
        *,
        at: datetime | None = None,
        receipt_id: str | None = None,
        tools_thread: str | None = None,
    ) -> TurnReceipt:
        """Record a turn of any messages (it must contain a user message); idempotent by receipt.

        Events written during the turn cite its user message, and an answer composed from
        memory is marked, in the same transaction; ``tools_thread`` names the thread its tool
        calls ran under when that is not ``thread_id`` (an MCP client's named session).
        Names pass the U+FFFD rule like the texts (``MessageIn``) do."""
        require_names(namespace=space, thread_id=thread_id)
        space, thread_id = valid_text(space), valid_text(thread_id)
        receipt_id = valid_text(receipt_id) if receipt_id else None
        moment = to_utc(at) if at else utc_now()
        receipt = receipt_id or f"auto:{uuid.uuid4().hex}"
        turn = TurnToRecord(
            space, thread_id, messages, moment, receipt, self._defaults, tools_thread
        )
        try:
            return await self.store.record_turn(turn, SEALER)
        except ReceiptExists:
            # Rare path: the insert found the receipt, the whole unit rolled back.
            return await self.store.replayed_receipt(space, receipt, thread_id, messages)

    async def recorded_receipts(self, space: str, receipt_ids: Sequence[str]) -> set[str]:
        """The receipts among ``receipt_ids`` already recorded: what a host catching up on
        turns it could not record asks before recording the rest."""
        ids = [valid_text(receipt) for receipt in receipt_ids]
        return await self.store.recorded_receipts(space, ids)

    async def seal_tail(self, space: str, thread_id: str) -> str | None:
        """Seal the thread's open tail now (end of a session or an import); None if empty."""
        return await self.store.seal_tail(space, thread_id, iso(utc_now()), SEALER)

    async def seal_idle_tails(self, before: datetime) -> list[str]:
        """Seal whole every open tail (of any space) whose newest message is older than
        ``before``: a conversation that went quiet without ending still becomes a block.

        Looks first without a write lock: the usual answer is that nothing is idle."""
        cutoff = to_utc(before)
        if not await self.store.has_idle_tails(cutoff):
            return []
        return await self.store.seal_idle_tails(cutoff, iso(utc_now()), SEALER)

    # -- reading blocks ------------------------------------------------------------------

    async def views(
        self, space: str | None = None, thread_id: str | None = None
    ) -> list[BlockView]:
        """Every block with its current decayed level and the token size of each view."""
        return [block_view(parts) for parts in await self.store.parts(space, thread_id)]

    async def recent_views(
        self,
        space: str,
        thread_id: str | None = None,
        limit: int = RECENT_BLOCKS,
        offset: int = 0,
    ) -> tuple[list[BlockView], int]:
        """The newest ``limit`` ready blocks of the thread (``None``: of the space) after the
        ``offset`` newest, at their decayed levels, oldest first, and how many ready blocks
        there are in all: what the agent lists, a page whatever the space holds (every
        block of a space of 21,000 took 17 s and would not fit a prompt)."""
        listed, total = await self.store.recent_parts(space, thread_id, limit, offset)
        return [block_view(parts) for parts in listed], total

    async def ready_parts(self, space: str, thread_id: str) -> list[BlockParts]:
        """The thread's ready blocks with their messages, its newest ready position and λ,
        in one read: what the history's checkpoints are worked out from (every view of
        every level, with no read a block or a level)."""
        listed = await self.store.parts(space, thread_id)
        return [parts for parts in listed if parts.block.processing_status == "ready"]

    async def marks(self, space: str, thread_id: str) -> list[BlockMark]:
        """The thread's blocks with their turn ranges and when each was sealed and became
        ready, without their texts (the chat's status rows)."""
        return await self.store.marks(space, thread_id)

    async def view(self, block_id: str, level: int | None = None) -> BlockView:
        """One block rendered at ``level`` (default: its current decayed level)."""
        return block_view(await self.store.block(block_id), level)

    async def messages(self, block_id: str) -> list[Message]:
        return await self.store.messages(block_id)

    async def open_tail(self, space: str, thread_id: str) -> list[Message]:
        return await self.store.open_tail(space, thread_id)

    async def mark_ready(self, block_id: str, derived: dict[str, object] | None = None) -> Block:
        """Mark a block ready (normally done by derivation once L0–L2 and events exist)."""
        return await self.store.mark_ready(block_id, iso(utc_now()), derived)

    async def expand(
        self, block_id: str, target: Any = None, source: LiftSource = "user", strict: bool = False
    ) -> BlockView:
        """Lift (or lower) a ready block's view and re-anchor its decay there; ``strict``
        (a person's typed level) refuses a target that is not a level name."""
        if source not in ("user", "agent"):
            raise InvalidInput("source must be 'user' or 'agent'")

        def level_of(parts: BlockParts) -> int:
            current, _ = current_level(parts.block, parts.latest_ready, parts.decay_lambda)
            if strict:
                return block_rules.strict_target_level(str(target), current)
            return block_rules.normalize_target_level(target, current)

        parts = await self.store.reanchor(block_id, level_of, source, iso(utc_now()))
        return block_view(parts)

    # -- the block rail ------------------------------------------------------------------

    async def conversations(self, space: str, limit: int = 100) -> list[Conversation]:
        """The space's conversations (threads), most recently active first."""
        return await self.store.conversations(space, limit)

    async def thread_titles(self, space: str) -> dict[str, str]:
        """The space's titled conversations: thread id → title."""
        return await self.store.thread_titles(space)

    async def set_thread_titles(self, space: str, titles: dict[str, str]) -> int:
        """Title existing conversations (an imported chat history's own titles), one
        transaction; how many titles changed."""
        clean = {thread: " ".join(title.split()) for thread, title in titles.items()}
        named = {thread: title for thread, title in clean.items() if title}
        if not named:
            return 0
        return await self.store.set_thread_titles(space, named)

    async def rail(
        self, space: str, thread_id: str, offset: int = 0, size: int = RAIL_PAGE
    ) -> BlockRail:
        """``size`` blocks of the thread oldest → newest, ``offset`` newest blocks back; the
        newest page (offset 0) ends with the open tail."""
        found = await self.store.rail(
            space, thread_id, lambda total: rail.page_bounds(total, offset, size)
        )
        tail = found.tail if offset == 0 else None
        return BlockRail(thread_id, found.total, offset, rail_blocks(found), tail)

    async def rail_block(self, block_id: str) -> RailBlock:
        """One block as the rail shows it (after an action on its card)."""
        return rail_blocks(await self.store.rail_entry(block_id))[0]

    async def failed_job(self, block_id: str) -> Job | None:
        """The block's failed derivation job (what "retry summary" retries), if it has one."""
        return await self.store.failed_job(block_id)


def _turn_messages(
    user: str, assistant: str, tool_calls: Sequence[ToolTrace | dict[str, Any]], at: datetime | None
) -> list[MessageIn]:
    """A completed turn as the messages ``append_turn`` records: the user's, then the answer."""
    traces = tuple(t if isinstance(t, ToolTrace) else ToolTrace(**t) for t in tool_calls)
    return [
        MessageIn(role="user", content=user, at=at),
        MessageIn(role="assistant", content=assistant, tool_calls=traces, at=at),
    ]
