"""``GateStorage``: batches, a transaction's units all-or-nothing, the trail's marks, flags."""

import pytest

from stratagate_plugin.core.errors import InvalidInput, NotFound
from stratagate_plugin.core.gate.storage import BatchOpening, GateUnit, NewReceipt
from stratagate_plugin.core.memory import StrataGate
from stratagate_plugin.core.records import MessageIn

NS = "contract"
NOW = "2026-01-02T03:04:05+00:00"
TOOL = "memory_search_events"


async def _event(engine: StrataGate, text: str = "The kiln fires on Fridays.") -> str:
    return (await engine.remember.save(NS, "t", text)).event_id


async def test_batches_are_by_sequence_with_refs_once_and_titles_of_their_refs(
    engine: StrataGate,
) -> None:
    store = engine.storage.gate
    event_id = await _event(engine)
    ref = f"event:{event_id}"
    first = await store.open_batch(
        BatchOpening(NS, "t", TOOL, [ref, ref], {ref: "Kiln", "x": "y"}), NOW
    )
    second = await store.open_batch(BatchOpening(NS, "t", TOOL, [], {}), NOW)
    other = await store.open_batch(BatchOpening(NS, "u", TOOL, [], {}), NOW)
    assert list(first.evidence_refs) == [ref]
    assert dict(first.titles) == {ref: "Kiln"}
    assert (first.sequence, second.sequence, other.sequence) == (1, 2, 1)
    assert [b.id for b in await store.batches(NS, "t", None)] == [first.id, second.id]
    assert [b.id for b in await store.batches(NS, "t", "recorded")] == []
    assert [b.status for b in await store.batches(NS, "t", "unresolved")] == ["unresolved"] * 2


async def test_a_transaction_commits_all_its_writes_or_none(engine: StrataGate) -> None:
    store = engine.storage.gate
    event_id = await _event(engine)
    batch = await store.open_batch(BatchOpening(NS, "t", TOOL, [f"event:{event_id}"], {}), NOW)
    before = await engine.events.get(event_id)

    def fails(rows: GateUnit) -> None:
        rows.reinforce(NS, [event_id], 7, NOW)
        rows.insert_receipt(NewReceipt(NS, "r1", batch.id, "{}", [event_id], {}), NOW)
        rows.mark_recorded(batch.id, NOW)
        raise InvalidInput("changed my mind")

    with pytest.raises(InvalidInput):
        await store.transaction(fails)
    assert (await engine.events.get(event_id)).mention_count == before.mention_count
    assert await store.transaction(lambda rows: rows.receipt(NS, "r1")) is None
    assert [b.status for b in await store.batches(NS, "t", None)] == ["unresolved"]

    def adopts(rows: GateUnit) -> list[str]:
        done = rows.reinforce(NS, [event_id, event_id, "evt_unknown"], 7, NOW)
        rows.insert_receipt(NewReceipt(NS, "r1", batch.id, "{}", done, {}), NOW)
        rows.mark_recorded(batch.id, NOW)
        return done

    assert await store.transaction(adopts) == [event_id]
    after = await engine.events.get(event_id)
    assert (after.mention_count, after.last_adopted_turn) == (before.mention_count + 1, 7)
    receipt = await store.transaction(lambda rows: rows.receipt(NS, "r1"))
    assert receipt is not None and (receipt.batch_id, receipt.payload) == (batch.id, "{}")
    assert [b.status for b in await store.batches(NS, "t", None)] == ["recorded"]


async def test_a_unit_chooses_batches_and_reads_their_turn(engine: StrataGate) -> None:
    store = engine.storage.gate
    first = await store.open_batch(BatchOpening(NS, "t", TOOL, [], {}), NOW)
    second = await store.open_batch(BatchOpening(NS, "t", TOOL, [], {}), NOW)

    def read(rows: GateUnit) -> tuple[list[str], list[str], list[str], str | None, int]:
        named = [b.id for b in rows.batch_choices(NS, "t", first.id)]
        latest = [b.id for b in rows.batch_choices(NS, "t", None)]
        unknown = [b.id for b in rows.batch_choices(NS, "t", "batch_missing")]
        return named, latest, unknown, rows.latest_batch_id(NS, "t"), rows.batch_turn(first.id)

    named, latest, unknown, newest, turn = await store.transaction(read)
    assert (named, latest, newest) == ([first.id], [second.id], second.id)
    assert unknown == [first.id, second.id] and turn >= 0
    with pytest.raises(NotFound):
        await store.transaction(lambda rows: rows.batch_turn("batch_missing"))


async def test_thread_uses_and_marks(engine: StrataGate) -> None:
    store = engine.storage.gate
    event_id = await _event(engine)
    card = await engine.events.get(event_id)
    batch = await store.open_batch(BatchOpening(NS, "t", TOOL, [f"event:{event_id}"], {}), NOW)
    [use] = await store.thread_uses(NS, "t")
    assert (use.id, use.receipt_id) == (batch.id, None)
    said = [
        MessageIn(role="user", content="Hello kiln."),
        MessageIn(role="assistant", content="Hi."),
    ]
    message_id = (await engine.blocks.record_turn(NS, "t", said)).message_ids[0]
    events, messages = await store.marks([event_id, "evt_unknown"], [message_id], 5)
    assert list(events) == [event_id] and events[event_id].title == card.title
    assert list(messages) == [message_id] and len(messages[message_id].text) <= 5
    assert await store.marks([], [], 5) == ({}, {})


async def test_flags_are_idempotent_and_name_unknown_events(engine: StrataGate) -> None:
    store = engine.storage.gate
    event_id = await _event(engine)
    assert (await store.set_pinned(event_id, True, NOW)).pinned is True
    assert (await store.set_pinned(event_id, True, NOW)).pinned is True
    assert (await store.set_pinned(event_id, False, NOW)).pinned is False
    assert (await store.forget(event_id, NOW)).status == "forgotten"
    assert (await store.forget(event_id, NOW)).status == "forgotten"
    assert (await store.restore(event_id, NOW)).status == "active"
    assert (await store.restore(event_id, NOW)).status == "active"
    card, turn = await store.card_at_turn(event_id)
    assert card.id == event_id and turn >= 0
    for operation in (
        store.set_pinned("evt_unknown", True, NOW),
        store.forget("evt_unknown", NOW),
        store.restore("evt_unknown", NOW),
        store.card_at_turn("evt_unknown"),
    ):
        with pytest.raises(NotFound):
            await operation
