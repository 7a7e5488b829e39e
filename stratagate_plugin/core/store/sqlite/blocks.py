"""The blocks' storage contract (``core/blocks/storage.py``) on SQLite."""

import sqlite3
from collections.abc import Callable, Sequence
from datetime import datetime

from ...blocks.storage import (
    BlockParts,
    Conversation,
    OpenTail,
    RailEntry,
    RailRows,
    Sealer,
    TurnToRecord,
)
from ...errors import NotFound
from ...records import Block, BlockMark, Job, LiftSource, Message, MessageIn, TurnReceipt
from .. import block_rail_rows as rail_rows
from .. import block_rows, sealing, turns
from ..units import UnitDatabase


class SqliteBlocksStorage:
    def __init__(self, db: UnitDatabase) -> None:
        self.db = db

    async def record_turn(self, turn: TurnToRecord, sealer: Sealer) -> TurnReceipt:
        return await self.db.write(lambda raw: _record_turn(raw, turn, sealer))

    async def replayed_receipt(
        self, space: str, receipt_id: str, thread_id: str, messages: Sequence[MessageIn]
    ) -> TurnReceipt:
        fingerprint = turns.turn_fingerprint(thread_id, messages)
        return await self.db.read(
            lambda raw: turns.replayed_receipt(raw, space, receipt_id, fingerprint)
        )

    async def holds_turn(
        self, space: str, receipt_id: str, thread_id: str, messages: Sequence[MessageIn]
    ) -> bool:
        fingerprint = turns.turn_fingerprint(thread_id, messages)
        stored = await self.db.read(lambda raw: turns.receipt_fingerprint(raw, space, receipt_id))
        return stored == fingerprint

    async def recorded_receipts(self, space: str, receipt_ids: Sequence[str]) -> set[str]:
        ids = list(receipt_ids)
        return await self.db.read(lambda raw: turns.existing_receipts(raw, space, ids))

    async def seal_tail(self, space: str, thread_id: str, now: str, sealer: Sealer) -> str | None:
        return await self.db.write(
            lambda raw: sealing.seal_whole_tail(raw, space, thread_id, now, sealer)
        )

    async def has_idle_tails(self, before: datetime) -> bool:
        return bool(await self.db.read(lambda raw: sealing.idle_tails(raw, before)))

    async def seal_idle_tails(self, before: datetime, now: str, sealer: Sealer) -> list[str]:
        return await self.db.write(lambda raw: sealing.seal_idle_tails(raw, before, now, sealer))

    async def parts(
        self, space: str | None = None, thread_id: str | None = None
    ) -> list[BlockParts]:
        return await self.db.read(lambda raw: _listed_parts(raw, space, thread_id))

    async def recent_parts(
        self, space: str, thread_id: str | None, limit: int, offset: int = 0
    ) -> tuple[list[BlockParts], int]:
        return await self.db.read(lambda raw: _recent_parts(raw, space, thread_id, limit, offset))

    async def block(self, block_id: str) -> BlockParts:
        return await self.db.read(
            lambda raw: block_rows.block_parts(raw, block_rows.get_block(raw, block_id))
        )

    async def marks(self, space: str, thread_id: str) -> list[BlockMark]:
        return await self.db.read(lambda raw: block_rows.thread_block_marks(raw, space, thread_id))

    async def messages(self, block_id: str) -> list[Message]:
        return await self.db.read(lambda raw: _messages(raw, block_id))

    async def open_tail(self, space: str, thread_id: str) -> list[Message]:
        return await self.db.read(lambda raw: block_rows.open_tail(raw, space, thread_id))

    async def mark_ready(self, block_id: str, now: str, derived: dict[str, object] | None) -> Block:
        return await self.db.write(lambda raw: block_rows.mark_ready(raw, block_id, now, derived))

    async def reanchor(
        self, block_id: str, level_of: Callable[[BlockParts], int], source: LiftSource, now: str
    ) -> BlockParts:
        return await self.db.write(lambda raw: _reanchor(raw, block_id, level_of, source, now))

    async def conversations(self, space: str, limit: int) -> list[Conversation]:
        return await self.db.read(lambda raw: rail_rows.conversations(raw, space, limit))

    async def thread_titles(self, space: str) -> dict[str, str]:
        return await self.db.read(lambda raw: rail_rows.thread_titles(raw, space))

    async def set_thread_titles(self, space: str, titles: dict[str, str]) -> int:
        return await self.db.write(lambda raw: rail_rows.set_thread_titles(raw, space, titles))

    async def rail(
        self, space: str, thread_id: str, window: Callable[[int], tuple[int, int]]
    ) -> RailRows:
        return await self.db.read(lambda raw: _rail(raw, space, thread_id, window))

    async def rail_entry(self, block_id: str) -> RailRows:
        return await self.db.read(lambda raw: _rail_entry(raw, block_id))

    async def failed_job(self, block_id: str) -> Job | None:
        return await self.db.read(lambda raw: _failed_job(raw, block_id))


def _record_turn(raw: sqlite3.Connection, turn: TurnToRecord, sealer: Sealer) -> TurnReceipt:
    space, thread_id, messages, at, receipt_id, defaults, tools_thread = turn
    settings = turns.NewSpaceDefaults(defaults.block_turn_size, defaults.block_decay_lambda)
    return turns.record_turn(
        raw, space, thread_id, messages, at, receipt_id, settings, sealer, tools_thread
    )


def _listed_parts(
    raw: sqlite3.Connection, space: str | None, thread_id: str | None
) -> list[BlockParts]:
    """Every listed block's parts."""
    return _parts_of(raw, block_rows.list_blocks(raw, space, thread_id))


def _recent_parts(
    raw: sqlite3.Connection, space: str, thread_id: str | None, limit: int, offset: int
) -> tuple[list[BlockParts], int]:
    """A page of the newest ready blocks' parts, oldest first, and the ready blocks' count;
    messages read for those blocks only."""
    blocks, total = block_rows.recent_ready(raw, space, thread_id, limit, offset)
    return _parts_of(raw, blocks), total


def _parts_of(raw: sqlite3.Connection, blocks: list[Block]) -> list[BlockParts]:
    """Each block with its messages; the ready position and λ read once a thread."""
    found: list[BlockParts] = []
    standing: dict[tuple[str, str], tuple[int, float]] = {}
    for block in blocks:
        key = (block.namespace, block.thread_id)
        if key not in standing:
            standing[key] = (
                block_rows.latest_ready_position(raw, *key),
                block_rows.decay_lambda(raw, block.namespace),
            )
        latest, decay = standing[key]
        found.append(BlockParts(block, block_rows.block_messages(raw, block.id), latest, decay))
    return found


def _messages(raw: sqlite3.Connection, block_id: str) -> list[Message]:
    block_rows.get_block(raw, block_id)
    return block_rows.block_messages(raw, block_id)


def _reanchor(
    raw: sqlite3.Connection,
    block_id: str,
    level_of: Callable[[BlockParts], int],
    source: LiftSource,
    now: str,
) -> BlockParts:
    """Re-anchor at the level the rules choose from the block as it stands; a block without
    messages rolls the unit back (``NotFound``), as its view could not be shown."""
    parts = block_rows.block_parts(raw, block_rows.get_block(raw, block_id))
    block = block_rows.reanchor(raw, block_id, level_of(parts), source, now)
    if not parts.messages:
        raise NotFound(f"block {block_id} has no messages")
    return parts._replace(block=block)


def _rail(
    raw: sqlite3.Connection,
    space: str,
    thread_id: str,
    window: Callable[[int], tuple[int, int]],
) -> RailRows:
    total, tail = rail_rows.thread_tail(raw, space, thread_id)
    first, last = window(total)
    found = rail_rows.blocks_between(raw, space, thread_id, first, last)
    return _rail_rows(raw, space, thread_id, total, tail, found)


def _rail_entry(raw: sqlite3.Connection, block_id: str) -> RailRows:
    block = block_rows.get_block(raw, block_id)
    total, tail = rail_rows.thread_tail(raw, block.namespace, block.thread_id)
    return _rail_rows(raw, block.namespace, block.thread_id, total, tail, [block])


def _rail_rows(
    raw: sqlite3.Connection,
    space: str,
    thread_id: str,
    total: int,
    tail: OpenTail,
    blocks: list[Block],
) -> RailRows:
    """One query each for the jobs and events of all the page's blocks, their stored L5
    sizes, and the messages of only those whose size was not stored."""
    latest = block_rows.latest_ready_position(raw, space, thread_id)
    decay = block_rows.decay_lambda(raw, space)
    if not blocks:
        return RailRows(total, tail, [], latest, decay)
    ids = [block.id for block in blocks]
    sizes = rail_rows.raw_tokens_of(raw, ids)
    messages = rail_rows.transcripts_of(raw, [i for i in ids if sizes.get(i) is None])
    jobs, events = rail_rows.jobs_of(raw, ids), rail_rows.events_of(raw, ids)
    entries = [
        RailEntry(
            b, messages.get(b.id, []), jobs.get(b.id, []), events.get(b.id, []), sizes.get(b.id)
        )
        for b in blocks
    ]
    return RailRows(total, tail, entries, latest, decay)


def _failed_job(raw: sqlite3.Connection, block_id: str) -> Job | None:
    block_rows.get_block(raw, block_id)
    return rail_rows.failed_job(raw, block_id)
