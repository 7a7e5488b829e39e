"""``BlocksStorage``: recording turns (sealing what the rules find full), receipts, reads
of blocks and tails, readiness and re-anchoring, the rail's rows.

The engine's spaces seal a block every two user turns (``conftest``)."""

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import pytest

from stratagate_plugin.core.blocks.sealing import SEALER
from stratagate_plugin.core.blocks.storage import (
    BlockParts,
    NewBlock,
    ReceiptExists,
    TurnToRecord,
)
from stratagate_plugin.core.blocks.transcript import TranscriptMessage
from stratagate_plugin.core.errors import (
    BlockNotReady,
    InvalidInput,
    NotFound,
    ReceiptConflict,
)
from stratagate_plugin.core.memory import StrataGate
from stratagate_plugin.core.records import MessageIn

NS, THREAD = "contract", "t"
NOW = "2026-01-01T00:00:00+00:00"


@dataclass(frozen=True)
class Defaults:
    block_turn_size: int = 2
    block_decay_lambda: float = 0.3


class NeverFull:
    """A sealer whose tails never fill: the storage must seal nothing on its own."""

    def full(self, open_user_messages: int, block_turn_size: int) -> bool:
        return False

    def cut(self, tail: Sequence[TranscriptMessage], block_turn_size: int) -> NewBlock:
        raise AssertionError("asked to cut a tail it never called full")


def turn(text: str, receipt: str, thread: str = THREAD) -> TurnToRecord:
    messages = [MessageIn(role="user", content=text), MessageIn(role="assistant", content="ok")]
    at = datetime(2026, 1, 1, tzinfo=UTC)
    return TurnToRecord(NS, thread, messages, at, receipt, Defaults())


async def test_a_turn_is_recorded_and_a_full_tail_sealed_as_the_sealer_says(
    engine: StrataGate,
) -> None:
    store = engine.storage.blocks
    first = await store.record_turn(turn("Ana lives in Porto.", "r1"), SEALER)
    assert first.sealed_block_id is None and len(first.message_ids) == 2
    assert [m.content for m in await store.open_tail(NS, THREAD)] == ["Ana lives in Porto.", "ok"]
    second = await store.record_turn(turn("She paints.", "r2"), SEALER)
    assert second.sealed_block_id is not None and second.thread_turn == 2
    assert await store.open_tail(NS, THREAD) == []
    held = await store.record_turn(turn("More.", "r3", "u"), NeverFull())
    again = await store.record_turn(turn("Still more.", "r4", "u"), NeverFull())
    assert held.sealed_block_id is None and again.sealed_block_id is None
    assert len(await store.open_tail(NS, "u")) == 4


async def test_a_stored_receipt_writes_nothing_and_replays(engine: StrataGate) -> None:
    store = engine.storage.blocks
    recorded = await store.record_turn(turn("Biscuit is a beagle.", "r1"), SEALER)
    with pytest.raises(ReceiptExists):
        await store.record_turn(turn("Biscuit is a beagle.", "r1"), SEALER)
    assert len(await store.open_tail(NS, THREAD)) == 2
    same = turn("Biscuit is a beagle.", "r1")
    replay = await store.replayed_receipt(NS, "r1", THREAD, same.messages)
    assert replay.replayed and replay.message_ids == recorded.message_ids
    with pytest.raises(ReceiptConflict):
        await store.replayed_receipt(NS, "r1", THREAD, turn("Other.", "r1").messages)
    with pytest.raises(NotFound):
        await store.replayed_receipt(NS, "r9", THREAD, same.messages)
    with pytest.raises(InvalidInput):
        lone = TurnToRecord(
            NS, THREAD, [MessageIn(role="assistant", content="hi")], same.at, "x", Defaults()
        )
        await store.record_turn(lone, SEALER)


async def test_receipts_are_matched_by_turn_and_listed(engine: StrataGate) -> None:
    store = engine.storage.blocks
    recorded = turn("The kiln fires on Fridays.", "r1")
    await store.record_turn(recorded, SEALER)
    assert await store.holds_turn(NS, "r1", THREAD, recorded.messages) is True
    assert await store.holds_turn(NS, "r1", THREAD, turn("No.", "r1").messages) is False
    assert await store.holds_turn(NS, "r2", THREAD, recorded.messages) is False
    assert await store.recorded_receipts(NS, ["r2", "r1"]) == {"r1"}
    assert await store.recorded_receipts(NS, []) == set()


async def test_a_tail_is_sealed_whole_once(engine: StrataGate) -> None:
    store = engine.storage.blocks
    assert await store.seal_tail(NS, THREAD, NOW, SEALER) is None
    await store.record_turn(turn("Short session.", "r1"), SEALER)
    block_id = await store.seal_tail(NS, THREAD, NOW, SEALER)
    assert block_id is not None
    assert [m.content for m in await store.messages(block_id)] == ["Short session.", "ok"]
    assert await store.seal_tail(NS, THREAD, NOW, SEALER) is None


async def test_idle_tails_are_found_and_sealed(engine: StrataGate) -> None:
    store = engine.storage.blocks
    await store.record_turn(turn("Quiet now.", "r1"), SEALER)
    recorded_at = datetime(2026, 1, 1, tzinfo=UTC)
    assert await store.has_idle_tails(recorded_at) is False
    later = recorded_at + timedelta(hours=1)
    assert await store.has_idle_tails(later) is True
    [block_id] = await store.seal_idle_tails(later, NOW, SEALER)
    assert (await store.block(block_id)).block.thread_id == THREAD
    assert await store.has_idle_tails(later) is False
    assert await store.seal_idle_tails(later, NOW, SEALER) == []


async def _sealed(engine: StrataGate, thread: str = THREAD, blocks: int = 1) -> list[str]:
    ids = []
    for n in range(blocks):
        await engine.blocks.append_turn(NS, thread, user=f"Turn {n} one.", assistant="ok")
        receipt = await engine.blocks.append_turn(NS, thread, user=f"Turn {n} two.", assistant="ok")
        assert receipt.sealed_block_id is not None
        ids.append(receipt.sealed_block_id)
    return ids


async def test_blocks_are_read_with_their_parts(engine: StrataGate) -> None:
    store = engine.storage.blocks
    first, second = await _sealed(engine, blocks=2)
    [other] = await _sealed(engine, thread="u")
    listed = await store.parts(NS, THREAD)
    assert [p.block.id for p in listed] == [first, second]
    assert [p.block.id for p in await store.parts(NS)] == [first, second, other]
    one = await store.block(first)
    assert one.block.processing_status == "pending" and one.latest_ready == 0
    assert [m.content for m in one.messages] == ["Turn 0 one.", "ok", "Turn 0 two.", "ok"]
    assert one.decay_lambda == pytest.approx(engine.config.block_decay_lambda)
    assert [m.id for m in await store.marks(NS, THREAD)] == [first, second]
    with pytest.raises(NotFound):
        await store.block("blk_unknown")
    with pytest.raises(NotFound):
        await store.messages("blk_unknown")


async def test_ready_is_idempotent_and_a_ready_block_reanchors(engine: StrataGate) -> None:
    store = engine.storage.blocks
    [block_id] = await _sealed(engine)
    with pytest.raises(BlockNotReady):
        await store.reanchor(block_id, lambda parts: 3, "user", NOW)
    ready = await store.mark_ready(block_id, NOW, {"l0_title": "Turns"})
    assert ready.processing_status == "ready" and ready.l0_title == "Turns"
    assert await store.mark_ready(block_id, "2027-01-01T00:00:00+00:00", None) == ready
    seen: list[BlockParts] = []

    def level_of(parts: BlockParts) -> int:
        seen.append(parts)
        return 2

    lifted = await store.reanchor(block_id, level_of, "agent", NOW)
    assert seen[0].block.pointer_anchor_level == 5
    assert lifted.block.pointer_anchor_level == 2 and lifted.block.last_lifted_by == "agent"
    assert lifted.latest_ready == ready.ready_position
    with pytest.raises(NotFound):
        await store.mark_ready("blk_unknown", NOW, None)


async def test_conversations_and_their_titles(engine: StrataGate) -> None:
    store = engine.storage.blocks
    await _sealed(engine, thread="older")
    await _sealed(engine, thread="newer")
    listed = await store.conversations(NS, 10)
    assert {c.thread_id for c in listed} == {"older", "newer"}
    assert all(c.blocks == 1 and c.turns == 2 for c in listed)
    assert len(await store.conversations(NS, 1)) == 1
    assert await store.thread_titles(NS) == {}
    titles = {"older": "Pottery", "missing": "Nowhere"}
    assert await store.set_thread_titles(NS, titles) == 1
    assert await store.set_thread_titles(NS, titles) == 0
    assert await store.thread_titles(NS) == {"older": "Pottery"}


async def test_the_rail_reads_the_window_the_rules_choose(engine: StrataGate) -> None:
    store = engine.storage.blocks
    ids = await _sealed(engine, blocks=3)
    await engine.blocks.append_turn(NS, THREAD, user="Open.", assistant="ok")
    asked: list[int] = []

    def window(total: int) -> tuple[int, int]:
        asked.append(total)
        return 2, 3

    rows = await store.rail(NS, THREAD, window)
    assert asked == [3] and rows.total == 3
    assert [e.block.id for e in rows.entries] == ids[1:]
    assert rows.tail.turns == 1 and rows.tail.capacity == 2
    sized = (await engine.blocks.view(ids[1])).view_tokens["L5"]  # from its messages
    assert rows.entries[0].raw_tokens == sized and rows.entries[0].transcript == []  # stored
    assert [j.kind for j in rows.entries[0].jobs] == ["block_summary"]
    assert (await store.rail(NS, THREAD, lambda total: (5, 4))).entries == []
    single = await store.rail_entry(ids[0])
    assert [e.block.id for e in single.entries] == [ids[0]] and single.total == 3
    assert await store.failed_job(ids[0]) is None
    with pytest.raises(NotFound):
        await store.rail(NS, "nobody", window)
    with pytest.raises(NotFound):
        await store.failed_job("blk_unknown")
