"""A repeat reinforces (issue 23): a fact restated in another session, on another day, adds
its source to the event that already holds it and counts a mention; it never makes a second
active card. Restatement is the duplicate gate's containment (``remember.rules``), by the
same speaker, with the same polarity and time; sharing a topic is not restating."""

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from stratagate_plugin.core.config import MemoryConfig
from stratagate_plugin.core.events.cards import EventCard
from stratagate_plugin.core.llm.base import ScriptedModel
from stratagate_plugin.core.memory import StrataGate

DAY = datetime(2026, 12, 1, 10, 0, tzinfo=UTC)


async def said_on_days(memory: StrataGate, statements: list[str]) -> list[str]:
    """Each statement in its own session, one day after the other, each session sealed and
    derived before the next; the user message ids, in order."""
    ids: list[str] = []
    for day, text in enumerate(statements):
        thread = f"session-{day}"
        turn = await memory.blocks.append_turn(
            "ns", thread, user=text, assistant="Noted.", at=DAY + timedelta(days=day)
        )
        ids.append(turn.message_ids[0])
        await memory.blocks.seal_tail("ns", thread)
        await memory.derivation.process_pending()
    return ids


def active(cards: list[EventCard]) -> list[EventCard]:
    return [card for card in cards if card.status == "active"]


def holding(cards: list[EventCard], message_id: str) -> list[EventCard]:
    return [card for card in cards if message_id in card.source_message_ids]


FOUR = {
    "en": [
        "We plan to repaint the kitchen in March.",
        "My favourite band is Radiohead.",
        "I'm allergic to peanuts.",
        "My brother Tom works as a pilot in Dubai.",
    ],
    "zh": [
        "我们计划明年三月重新粉刷厨房。",
        "我最喜欢的乐队是五月天。",
        "我对花生过敏。",
        "我哥哥在迪拜当飞行员。",
    ],
}


@pytest.mark.parametrize("language", sorted(FOUR))
async def test_four_statements_said_twice_on_different_days_are_four_events(
    db_path: Path, language: str
) -> None:
    statements = FOUR[language]
    async with await StrataGate.open(db_path, MemoryConfig(block_turn_size=12)) as memory:
        ids = await said_on_days(memory, statements + statements)
        cards = await memory.events.cards("ns")
    assert len(cards) == 4 and len(active(cards)) == 4
    for first, again in zip(ids[:4], ids[4:], strict=True):
        [card] = holding(cards, first)
        assert card.source_message_ids == [first, again]
        assert card.mention_count == 2
        assert card.temporal["last_mentioned_at"].startswith("2026-12-0")
        assert card.temporal["last_mentioned_at"] > card.temporal["mentioned_at"]


async def test_a_third_repeat_counts_a_third_mention(db_path: Path) -> None:
    text = "Our daughter Mia starts school in Leeds next September."
    async with await StrataGate.open(db_path, MemoryConfig(block_turn_size=12)) as memory:
        ids = await said_on_days(memory, [text, "I bought a new bike.", text, text])
        cards = await memory.events.cards("ns")
    [card] = holding(cards, ids[0])
    assert (card.mention_count, card.source_message_ids) == (3, [ids[0], ids[2], ids[3]])
    assert len(active(cards)) == 2


async def test_a_shorter_restatement_reinforces_the_fuller_event(db_path: Path) -> None:
    fuller = "I'm allergic to peanuts and to shellfish."
    async with await StrataGate.open(db_path, MemoryConfig(block_turn_size=12)) as memory:
        ids = await said_on_days(memory, [fuller, "I'm allergic to peanuts."])
        cards = await memory.events.cards("ns")
    [card] = active(cards)
    assert card.source_message_ids == ids and "shellfish" in card.summary


@pytest.mark.parametrize(
    ("first", "second"),
    [
        # another speaker says the same words: not the same fact
        ("Caroline: I love hiking in the mountains.", "Melanie: I love hiking in the mountains."),
        # the same topic, more said: a new fact, never folded into the shorter one
        ("I love hiking in the mountains.", "I love hiking in the mountains with my dog Rex."),
        ("We went camping at the lake last weekend.", "We went camping at the lake in July."),
        ("我喜欢在山里徒步。", "我上周末和狗一起在山里徒步了。"),
        ("The dentist appointment is on March 3rd.", "The dentist appointment is on March 10th."),
        ("Our daughter Mia is 7 years old.", "Our daughter Mia is 8 years old."),
    ],
)
async def test_a_different_statement_sharing_words_is_not_a_repeat(
    db_path: Path, first: str, second: str
) -> None:
    async with await StrataGate.open(db_path, MemoryConfig(block_turn_size=12)) as memory:
        ids = await said_on_days(memory, [first, second])
        cards = await memory.events.cards("ns")
    assert len(holding(cards, ids[0])) == 1 and len(holding(cards, ids[1])) == 1
    assert holding(cards, ids[0])[0].id != holding(cards, ids[1])[0].id
    assert all(card.mention_count == 1 for card in cards)


# --- the model path: the same check after the model answered ---------------------------

SUMMARY = {"title": "Diet", "tags": ["diet"], "summary": "Diet talk.", "keypoints": ["k"]}


def card(source: str, title: str, summary: str, **temporal: Any) -> dict[str, Any]:
    return {"title": title, "summary": summary, "source_message_ids": [source],
            "scope": "user", "temporal": temporal}  # fmt: skip


async def test_a_model_card_restating_a_live_event_reinforces_it(db_path: Path) -> None:
    model = ScriptedModel.of([])
    config = MemoryConfig(block_turn_size=1)
    async with await StrataGate.open(db_path, config, model) as memory:
        first = await memory.blocks.append_turn("ns", "a", user="I'm vegetarian.", at=DAY)
        model.push(
            SUMMARY,
            {
                "should_extract": True,
                "events": [
                    card(first.message_ids[0], "User is vegetarian", "The user is vegetarian.")
                ],
            },
        )
        await memory.derivation.process_pending()
        again = await memory.blocks.append_turn(
            "ns", "b", user="Remember, I'm vegetarian.", at=DAY + timedelta(days=3)
        )
        model.push(
            SUMMARY,
            {
                "should_extract": True,
                "events": [card(again.message_ids[0], "Vegetarian", "The user is vegetarian!")],
            },
        )
        await memory.derivation.process_pending()
        cards = await memory.events.cards("ns")
    [only] = cards
    assert only.source_message_ids == [first.message_ids[0], again.message_ids[0]]
    assert only.mention_count == 2 and only.status == "active"
