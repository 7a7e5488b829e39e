"""``RememberStorage``: the live events a memory is compared with, and phase 3's one
transaction applying what the rules planned on the data it read."""

from stratagate_plugin.core.clock import iso, utc_now
from stratagate_plugin.core.config import MemoryConfig
from stratagate_plugin.core.events.cards import EventCard
from stratagate_plugin.core.events.weights import new_card
from stratagate_plugin.core.memory import StrataGate
from stratagate_plugin.core.remember.storage import Applied, LiveEvent, Plan, RememberAsk
from stratagate_plugin.core.store.turns import NewSpaceDefaults

NS = "contract"
CONFIG = MemoryConfig()
DEFAULTS = NewSpaceDefaults(CONFIG.block_turn_size, CONFIG.block_decay_lambda)


class Rules:
    """A plan fixed in advance, recording what the commit showed it."""

    def __init__(self, action: str, targets: tuple[str, ...] = (), text: str = "") -> None:
        self.action, self.targets, self.text = action, targets, text
        self.seen: tuple[list[LiveEvent], set[str], int] | None = None

    def plan(self, live: list[LiveEvent], still_live: set[str], turn: int) -> Plan:
        self.seen = (live, still_live, turn)
        card = None
        if self.action not in ("IGNORED", "REINFORCED", "MERGED"):
            card = new_card(
                namespace=NS, pool="agent", title=self.text, summary=self.text,
                source_block_id=None, source_message_ids=[], formed_turn=turn,
                temporal={"thread_id": "t"}, scope="user", criticality="routine",
                created_at=utc_now(),
            )  # fmt: skip
        return Plan(self.action, self.targets, card)

    def merged(self, target: EventCard) -> tuple[str, list[str]]:
        return f"{target.summary} Also: {self.text}", [*target.tags, "merged"]


async def _remember(engine: StrataGate, *texts: str) -> list[str]:
    found = [await engine.remember.save(NS, "t", text) for text in texts]
    return [r.event_id for r in found if r.event_id]


async def _commit(
    engine: StrataGate, rules: Rules, text: str, ambiguous: tuple[str, ...] = ()
) -> Applied:
    ask = RememberAsk(NS, "t", text, 100, ambiguous)
    return await engine.storage.remember.commit(ask, rules, DEFAULTS, iso(utc_now()))


async def test_live_events_share_a_token_within_the_space_up_to_the_limit(
    engine: StrataGate,
) -> None:
    porto, kiln = await _remember(engine, "Ana lives in Porto.", "The kiln fires on Fridays.")
    store = engine.storage.remember
    assert [e.id for e in await store.live_events(NS, "Porto harbour", 10)] == [porto]
    assert await store.live_events("elsewhere", "Porto", 10) == []
    every = await store.live_events(NS, "", 10)  # no token: every visible event
    assert {e.id for e in every} == {porto, kiln}
    assert len(await store.live_events(NS, "", 1)) == 1
    [found] = await store.live_events(NS, "kiln", 10)
    assert (found.title, found.summary) != ("", "")


async def test_a_new_card_is_written_and_returned_with_the_turn(engine: StrataGate) -> None:
    rules = Rules("ADDED", text="Biscuit is a beagle.")
    applied = await _commit(engine, rules, "Biscuit is a beagle.")
    assert applied.event_id is not None and applied.card is not None
    assert applied.card.title == "Biscuit is a beagle." and applied.turn == 0
    assert [c.id for c in await engine.events.cards(NS)] == [applied.event_id]
    assert rules.seen is not None and rules.seen[0] == [] and rules.seen[1] == set()


async def test_an_ignored_plan_writes_nothing(engine: StrataGate) -> None:
    [kept] = await _remember(engine, "Ana lives in Porto.")
    applied = await _commit(engine, Rules("IGNORED"), "Ana lives in Porto.")
    assert (applied.event_id, applied.card) == (None, None)
    assert [c.id for c in await engine.events.cards(NS)] == [kept]


async def test_the_commit_reads_live_events_and_which_asked_ids_still_live(
    engine: StrataGate,
) -> None:
    porto, gone = await _remember(engine, "Ana lives in Porto.", "Ana owns a red bicycle.")
    await engine.curation.act("forget", gone)
    rules = Rules("IGNORED")
    await _commit(engine, rules, "Ana lives in Porto", (porto, gone))
    assert rules.seen is not None
    live, still, _ = rules.seen
    assert [e.id for e in live] == [porto] and still == {porto}


async def test_a_reinforcement_counts_a_mention_and_returns_the_first_live_target(
    engine: StrataGate,
) -> None:
    [porto] = await _remember(engine, "Ana lives in Porto.")
    applied = await _commit(engine, Rules("REINFORCED", (porto,)), "Ana lives in Porto.")
    assert applied.event_id == porto and applied.card is not None
    assert applied.card.mention_count == 2
    none_left = await _commit(engine, Rules("REINFORCED", ("evt_unknown",)), "x")
    assert (none_left.event_id, none_left.card) == (None, None)


async def test_a_merge_rewrites_each_target_with_the_rules_union(engine: StrataGate) -> None:
    [porto] = await _remember(engine, "Ana lives in Porto.")
    applied = await _commit(engine, Rules("MERGED", (porto,), "Near the river."), "Porto")
    assert applied.event_id == porto and applied.card is not None
    assert applied.card.summary.endswith("Also: Near the river.")
    assert "merged" in applied.card.tags
