"""A change of mind replaces (issue 23): a cancellation, a stop, a move or a switch said in a
later session supersedes the matching active event, matched by who and what; the older card
stays as history with its sources, and search folds it under the newer one."""

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from stratagate_plugin.core.config import MemoryConfig
from stratagate_plugin.core.events.cards import EventCard
from stratagate_plugin.core.llm.base import ScriptedModel
from stratagate_plugin.core.memory import StrataGate

DAY = datetime(2026, 12, 1, 10, 0, tzinfo=UTC)


async def said_on_days(memory: StrataGate, statements: list[str], gap: int = 1) -> list[str]:
    """Each statement in its own session, ``gap`` days apart, sealed and derived in turn."""
    ids: list[str] = []
    for day, text in enumerate(statements):
        thread = f"session-{day}"
        at = DAY + timedelta(days=day * gap)
        turn = await memory.blocks.append_turn("ns", thread, user=text, assistant="Noted.", at=at)
        ids.append(turn.message_ids[0])
        await memory.blocks.seal_tail("ns", thread)
        await memory.derivation.process_pending()
    return ids


def stating(cards: list[EventCard], message_id: str) -> EventCard:
    [found] = [card for card in cards if message_id in card.source_message_ids]
    return found


CHANGES = {
    "offsite-cancelled": ("Our team offsite is on 14 January 2027.",
                          "Actually the offsite is cancelled.", "Is the offsite still happening?"),
    "coffee-stopped": ("I drink coffee every morning.", "I don't drink coffee anymore.",
                       "Do I drink coffee?"),
    "clara-moved": ("Clara lives in Porto.", "Clara moved to Lisbon.", "Where does Clara live?"),
    "trip-called-off": ("We're taking the kids to Iceland next February.",
                        "We called off the Iceland trip.", "Are we going to Iceland?"),
    "yoga-no-longer": ("I go to yoga every Saturday morning.", "I no longer go to yoga.",
                       "Do I still do yoga?"),
    "tom-now-lives": ("My friend Tom lives in Leeds.", "Tom now lives in York.",
                      "Where does Tom live?"),
    "annual-meeting-zh": ("我们团队的年会定在2027年1月14日。", "年会取消了。", "年会还办吗？"),
    "coffee-zh": ("我每天早上喝咖啡。", "我已经不喝咖啡了。", "我喝咖啡吗？"),
    "mother-moved-zh": ("我妈妈住在南京。", "我妈妈搬到苏州了。", "我妈妈住在哪里？"),
    "swim-zh": ("我每周三去游泳。", "我不再去游泳了。", "我还去游泳吗？"),
    "ravi-new-job": ("Ravi works at Siemens in Munich.", "Ravi now works at Bosch.",
                     "Where does Ravi work?"),
    "new-job-zh": ("我在腾讯工作。", "我现在在字节跳动工作。", "我在哪里工作？"),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(CHANGES))
async def test_a_change_of_mind_in_a_later_session_supersedes_the_older_event(
    db_path: Path, case: str
) -> None:
    first, second, question = CHANGES[case]
    async with await StrataGate.open(db_path, MemoryConfig(block_turn_size=12)) as memory:
        ids = await said_on_days(memory, [first, second])
        cards = await memory.events.cards("ns")
        older, newer = stating(cards, ids[0]), stating(cards, ids[1])
        assert (older.status, older.superseded_by) == ("superseded", newer.id)
        assert newer.status == "active" and older.id in newer.temporal["supersedes_event_ids"]
        assert older.source_message_ids == [ids[0]]  # the history keeps its source
        hits = await memory.events.search("ns", question)
        assert hits and hits[0].card.id == newer.id
        assert [card.id for card in hits[0].history] == [older.id]


async def test_the_cancelled_offsite_keeps_its_old_date_as_history(db_path: Path) -> None:
    first, second, question = CHANGES["offsite-cancelled"]
    async with await StrataGate.open(db_path, MemoryConfig(block_turn_size=12)) as memory:
        ids = await said_on_days(memory, [first, second])
        [hit] = (await memory.events.search("ns", question))[:1]
        recall = await memory.retrieval.auto_context("ns", "session-9", question)
    assert hit.card.temporal["status"] == "cancelled"
    assert hit.card.source_message_ids == [ids[1]]
    [line] = hit.compact()["history"]
    assert line["happenedStart"].startswith("2027-01-14") and line["status"] == "superseded"
    assert [card.id for card in recall.events] == [hit.card.id]  # the current value only
    assert [card.source_message_ids for card in recall.history[hit.card.id]] == [[ids[0]]]


FILLER = [
    "I finished reading Dune last night.", "We adopted a cat named Miso.",
    "My sister Eva got a job at the museum.", "I started learning the cello.",
    "We bought a new sofa for the living room.", "I ran my first half marathon.",
    "Our neighbour Ben fixed the fence.", "I booked a dentist appointment for Friday.",
    "We painted the garage door green.", "I joined a chess club downtown.",
    "My cousin Ivo visited from Zagreb.", "I planted tomatoes in the garden.",
    "We watched the new Bond film.", "I signed up for a pottery course.",
]  # fmt: skip


async def test_the_older_event_is_found_days_and_many_events_earlier(db_path: Path) -> None:
    first, second, _ = CHANGES["offsite-cancelled"]
    async with await StrataGate.open(db_path, MemoryConfig(block_turn_size=12)) as memory:
        ids = await said_on_days(memory, [first, *FILLER, second], gap=2)
        cards = await memory.events.cards("ns")
    assert stating(cards, ids[0]).superseded_by == stating(cards, ids[-1]).id
    assert sum(card.status == "superseded" for card in cards) == 1


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("Our team offsite is on 14 January 2027.", "The dinner with Sam is cancelled."),
        ("Clara lives in Porto.", "Marco moved to Lisbon."),  # another person
        ("Caroline: I live in Boston.", "Melanie: I moved to Denver."),  # another speaker
        ("I drink coffee every morning.", "I don't watch television anymore."),
        ("We went to Iceland last summer.", "We called off the Iceland trip."),  # it happened
        ("我妈妈住在南京。", "我姐姐搬到苏州了。"),
        ("我每天早上喝咖啡。", "我不再看电视了。"),
        ("Ravi works at Siemens in Munich.", "Ravi moved to Berlin."),  # a home is not a job
        # the older sentence holds a second fact: a move does not take it down with it
        ("I live in Paris and I love painting landscapes.", "I moved to Berlin last month."),
        # a cancelling word under a negation, a push without a time: nothing changes
        ("We're going to the lake house in June.", "I'm not going to cancel the lake house trip."),
        ("我们下个月去成都旅行。", "我们不会取消成都的旅行。"),
        (
            "Losing my job gave me the push to start my own bakery.",
            "Losing my job was a bummer, but it pushed me to take the plunge on the bakery.",
        ),
    ],
)
async def test_a_change_of_something_else_leaves_the_older_event_active(
    db_path: Path, first: str, second: str
) -> None:
    async with await StrataGate.open(db_path, MemoryConfig(block_turn_size=12)) as memory:
        ids = await said_on_days(memory, [first, second])
        cards = await memory.events.cards("ns")
    assert stating(cards, ids[0]).status == "active"


# --- the model path: a change card without a supersede link is linked after the model ----

SUMMARY = {"title": "Trip", "tags": ["trip"], "summary": "Trip talk.", "keypoints": ["k"]}


def card(source: str, title: str, summary: str, **temporal: Any) -> dict[str, Any]:
    return {"title": title, "summary": summary, "source_message_ids": [source],
            "scope": "user", "temporal": temporal}  # fmt: skip


async def test_a_model_cancellation_without_a_link_supersedes_its_subject(db_path: Path) -> None:
    model = ScriptedModel.of([])
    async with await StrataGate.open(db_path, MemoryConfig(block_turn_size=1), model) as memory:
        plan = await memory.blocks.append_turn("ns", "a", user="Rome trip on 3 May 2027.", at=DAY)
        model.push(
            SUMMARY,
            {
                "should_extract": True,
                "events": [
                    card(
                        plan.message_ids[0],
                        "Rome trip on 3 May 2027",
                        "The user plans a trip to Rome on 3 May 2027.",
                        event_type="plan",
                    )
                ],
            },
        )
        await memory.derivation.process_pending()
        later = DAY + timedelta(days=4)
        cancel = await memory.blocks.append_turn("ns", "b", user="The Rome trip is off.", at=later)
        model.push(
            SUMMARY,
            {
                "should_extract": True,
                "events": [
                    card(
                        cancel.message_ids[0],
                        "Rome trip cancelled",
                        "The user cancelled the Rome trip.",
                        event_type="cancellation",
                        status="cancelled",
                    )
                ],
            },
        )
        await memory.derivation.process_pending()
        cards = await memory.events.cards("ns")
    older, newer = stating(cards, plan.message_ids[0]), stating(cards, cancel.message_ids[0])
    assert (older.status, older.superseded_by) == ("superseded", newer.id)
    assert newer.temporal["supersedes_event_ids"] == [older.id]


# --- what there is to replace: standing facts are events of their own -------------------


@pytest.mark.parametrize(
    ("text", "event"),
    [
        ("I walk the dog every evening.", True),
        ("Priya lives in Pune.", True),
        ("My uncle works as a chef in Lyon.", True),
        ("我对花生过敏。", True),
        ("我每周三去游泳。", True),
        ("I'm so excited about dancing every day with my students.", False),  # a feeling
        ("每天跳舞都让我超级兴奋。", False),
    ],
)
async def test_a_habit_home_job_or_health_fact_is_an_event(
    db_path: Path, text: str, event: bool
) -> None:
    async with await StrataGate.open(db_path, MemoryConfig(block_turn_size=12)) as memory:
        [said] = await said_on_days(memory, [text])
        cards = await memory.events.cards("ns")
    assert any(said in card.source_message_ids for card in cards) is event
