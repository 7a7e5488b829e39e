"""``CurationStorage``: actions with their receipts in one transaction, corrections,
resolutions, and the reads of one item (set up through the engine's public capabilities)."""

from typing import Any

import pytest

from stratagate_plugin.core.clock import iso, utc_now
from stratagate_plugin.core.curation.records import ActionResult, NothingDone
from stratagate_plugin.core.curation.service import ACTION_RULES, CurationRules
from stratagate_plugin.core.curation.storage import BlockRows, Resolved
from stratagate_plugin.core.errors import InvalidInput, NotFound
from stratagate_plugin.core.events.cards import EventCard
from stratagate_plugin.core.memory import StrataGate

NS = "contract"


async def _remember(engine: StrataGate, *texts: str) -> list[str]:
    found = [await engine.remember.save(NS, "t", text) for text in texts]
    return [r.event_id for r in found if r.event_id]


def _now() -> str:
    return iso(utc_now())


async def test_an_action_writes_its_flag_and_receipt_or_nothing(engine: StrataGate) -> None:
    [event_id] = await _remember(engine, "Biscuit is a beagle.")
    store = engine.storage.curation
    done = await store.act("pin", event_id, "user", _now(), ACTION_RULES)
    assert isinstance(done, ActionResult) and done.card.pinned
    assert (done.action.kind, done.action.target_id, done.action.actor) == ("pin", event_id, "user")
    again = await store.act("pin", event_id, "agent", _now(), ACTION_RULES)
    assert isinstance(again, NothingDone) and again.card.pinned
    assert [a.kind for a in await store.actions(event_id)] == ["pin"]  # no second receipt
    with pytest.raises(NotFound):
        await store.act("forget", "evt_unknown", "user", _now(), ACTION_RULES)


async def test_a_refused_action_leaves_nothing_behind(engine: StrataGate) -> None:
    [event_id] = await _remember(engine, "Biscuit is a beagle.")
    store = engine.storage.curation
    await store.act("forget", event_id, "user", _now(), ACTION_RULES)

    class Refusing(CurationRules):
        def check_restore(self, card: EventCard, purged: list[str]) -> None:
            raise InvalidInput("refused")

    with pytest.raises(InvalidInput):
        await store.act("restore", event_id, "user", _now(), Refusing())
    details = await store.event_details(event_id)
    assert details.card.status == "forgotten"
    assert [a.kind for a in details.actions] == ["forget"]


async def test_a_purge_forgets_and_tombstones_its_plans_messages(engine: StrataGate) -> None:
    [event_id] = await _remember(engine, "Ana lives in Porto.")
    said = "Remember that Ana lives in Porto."
    await engine.blocks.append_turn(NS, "t", user=said, assistant="Ok.")  # the event cites it
    store = engine.storage.curation
    plan = await store.purge_plan(event_id)
    assert plan.event_id == event_id and plan.namespace == NS and len(plan.message_ids) == 1
    done = await store.act("purge", event_id, "user", _now(), ACTION_RULES)
    assert isinstance(done, ActionResult) and done.card.status == "forgotten"
    assert done.action.detail["messages"] == plan.message_ids
    with pytest.raises(NotFound):
        await store.purge_plan("evt_unknown")


async def test_a_correction_inserts_the_new_card_with_a_receipt_on_the_old(
    engine: StrataGate,
) -> None:
    [old_id] = await _remember(engine, "The studio opens at 10am.")
    store = engine.storage.curation
    turns: list[int] = []

    def make(old: EventCard, turn: int) -> tuple[EventCard, dict[str, Any]]:
        turns.append(turn)
        new = old.model_copy(update={"id": "evt_new", "title": "Opens at 11am"})
        return new, {"new_event_id": new.id}

    done = await store.correct(old_id, "user", _now(), make)
    assert (done.card.id, done.card.title) == ("evt_new", "Opens at 11am")
    assert (done.action.kind, done.action.target_id) == ("correct", old_id)
    assert done.action.detail == {"new_event_id": "evt_new"} and turns == [0]
    with pytest.raises(NotFound):
        await store.correct("evt_unknown", "user", _now(), make)


async def test_a_resolution_writes_both_sides_and_the_supersession(engine: StrataGate) -> None:
    first, second = await _remember(engine, "Ana lives in Porto.", "Biscuit is a beagle.")
    store = engine.storage.curation

    def decide(event: EventCard, other: EventCard) -> Resolved:
        mine = {**event.temporal, "supersedes_event_ids": [other.id]}
        return Resolved(0.25, mine, dict(other.temporal), {"other_id": other.id})

    done = await store.resolve(second, first, "agent", _now(), decide)
    assert done.card.id == second and done.card.temporal["supersedes_event_ids"] == [first]
    assert (done.action.kind, done.action.detail) == ("resolve", {"other_id": first})
    older = (await store.event_details(first)).card
    assert (older.status, older.superseded_by, older.forced_cap) == ("superseded", second, 0.25)

    def refuse(event: EventCard, other: EventCard) -> Resolved:
        raise InvalidInput("not in conflict")

    with pytest.raises(InvalidInput):
        await store.resolve(first, second, "user", _now(), refuse)
    assert [a.kind for a in await store.actions(second)] == ["resolve"]


async def test_receipts_are_oldest_first_one_by_id_or_the_newest(engine: StrataGate) -> None:
    [event_id] = await _remember(engine, "Biscuit is a beagle.")
    store = engine.storage.curation
    for kind in ("pin", "unpin", "forget"):
        await store.act(kind, event_id, "user", _now(), ACTION_RULES)  # type: ignore[arg-type]
    every = await store.actions(event_id)
    assert [a.kind for a in every] == ["pin", "unpin", "forget"]
    assert [a.kind for a in await store.actions(limit=2)] == ["unpin", "forget"]
    [one] = await store.actions(action_id=every[1].id, limit=1)
    assert one == every[1]
    assert await store.actions(action_id="act_unknown") == []


async def test_item_reads_name_an_event_a_block_or_a_message(engine: StrataGate) -> None:
    ids: list[str] = []
    for i in range(2):
        said = f"The kiln fires on Friday {i}."
        ids += (await engine.blocks.append_turn(NS, "t", user=said, assistant="Ok.")).message_ids
    [event_id] = await _remember(engine, "Biscuit is a beagle.")
    store = engine.storage.curation
    event = await store.describe(event_id)
    assert not isinstance(event, BlockRows) and event == await store.event_details(event_id)
    [view] = await engine.blocks.views(NS)
    block = await store.describe(view.block.id)
    assert isinstance(block, BlockRows) and [m.id for m in block.messages] == ids
    assert block == await store.block_details(view.block.id)
    message = await store.describe(ids[0])
    assert not isinstance(message, BlockRows) and message.message.id == ids[0]
    assert [c.message.id for c in await store.message_cards([ids[2], "msg_unknown", ids[0]])] == [
        ids[2],
        ids[0],
    ]
    with pytest.raises(NotFound):
        await store.describe("nothing_by_this_id")
    with pytest.raises(NotFound):
        await store.event_details("evt_unknown")
    with pytest.raises(NotFound):
        await store.block_details("blk_unknown")
