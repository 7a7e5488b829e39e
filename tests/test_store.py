"""Recording, receipts, sealing, readiness, decay and expand through a real database file."""

import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from stratagate_plugin.core.config import MemoryConfig
from stratagate_plugin.core.errors import BlockNotReady, InvalidInput, NotFound, ReceiptConflict
from stratagate_plugin.core.memory import StrataGate
from stratagate_plugin.core.records import MessageIn

T0 = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)


async def say(memory: StrataGate, n: int, thread: str = "t1", ns: str = "ns") -> None:
    for i in range(n):
        await memory.blocks.append_turn(
            ns,
            thread,
            user=f"question {thread} {i}",
            assistant=f"answer {i}",
            at=T0 + timedelta(minutes=i),
            receipt_id=f"{thread}:{i}:{n}",
        )


async def test_append_turn_bumps_namespace_turn_and_stores_utc(
    memory: StrataGate, plain: sqlite3.Connection
) -> None:
    at = datetime(2025, 3, 1, 20, 0, tzinfo=UTC) + timedelta(hours=0)
    first = await memory.blocks.append_turn(
        "ns", "a", user="hello", assistant="hi", at=at, receipt_id="r1"
    )
    second = await memory.blocks.append_turn(
        "ns", "b", user="again", assistant="yes", receipt_id="r2"
    )
    assert (first.namespace_turn, second.namespace_turn) == (1, 2)
    assert (first.thread_turn, second.thread_turn) == (1, 1)
    row = plain.execute("SELECT created_at FROM messages WHERE id = ?", (first.message_ids[0],))
    assert row.fetchone()[0] == "2025-03-01T20:00:00+00:00"
    assert plain.execute("SELECT current_turn FROM namespaces").fetchone()[0] == 2


async def test_receipt_replay_is_a_no_op(memory: StrataGate, plain: sqlite3.Connection) -> None:
    first = await memory.blocks.append_turn(
        "ns", "t", user="u", assistant="a", at=T0, receipt_id="r"
    )
    again = await memory.blocks.append_turn(
        "ns", "t", user="u", assistant="a", at=T0, receipt_id="r"
    )
    assert again.replayed and again.message_ids == first.message_ids
    assert plain.execute("SELECT COUNT(*) FROM messages").fetchone()[0] == 2
    assert plain.execute("SELECT current_turn FROM namespaces").fetchone()[0] == 1


async def test_conflicting_receipt_replay_is_an_error(memory: StrataGate) -> None:
    await memory.blocks.append_turn("ns", "t", user="u", assistant="a", at=T0, receipt_id="r")
    with pytest.raises(ReceiptConflict):
        await memory.blocks.append_turn(
            "ns", "t", user="changed", assistant="a", at=T0, receipt_id="r"
        )


async def test_turn_without_user_message_is_rejected(memory: StrataGate) -> None:
    with pytest.raises(InvalidInput):
        await memory.blocks.record_turn("ns", "t", [MessageIn(role="assistant", content="x")])
    with pytest.raises(InvalidInput):
        await memory.blocks.append_turn("", "t", user="x")


async def test_sealing_happens_at_the_boundary_and_leaves_the_tail_open(
    memory: StrataGate, plain: sqlite3.Connection
) -> None:
    await say(memory, 2)
    assert await memory.blocks.views() == []
    await say(memory, 3, thread="t2")
    await say(memory, 1)  # t1 now has 3 turns → sealed; t2 sealed at its third turn
    await memory.blocks.append_turn("ns", "t1", user="fourth", assistant="x", receipt_id="t1:extra")
    blocks = await memory.blocks.views("ns", "t1")
    assert [(b.block.start_turn, b.block.end_turn) for b in blocks] == [(1, 3)]
    assert blocks[0].block.processing_status == "pending"
    tail = await memory.blocks.open_tail("ns", "t1")
    assert [m.content for m in tail] == ["fourth", "x"]
    jobs = plain.execute("SELECT kind, status FROM jobs ORDER BY created_at").fetchall()
    assert [tuple(j) for j in jobs] == [("block_summary", "pending")] * 2


async def test_sealed_block_stores_l4_l3_and_keeps_l5_rows(memory: StrataGate) -> None:
    for i, user in enumerate(["好的", "We ship on Friday.", "thanks"]):
        await memory.blocks.append_turn("ns", "t", user=user, assistant="ok", receipt_id=f"r{i}")
    [view] = await memory.blocks.views()
    assert "We ship on Friday." in view.block.l3_condensed
    assert "好的" not in view.block.l3_condensed and "好的" in view.block.l4_readable
    messages = await memory.blocks.messages(view.block.id)
    assert [m.content for m in messages][:2] == ["好的", "ok"]
    sizes = view.view_tokens
    assert sizes["L3"] <= sizes["L4"] <= sizes["L5"] and sizes["L0"] == 0


async def test_block_size_change_affects_future_sealing_only(memory: StrataGate) -> None:
    await say(memory, 3)
    await memory.spaces.set_block_turn_size("ns", 2)
    await memory.blocks.append_turn("ns", "t1", user="a", assistant="b", receipt_id="x1")
    await memory.blocks.append_turn("ns", "t1", user="c", assistant="d", receipt_id="x2")
    spans = [(v.block.start_turn, v.block.end_turn) for v in await memory.blocks.views()]
    assert spans == [(1, 3), (4, 5)]
    with pytest.raises(InvalidInput):
        await memory.spaces.set_block_turn_size("ns", 0)


async def test_lowering_block_size_seals_every_full_block_in_the_tail(db_path: Path) -> None:
    async with await StrataGate.open(db_path, MemoryConfig(block_turn_size=10)) as memory:
        await say(memory, 5)
        await memory.spaces.set_block_turn_size("ns", 2)
        await memory.blocks.append_turn("ns", "t1", user="6", assistant="x", receipt_id="six")
        spans = [(v.block.start_turn, v.block.end_turn) for v in await memory.blocks.views()]
    assert spans == [(1, 2), (3, 4), (5, 6)]


async def make_ready_blocks(memory: StrataGate, count: int) -> list[str]:
    await say(memory, 3 * count)
    ids = [v.block.id for v in await memory.blocks.views("ns", "t1")]
    for block_id in ids:
        await memory.blocks.mark_ready(block_id)
    return ids


async def test_only_ready_blocks_age_and_pending_ones_stay_l5(memory: StrataGate) -> None:
    await say(memory, 9)
    ids = [v.block.id for v in await memory.blocks.views()]
    await memory.blocks.mark_ready(ids[0])
    levels = [v.current_level for v in await memory.blocks.views()]
    assert levels == [5, 5, 5]
    await memory.blocks.mark_ready(ids[1])
    await memory.blocks.mark_ready(ids[2])
    assert [v.current_level for v in await memory.blocks.views()] == [4, 5, 5]


async def test_decay_follows_ready_blocks_per_thread(memory: StrataGate) -> None:
    ids = await make_ready_blocks(memory, 10)
    levels = [v.current_level for v in await memory.blocks.views("ns", "t1")]
    assert levels == [0, 1, 1, 2, 2, 3, 3, 4, 5, 5]
    await say(memory, 3, thread="other")
    [other] = await memory.blocks.views("ns", "other")
    await memory.blocks.mark_ready(other.block.id)
    assert [v.current_level for v in await memory.blocks.views("ns", "t1")] == levels
    assert (await memory.blocks.view(ids[0])).text.startswith("(not derived yet")


async def test_expand_reanchors_and_decays_again(
    memory: StrataGate, plain: sqlite3.Connection
) -> None:
    ids = await make_ready_blocks(memory, 6)
    oldest = ids[0]
    assert (await memory.blocks.view(oldest)).current_level == 2
    lifted = await memory.blocks.expand(oldest, "L4", source="agent")
    assert lifted.current_level == 4 and lifted.block.last_lifted_by == "agent"
    assert lifted.text == lifted.block.l4_readable
    await say(memory, 6, thread="t1")  # two more blocks become ready → age 2 from the anchor
    for view in await memory.blocks.views("ns", "t1"):
        if view.block.processing_status == "pending":
            await memory.blocks.mark_ready(view.block.id)
    assert (await memory.blocks.view(oldest)).current_level == 3
    assert (await memory.blocks.expand(oldest, "next")).current_level == 4
    assert (await memory.blocks.expand(oldest, "raw")).current_level == 5
    row = plain.execute("SELECT last_lifted_by FROM blocks WHERE id = ?", (oldest,)).fetchone()
    assert row[0] == "user"


async def test_expand_refuses_pending_and_unknown_blocks(memory: StrataGate) -> None:
    await say(memory, 3)
    [view] = await memory.blocks.views()
    with pytest.raises(BlockNotReady):
        await memory.blocks.expand(view.block.id, 5)
    with pytest.raises(NotFound):
        await memory.blocks.expand("blk_missing", 5)
    with pytest.raises(InvalidInput):
        await memory.blocks.expand(view.block.id, 5, source="robot")  # type: ignore[arg-type]


async def test_fts_index_is_written_when_sealing_in_the_same_transaction(
    memory: StrataGate, plain: sqlite3.Connection
) -> None:
    await memory.blocks.append_turn("ns", "t", user="苹果派 recipe", assistant="ok", receipt_id="r")
    assert plain.execute("SELECT COUNT(*) FROM message_fts").fetchone()[0] == 0  # open tail
    block_id = await memory.blocks.seal_tail("ns", "t")
    indexed = plain.execute(
        "SELECT m.block_id FROM message_fts f JOIN messages m ON m.pk = f.rowid"
    ).fetchall()
    assert [row[0] for row in indexed] == [block_id, block_id]
    from stratagate_plugin.core.text.search_terms import fts_encode

    hits = plain.execute(
        "SELECT rowid FROM message_fts WHERE message_fts MATCH ?", (fts_encode("h2:苹果"),)
    ).fetchall()
    assert len(hits) == 1


async def test_a_failing_unit_rolls_back_everything(
    memory: StrataGate, plain: sqlite3.Connection
) -> None:
    def unit(raw: sqlite3.Connection) -> None:
        raw.execute("INSERT INTO meta(key, value) VALUES ('probe', 'x')")
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        await memory.db.write(unit)
    assert plain.execute("SELECT COUNT(*) FROM meta WHERE key = 'probe'").fetchone()[0] == 0
    await memory.blocks.append_turn("ns", "t", user="still works", receipt_id="after")


async def test_seal_tail_closes_a_short_block_and_ignores_an_empty_tail(
    memory: StrataGate,
) -> None:
    await say(memory, 4)
    block_id = await memory.blocks.seal_tail("ns", "t1")
    spans = [(v.block.start_turn, v.block.end_turn) for v in await memory.blocks.views()]
    assert spans == [(1, 3), (4, 4)] and block_id == (await memory.blocks.views())[1].block.id
    assert await memory.blocks.seal_tail("ns", "t1") is None
    assert await memory.blocks.open_tail("ns", "t1") == []


def test_ids_increase_strictly_within_a_process() -> None:
    from stratagate_plugin.core.ids import new_id

    ids = [new_id("msg") for _ in range(5000)]
    assert ids == sorted(ids) and len(set(ids)) == len(ids)


async def test_a_blocks_messages_get_consecutive_index_rows_despite_interleaving(
    memory: StrataGate, plain: sqlite3.Connection
) -> None:
    for turn in range(3):  # two threads taking turns; the fixture seals every 3 user turns
        for thread in ("a", "b"):
            await memory.blocks.append_turn(
                "ns", thread, user=f"{thread} kiln {turn}", receipt_id=f"{thread}{turn}"
            )
    rows = plain.execute(
        "SELECT m.thread_id, m.pk, m.fts_rowid FROM messages m "
        "JOIN message_fts f ON f.rowid = m.fts_rowid ORDER BY m.thread_id, m.position"
    ).fetchall()
    for thread in ("a", "b"):
        pks = [row[1] for row in rows if row[0] == thread]
        fts = [row[2] for row in rows if row[0] == thread]
        assert pks != list(range(pks[0], pks[0] + len(pks)))  # interleaved in the table
        assert fts == list(range(fts[0], fts[0] + len(fts)))  # one run in the index
    assert len({row[2] for row in rows}) == len(rows) == 12
    hits = await memory.retrieval.search_raw("ns", "kiln", limit=20)
    assert len(hits) == 6  # every user message (the empty replies match nothing)
