"""Changes of mind end to end (issue #14): the offline model supersedes what a correction
replaces, and search, recall and the search tool read the newer card first with the older
one as its history."""

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from stratagate_plugin.core.config import MemoryConfig
from stratagate_plugin.core.events import history
from stratagate_plugin.core.events.cards import EventCard, accept_drafts, resolve_local_refs
from stratagate_plugin.core.llm.base import ScriptedModel
from stratagate_plugin.core.llm.offline.model import OfflineModel
from stratagate_plugin.core.llm.tasks import EventCardDraft
from stratagate_plugin.core.memory import StrataGate
from stratagate_plugin.core.profile.spaces import space_for
from stratagate_plugin.harness.agent import Agent
from stratagate_plugin.harness.chat import ScriptedChatModel, tool_reply
from stratagate_plugin.harness.pm import make_plugin_manager
from stratagate_plugin.harness.profiles import Profile
from stratagate_plugin.harness.runtime import Host
from stratagate_plugin.harness.sessions import open_session
from stratagate_plugin.memory_plugin import hooks as plugin

FIRST_DAY = datetime(2026, 12, 1, 10, 0, tzinfo=UTC)
NEXT_DAY = datetime(2026, 12, 2, 10, 0, tzinfo=UTC)
PAIRS = {
    "launch": (
        "We planned the product launch for April 20th.",
        "Actually we moved the launch to May.",
        "When is the product launch planned?",
    ),
    "preference": (
        "I prefer email.",
        "I've switched: I now prefer phone calls.",
        "Should I contact you by email?",
    ),
    "launch-zh": ("我们把发布会定在4月20日。", "其实发布会改到5月了。", "发布会定在什么时候？"),
    "preference-zh": ("我喜欢用邮件沟通。", "我现在更喜欢打电话沟通。", "用邮件沟通可以吗？"),
}


async def said(memory: StrataGate, space: str, first: str, second: str) -> None:
    """The two statements on consecutive days, sealed and derived by the model."""
    await memory.blocks.append_turn(space, "t1", user=first, assistant="OK.", at=FIRST_DAY)
    await memory.blocks.append_turn(space, "t1", user=second, assistant="OK.", at=NEXT_DAY)
    await memory.blocks.seal_tail(space, "t1")
    await memory.derivation.process_pending()


def by_statement(cards: list[EventCard], text: str) -> EventCard:
    [found] = [card for card in cards if text in card.quotes]
    return found


@pytest.mark.parametrize("pair", sorted(PAIRS))
@pytest.mark.parametrize("block_turn_size", [1, 12], ids=["two-blocks", "one-block"])
async def test_a_correction_supersedes_and_is_read_first_with_the_old_as_history(
    db_path: Path, pair: str, block_turn_size: int
) -> None:
    first, second, question = PAIRS[pair]
    config = MemoryConfig(block_turn_size=block_turn_size)
    async with await StrataGate.open(db_path, config, OfflineModel()) as memory:
        await said(memory, "ns", first, second)
        cards = await memory.events.cards("ns")
        older, newer = by_statement(cards, first), by_statement(cards, second)
        assert (older.status, older.superseded_by) == ("superseded", newer.id)
        assert newer.status == "active"
        assert newer.temporal["supersedes_event_ids"] == [older.id]

        hits = await memory.events.search("ns", question)
        assert hits[0].card.id == newer.id
        assert [card.id for card in hits[0].history] == [older.id]
        assert older.id not in [hit.card.id for hit in hits]
        assert [line["id"] for line in hits[0].compact()["history"]] == [older.id]

        recall = await memory.retrieval.auto_context("ns", "another-thread", question)
        assert [card.id for card in recall.events][:1] == [newer.id]
        assert older.id not in [card.id for card in recall.events]
        assert recall.text.index(newer.id) < recall.text.index(older.id)  # shown as replaced


async def test_the_changed_launch_date_looks_ahead(db_path: Path) -> None:
    first, second, _ = PAIRS["launch"]
    async with await StrataGate.open(db_path, MemoryConfig(block_turn_size=1)) as memory:
        await said(memory, "ns", first, second)
        cards = await memory.events.cards("ns")
    plan, change = by_statement(cards, first), by_statement(cards, second)
    assert plan.temporal["happened_start"].startswith("2027-04-20")  # said on 1 December 2026
    assert change.temporal["happened_start"].startswith("2027-05-01")
    assert change.temporal["status"] == "planned"


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("I love pottery.", "I've switched: I now prefer phone calls."),  # another verb
        ("We planned the product launch for April 20th.", "I moved to Lisbon last year."),
        ("Caroline: I love running in the park.", "Melanie: I switched to running indoors."),
        ("The launch is on April 20th.", "Actually the launch went well with my sister."),
    ],
)
async def test_unrelated_statements_are_not_superseded(
    db_path: Path, first: str, second: str
) -> None:
    async with await StrataGate.open(db_path, MemoryConfig(block_turn_size=1)) as memory:
        await said(memory, "ns", first, second)
        cards = await memory.events.cards("ns")
    assert cards and all(card.status == "active" for card in cards)


async def test_actually_with_another_date_corrects_the_matching_event(db_path: Path) -> None:
    first, second = (
        "The launch party is on April 20th.",
        "Actually, the launch party is on May 3rd.",
    )
    async with await StrataGate.open(db_path, MemoryConfig(block_turn_size=1)) as memory:
        await said(memory, "ns", first, second)
        cards = await memory.events.cards("ns")
    assert by_statement(cards, first).superseded_by == by_statement(cards, second).id


# --- a card superseded by any model never outranks the card that replaced it -------------

SUMMARY = {"title": "Kiln", "tags": ["kiln"], "summary": "Kiln talk.", "keypoints": ["k"]}


def draft(source: str, title: str, **temporal: Any) -> dict[str, Any]:
    return {
        "title": title,
        "summary": f"{title}.",
        "source_message_ids": [source],
        "scope": "user",
        "temporal": temporal,
    }


async def model_marked(memory: StrataGate, model: ScriptedModel) -> tuple[EventCard, EventCard]:
    """Two blocks: the first's card names the Riverside kiln firing on Friday in every field,
    the second's (a scripted model) supersedes it with a terse "moved to Saturday"."""
    first = await memory.blocks.append_turn(
        "ns", "t1", user="kiln firing friday riverside", at=FIRST_DAY
    )
    old = draft(first.message_ids[0], "Riverside kiln firing on Friday, kiln firing at Riverside")
    model.push(SUMMARY, {"should_extract": True, "events": [old]})
    await memory.derivation.process_pending()
    [older] = await memory.events.cards("ns")
    second = await memory.blocks.append_turn("ns", "t1", user="moved to saturday", at=NEXT_DAY)
    new = draft(second.message_ids[0], "Kiln moved to Saturday", supersedes_event_ids=[older.id])
    model.push(SUMMARY, {"should_extract": True, "events": [new]})
    await memory.derivation.process_pending()
    cards = {card.title: card for card in await memory.events.cards("ns")}
    return cards[old["title"]], cards[new["title"]]


async def test_a_model_marked_superseded_card_never_outranks_its_superseder(
    db_path: Path,
) -> None:
    model = ScriptedModel.of([])
    async with await StrataGate.open(db_path, MemoryConfig(block_turn_size=1), model) as memory:
        older, newer = await model_marked(memory, model)
        assert older.superseded_by == newer.id
        hits = await memory.events.search("ns", "riverside kiln firing friday")
        assert [(hit.card.id, [c.id for c in hit.history]) for hit in hits] == [
            (newer.id, [older.id])
        ]
        recall = await memory.retrieval.auto_context("ns", "t2", "riverside kiln firing friday")
        assert [card.id for card in recall.events] == [newer.id]
        assert [card.id for card in recall.history[newer.id]] == [older.id]
        await memory.gate.pin_event(older.id)  # a pinned old version still yields its place
        recall = await memory.retrieval.auto_context("ns", "t2", "riverside kiln firing friday")
        assert [card.id for card in recall.events] == [newer.id]
        evidence = await memory.retrieval.channel_rankings("ns", "riverside kiln firing friday")
        assert set(evidence["event"]) == {*newer.source_message_ids, *older.source_message_ids}


async def test_a_forgotten_superseder_leaves_the_old_card_standing(db_path: Path) -> None:
    model = ScriptedModel.of([])
    async with await StrataGate.open(db_path, MemoryConfig(block_turn_size=1), model) as memory:
        older, newer = await model_marked(memory, model)
        await memory.gate.forget_event(newer.id)
        hits = await memory.events.search("ns", "riverside kiln firing friday")
    assert [(hit.card.id, hit.history) for hit in hits] == [(older.id, [])]


# --- the agent's search tool ------------------------------------------------------------


async def test_the_search_tool_shows_the_newer_card_with_the_older_as_history(
    tmp_path: Path,
) -> None:
    db = tmp_path / "m.db"
    space = space_for("project", cwd=str(tmp_path), session_id="old")
    first, second, question = PAIRS["launch"]
    async with await StrataGate.open(db, MemoryConfig(block_turn_size=1)) as memory:
        await said(memory, space, first, second)
        cards = await memory.events.cards(space)
    older, newer = by_statement(cards, first), by_statement(cards, second)
    settings = {"database": str(db), "block_turn_size": 2}
    profile = Profile(
        name="t", plugins=["stratagate-memory"], settings={"stratagate-memory": settings}
    )
    host = Host(
        make_plugin_manager([("stratagate-memory", plugin.MemoryPlugin())]), profile, cwd=tmp_path
    )
    model = ScriptedChatModel.of(
        tool_reply("memory_search_events", {"query": question}, "c1"), "The launch is in May."
    )
    async with host:
        await Agent(host, model).run_turn(open_session("s1", "t", tmp_path), question)
    results = json.loads(model.requests[1].messages[-1].text)["results"]
    assert [card["id"] for card in results] == [newer.id]
    assert [line["id"] for line in results[0]["history"]] == [older.id]
    assert results[0]["history"][0]["status"] == "superseded"


async def test_a_card_may_supersede_an_earlier_card_of_the_same_answer(db_path: Path) -> None:
    model = ScriptedModel.of([])
    async with await StrataGate.open(db_path, MemoryConfig(block_turn_size=2), model) as memory:
        ids = []
        for text in ("kiln friday", "kiln saturday"):
            ids += (
                await memory.blocks.append_turn("ns", "t1", user=text, at=FIRST_DAY)
            ).message_ids
        plan = draft(ids[0], "Kiln fires Friday", related_event_ids=["card:1"])  # not earlier
        change = draft(ids[2], "Kiln moved to Saturday", supersedes_event_ids=["card:0"])
        model.push(SUMMARY, {"should_extract": True, "events": [plan, change]})
        await memory.derivation.process_pending()
        cards = {card.title: card for card in await memory.events.cards("ns")}
    older, newer = cards["Kiln fires Friday"], cards["Kiln moved to Saturday"]
    assert (older.status, older.superseded_by) == ("superseded", newer.id)
    assert newer.temporal["supersedes_event_ids"] == [older.id]
    assert "related_event_ids" not in older.temporal


def test_local_refs_follow_the_accepted_cards() -> None:
    drafts = [
        EventCardDraft.model_validate(draft("m9", "Cites a foreign message")),  # dropped
        EventCardDraft.model_validate(draft("m1", "Plan")),
        EventCardDraft.model_validate(draft("m2", "Change", supersedes_event_ids=["card:1"])),
        EventCardDraft.model_validate(draft("m3", "Other", supersedes_event_ids=["card:0"])),
    ]
    accepted = accept_drafts(drafts, ["m1", "m2", "m3"], [], FIRST_DAY.isoformat())
    links = [(card.temporal or {}).get("supersedes_event_ids") for card in accepted]
    assert links == [None, ["card:0"], None]  # renumbered; a ref to a dropped card goes
    stored = [resolve_local_refs(card, ["evt_a", "evt_b"]) for card in accepted]
    assert (stored[1].temporal or {})["supersedes_event_ids"] == ["evt_a"]


@pytest.mark.parametrize(
    ("links", "order", "folded"),
    [
        ({"a": "b", "b": None}, [("a", 0.9), ("b", 0.5)], [("b", 0.9)]),
        ({"a": "b", "b": "c", "c": None}, [("a", 0.9), ("x", 0.7)], [("c", 0.9), ("x", 0.7)]),
        ({"a": "gone"}, [("a", 0.9)], [("a", 0.9)]),  # the newer card is not visible
        ({"a": "b", "b": "a"}, [("a", 0.9), ("b", 0.8)], [("b", 0.9), ("a", 0.8)]),  # a cycle
    ],
)
def test_fold_gives_a_superseded_place_to_its_newest_visible_version(
    links: dict[str, str | None], order: list[tuple[str, float]], folded: list[tuple[str, float]]
) -> None:
    assert history.fold(order, links) == folded
