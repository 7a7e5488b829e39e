"""Blocks on the façade: recording turns, sealing tails, views at their decayed level,
expansion, and the block rail of a conversation (the short-term page).

A turn is one ``BEGIN IMMEDIATE`` transaction that writes L5 and seals a full tail into a
pending block (L4/L3 by rule) before any model is called. A shorter tail is sealed whole
when its session ends or goes idle, so no tail stays open for ever.
"""

import sqlite3
import uuid
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from ..clock import iso, to_utc, utc_now
from ..errors import InvalidInput, NotFound, require_names
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
from ..store import block_rail_rows as rail_rows
from ..store import block_rows
from ..store.sealing import idle_tails, seal_idle_tails, seal_whole_tail
from ..store.turns import (
    ReceiptExists,
    existing_receipts,
    receipt_fingerprint,
    record_turn,
    replayed_receipt,
    turn_fingerprint,
)
from ..text.clean import valid_text
from . import rail
from . import rules as block_rules
from .rail import RAIL_PAGE, BlockRail, Conversation, RailBlock, RailContext


class BlocksService(ServiceBase):
    """Recording and reading blocks."""

    async def append_turn(
        self,
        namespace: str,
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
            namespace, thread_id, messages, at=at, receipt_id=receipt_id, tools_thread=tools_thread
        )

    async def holds_turn(
        self,
        namespace: str,
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
        fingerprint = turn_fingerprint(valid_text(thread_id), messages)
        receipt = valid_text(receipt_id)
        stored = await self.db.read(lambda raw: receipt_fingerprint(raw, namespace, receipt))
        return stored == fingerprint

    async def record_turn(
        self,
        namespace: str,
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
        require_names(namespace=namespace, thread_id=thread_id)
        namespace, thread_id = valid_text(namespace), valid_text(thread_id)
        receipt_id = valid_text(receipt_id) if receipt_id else None
        moment = to_utc(at) if at else utc_now()
        receipt = receipt_id or f"auto:{uuid.uuid4().hex}"
        defaults = self._defaults

        def unit(raw: sqlite3.Connection) -> TurnReceipt:
            return record_turn(
                raw, namespace, thread_id, messages, moment, receipt, defaults, tools_thread
            )

        try:
            return await self.db.write(unit)
        except ReceiptExists:
            # Rare path: the insert found the receipt, the whole unit rolled back.
            fingerprint = turn_fingerprint(thread_id, messages)
            return await self.db.read(
                lambda raw: replayed_receipt(raw, namespace, receipt, fingerprint)
            )

    async def recorded_receipts(self, namespace: str, receipt_ids: Sequence[str]) -> set[str]:
        """The receipts among ``receipt_ids`` already recorded: what a host catching up on
        turns it could not record asks before recording the rest."""
        ids = [valid_text(receipt) for receipt in receipt_ids]
        return await self.db.read(lambda raw: existing_receipts(raw, namespace, ids))

    async def seal_tail(self, namespace: str, thread_id: str) -> str | None:
        """Seal the thread's open tail now (end of a session or an import); None if empty."""
        now = iso(utc_now())
        return await self.db.write(lambda raw: seal_whole_tail(raw, namespace, thread_id, now))

    async def seal_idle_tails(self, before: datetime) -> list[str]:
        """Seal whole every open tail (of any space) whose newest message is older than
        ``before``: a conversation that went quiet without ending still becomes a block.

        Looks first without a write lock: the usual answer is that nothing is idle."""
        cutoff = to_utc(before)
        if not await self.db.read(lambda raw: idle_tails(raw, cutoff)):
            return []
        now = iso(utc_now())
        return await self.db.write(lambda raw: seal_idle_tails(raw, cutoff, now))

    # -- reading blocks ------------------------------------------------------------------

    async def views(
        self, namespace: str | None = None, thread_id: str | None = None
    ) -> list[BlockView]:
        """Every block with its current decayed level and the token size of each view."""

        def query(raw: sqlite3.Connection) -> list[BlockView]:
            found = block_rows.list_blocks(raw, namespace, thread_id)
            return [block_view(raw, block) for block in found]

        return await self.db.read(query)

    async def marks(self, namespace: str, thread_id: str) -> list[BlockMark]:
        """The thread's blocks with their turn ranges and when each was sealed and became
        ready, without their texts (the chat's status rows)."""
        return await self.db.read(
            lambda raw: block_rows.thread_block_marks(raw, namespace, thread_id)
        )

    async def view(self, block_id: str, level: int | None = None) -> BlockView:
        """One block rendered at ``level`` (default: its current decayed level)."""
        return await self.db.read(
            lambda raw: block_view(raw, block_rows.get_block(raw, block_id), level)
        )

    async def messages(self, block_id: str) -> list[Message]:
        def query(raw: sqlite3.Connection) -> list[Message]:
            block_rows.get_block(raw, block_id)
            return block_rows.block_messages(raw, block_id)

        return await self.db.read(query)

    async def open_tail(self, namespace: str, thread_id: str) -> list[Message]:
        return await self.db.read(lambda raw: block_rows.open_tail(raw, namespace, thread_id))

    async def mark_ready(self, block_id: str, derived: dict[str, object] | None = None) -> Block:
        """Mark a block ready (normally done by derivation once L0–L2 and events exist)."""
        now = iso(utc_now())
        return await self.db.write(lambda raw: block_rows.mark_ready(raw, block_id, now, derived))

    async def expand(
        self, block_id: str, target: Any = None, source: LiftSource = "user", strict: bool = False
    ) -> BlockView:
        """Lift (or lower) a ready block's view and re-anchor its decay there; ``strict``
        (a person's typed level) refuses a target that is not a level name."""
        if source not in ("user", "agent"):
            raise InvalidInput("source must be 'user' or 'agent'")
        now = iso(utc_now())

        def unit(raw: sqlite3.Connection) -> BlockView:
            current, _ = current_level(raw, block_rows.get_block(raw, block_id))
            if strict:
                level = block_rules.strict_target_level(str(target), current)
            else:
                level = block_rules.normalize_target_level(target, current)
            block = block_rows.reanchor(raw, block_id, level, source, now)
            return block_view(raw, block)

        return await self.db.write(unit)

    # -- the block rail ------------------------------------------------------------------

    async def conversations(self, namespace: str, limit: int = 100) -> list[Conversation]:
        """The space's conversations (threads), most recently active first."""
        return await self.db.read(lambda raw: rail_rows.conversations(raw, namespace, limit))

    async def thread_titles(self, namespace: str) -> dict[str, str]:
        """The space's titled conversations: thread id → title."""
        return await self.db.read(lambda raw: rail_rows.thread_titles(raw, namespace))

    async def set_thread_titles(self, namespace: str, titles: dict[str, str]) -> int:
        """Title existing conversations (an imported chat history's own titles), one
        transaction; how many titles changed."""
        clean = {thread: " ".join(title.split()) for thread, title in titles.items()}
        named = {thread: title for thread, title in clean.items() if title}
        if not named:
            return 0
        return await self.db.write(lambda raw: rail_rows.set_thread_titles(raw, namespace, named))

    async def rail(
        self, namespace: str, thread_id: str, offset: int = 0, size: int = RAIL_PAGE
    ) -> BlockRail:
        """``size`` blocks of the thread oldest → newest, ``offset`` newest blocks back; the
        newest page (offset 0) ends with the open tail."""

        def query(raw: sqlite3.Connection) -> BlockRail:
            total, tail = rail_rows.thread_tail(raw, namespace, thread_id)
            first, last = rail.page_bounds(total, offset, size)
            found = rail_rows.blocks_between(raw, namespace, thread_id, first, last)
            shown = rail_blocks(raw, found, total)
            return BlockRail(thread_id, total, offset, shown, tail if offset == 0 else None)

        return await self.db.read(query)

    async def rail_block(self, block_id: str) -> RailBlock:
        """One block as the rail shows it (after an action on its card)."""

        def query(raw: sqlite3.Connection) -> RailBlock:
            block = block_rows.get_block(raw, block_id)
            total, _ = rail_rows.thread_tail(raw, block.namespace, block.thread_id)
            return rail_blocks(raw, [block], total)[0]

        return await self.db.read(query)

    async def failed_job(self, block_id: str) -> Job | None:
        """The block's failed derivation job (what "retry summary" retries), if it has one."""

        def query(raw: sqlite3.Connection) -> Job | None:
            block_rows.get_block(raw, block_id)
            return rail_rows.failed_job(raw, block_id)

        return await self.db.read(query)


def rail_blocks(raw: sqlite3.Connection, blocks: list[Block], newest: int) -> list[RailBlock]:
    """Blocks of one thread with their sizes, level, jobs and events: one query each for
    the messages, jobs and events of all of them."""
    if not blocks:
        return []
    namespace, thread_id = blocks[0].namespace, blocks[0].thread_id
    latest = block_rows.latest_ready_position(raw, namespace, thread_id)
    context = RailContext(latest, newest, block_rows.decay_lambda(raw, namespace))
    ids = [block.id for block in blocks]
    messages, jobs = rail_rows.transcripts_of(raw, ids), rail_rows.jobs_of(raw, ids)
    events = rail_rows.events_of(raw, ids)
    out = []
    for block in blocks:
        its_jobs = jobs.get(block.id, [])
        error = next((job.last_error for job in its_jobs if job.status == "failed"), None)
        states = [job.status for job in its_jobs]
        out.append(
            rail.rail_block(
                block, messages.get(block.id, []), context, states, events.get(block.id, []), error
            )
        )
    return out


def current_level(raw: sqlite3.Connection, block: Block) -> tuple[int, int]:
    """(level, age): pending blocks stay at L5 and never age."""
    if block.processing_status != "ready" or block.pointer_anchor_position is None:
        return 5, 0
    latest = block_rows.latest_ready_position(raw, block.namespace, block.thread_id)
    level = rail.level_now(block, latest, block_rows.decay_lambda(raw, block.namespace))
    return level, max(0, latest - (block.ready_position or latest))


def block_view(raw: sqlite3.Connection, block: Block, level: int | None = None) -> BlockView:
    """The block rendered at ``level`` (default: its current decayed level)."""
    messages = block_rows.block_messages(raw, block.id)
    if not messages:
        raise NotFound(f"block {block.id} has no messages")
    current, age = current_level(raw, block)
    shown = current if level is None else block_rules.clamp_level(level)
    return BlockView(
        block=block,
        current_level=current,
        age=age,
        view_tokens=block_rules.view_token_sizes(block, messages),
        text=block_rules.render_level(block, shown, messages),
    )


def _turn_messages(
    user: str, assistant: str, tool_calls: Sequence[ToolTrace | dict[str, Any]], at: datetime | None
) -> list[MessageIn]:
    """A completed turn as the messages ``append_turn`` records: the user's, then the answer."""
    traces = tuple(t if isinstance(t, ToolTrace) else ToolTrace(**t) for t in tool_calls)
    return [
        MessageIn(role="user", content=user, at=at),
        MessageIn(role="assistant", content=assistant, tool_calls=traces, at=at),
    ]
