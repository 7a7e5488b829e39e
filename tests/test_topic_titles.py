"""Chapters named by what they hold (issue 26): people and recurring subjects, in English
and Chinese; never the memory's own tags (``agent-recorded``, ``category:fact``) nor a
bare event type or import category (``preference``, ``project``), on the offline path
and, by validation, on the model's. A long run of one person's events reads as chapters
and sections of at most 40 events."""

import sqlite3
from collections import deque
from pathlib import Path
from typing import Any

import pytest
from cards import event_card
from topic_data import TopicScript, new_space

from stratagate_plugin.core.config import MemoryConfig
from stratagate_plugin.core.events.documents import EVENT_RULES
from stratagate_plugin.core.llm.tasks import PROJECT_MEMORY_TOPICS, TopicProjection
from stratagate_plugin.core.memory import StrataGate
from stratagate_plugin.core.store import event_rows
from stratagate_plugin.core.topics.frames import noun_votes
from stratagate_plugin.core.topics.model import label_key
from stratagate_plugin.core.topics.subjects import TermStats, chapter_title, is_internal_label
from stratagate_plugin.core.topics.validation import InvalidProjection, validate_projection

NS = "ns"
INTERNAL = {"agent-recorded", "category:fact", "category:preference", "preference", "project"}


async def write(memory: StrataGate, cards: list[Any]) -> None:
    await new_space(memory, NS)

    def insert(raw: sqlite3.Connection) -> None:
        for card in cards:
            event_rows.insert_event(raw, card, EVENT_RULES)

    await memory.db.write(insert)


def card(n: int, title: str, tags: list[str], person: str | None = None, **more: Any) -> Any:
    temporal = {"participants": [person]} if person else {}
    return event_card(
        f"evt_{n:04d}", title=title, summary=title, tags=tags, temporal=temporal, **more
    )


async def book(memory: StrataGate) -> list[dict[str, Any]]:
    return list((await memory.topics.book(NS))["chapters"])


def all_titles(chapters: list[dict[str, Any]]) -> list[str]:
    return [c["title"] for c in chapters] + [s["title"] for c in chapters for s in c["sections"]]


AGENT_NOTES = [  # what memory_remember and an import write: tags of the memory's own
    ("The user prefers oat milk in their coffee", ["agent-recorded", "category:preference"]),
    ("The user drinks their coffee black on weekdays", ["agent-recorded", "category:preference"]),
    ("The user's coffee grinder is a Comandante", ["agent-recorded", "category:fact"]),
    ("The user is rewriting the billing service in Go", ["project"]),
    ("The billing service rewrite ships in March", ["project"]),
    ("The user wants billing service alerts by email", ["preference"]),
    ("The user prefers tea after dinner", ["preference"]),
]


async def test_internal_tags_and_event_types_never_name_a_chapter(tmp_path: Path) -> None:
    async with await StrataGate.open(tmp_path / "m.db") as memory:
        await write(memory, [card(n, t, tags) for n, (t, tags) in enumerate(AGENT_NOTES)])
        await memory.topics.process()
        chapters = await book(memory)
    assert sum(len(c["eventIds"]) for c in chapters) == len(AGENT_NOTES)
    titles = all_titles(chapters)
    assert not {label_key(t) for t in titles} & INTERNAL, titles
    assert not any(is_internal_label(t) for t in titles), titles
    named = " ".join(c["title"] for c in chapters).lower()
    assert "coffee" in named and "billing" in named, named  # the recurring subjects


def running_log(person: str, count: int) -> list[Any]:
    """``count`` events of one person over several recurring subjects, one a day."""
    subjects = [
        ("swam 2 km at the lido", ["lido", "swimming"]),
        ("fixed the bike's rear brake", ["bike", "brake"]),
        ("baked rye bread with the starter", ["rye bread", "starter"]),
        ("practised scales on the cello", ["cello", "scales"]),
        ("repotted the fig tree on the balcony", ["fig tree", "balcony"]),
    ]
    return [
        card(n, f"{person} {subjects[n % 5][0]} (day {n})", subjects[n % 5][1], person)
        for n in range(count)
    ]


async def test_a_long_run_of_one_person_reads_as_chapters_of_at_most_40(tmp_path: Path) -> None:
    async with await StrataGate.open(tmp_path / "m.db") as memory:
        await write(memory, running_log("Odile", 130))
        report = await memory.topics.process()
        chapters = await book(memory)
    assert report.failed == 0 and len(chapters) >= 4
    assert all(len(c["eventIds"]) <= 40 for c in chapters)
    assert all(len(s["eventIds"]) <= 40 for c in chapters for s in c["sections"])
    assert sum(len(c["eventIds"]) for c in chapters) == 130
    titles = [c["title"] for c in chapters]
    assert len({label_key(t) for t in titles}) == len(titles)
    assert all(t.startswith("Odile") for t in titles), titles
    subjects = {"lido", "bike", "rye bread", "cello", "fig tree", "swimming", "starter"}
    assert all(any(s in t.lower() for s in subjects) for t in titles), titles


ZH_LOG = [
    ("阿杰报名了周六的陶艺课", ["陶艺课", "周六"]),
    ("阿杰在陶艺课上做了一个茶杯", ["陶艺课", "茶杯"]),
    ("阿杰把陶艺课的作品送给了妈妈", ["陶艺课", "作品"]),
    ("阿杰开始为马拉松训练", ["马拉松", "训练"]),
    ("阿杰的马拉松目标是四小时", ["马拉松", "目标"]),
    ("阿杰在马拉松前扭伤了脚踝", ["马拉松", "脚踝"]),
]


async def test_a_chinese_chapter_is_named_by_its_person_and_subjects(tmp_path: Path) -> None:
    async with await StrataGate.open(tmp_path / "m.db") as memory:
        await write(memory, [card(n, t, tags, "阿杰") for n, (t, tags) in enumerate(ZH_LOG)])
        await memory.topics.process()
        chapters = await book(memory)
    [chapter] = chapters
    person, _, subjects = chapter["title"].partition("：")
    assert person == "阿杰" and subjects, chapter["title"]
    assert {"陶艺课", "马拉松"} <= set(subjects.split("、")), chapter["title"]
    assert {s["title"] for s in chapter["sections"]} >= {"陶艺课", "马拉松"}


def test_titles_weigh_rarity_and_frames() -> None:
    """A word in every event of the memory, or one used as an adjective or verb, names
    nothing; a rarer noun does (English, and Chinese by its function characters)."""
    events = [
        {"id": f"e{n}", "title": title, "summary": title, "participants": ["Ines"]}
        for n, title in enumerate(
            [
                "Ines said the kayak trip was so great",
                "Ines found the kayak paddles really great",
                "Ines felt great after the kayak lesson",
            ]
        )
    ]
    stats = TermStats({"w:great": 900, "w:kayak": 12}, 1000)
    assert chapter_title(events, stats, zh=False) == "Ines: kayak"
    assert noun_votes("special", ["It was so special", "It is special to me"]) < 0
    assert noun_votes("pottery", ["I love my pottery class", "the pottery was fun"]) > 0
    assert noun_votes("太棒", ["这真是太棒了"]) < 0
    assert noun_votes("陶艺", ["我的陶艺作品", "在陶艺课上"]) > 0


@pytest.mark.parametrize(
    "title", ["agent-recorded", "category:fact", "preference", "Project", "task_completed"]
)
def test_a_model_answer_titled_by_an_internal_tag_is_rejected(title: str) -> None:
    answer = TopicProjection.model_validate({"topics": [{"title": title, "event_ids": ["e1"]}]})
    with pytest.raises(InvalidProjection, match="internal tag or a bare event type"):
        validate_projection(answer, ["e1"], {}, {})
    named = TopicProjection.model_validate(
        {"topics": [{"title": "Coffee preferences", "event_ids": ["e1"]}]}
    )
    validate_projection(named, ["e1"], {}, {})  # a subject word is fine


async def test_the_model_path_keeps_its_task_and_its_internal_title_fails(
    tmp_path: Path,
) -> None:
    bad = {"topics": [{"title": "agent-recorded", "event_ids": ["evt_0000", "evt_0001"]}]}
    model = TopicScript(answers=deque([bad]))
    config = MemoryConfig(topic_projector="model", offline_fallback=False)  # its failure
    async with await StrataGate.open(tmp_path / "m.db", config, model) as memory:
        await write(memory, [card(n, t, tags) for n, (t, tags) in enumerate(AGENT_NOTES[:2])])
        report = await memory.topics.process()
        assert report.failed == 1 and "internal tag" in report.errors[0]
        assert await book(memory) == []  # nothing of the answer was written
    [task] = model.topic_tasks  # the structured task as before: no grouper-only fields
    assert task.name == PROJECT_MEMORY_TOPICS and task.max_output_tokens == 32_768
    assert set(task.payload) == {"events", "truncated_event_ids", "candidates"}
