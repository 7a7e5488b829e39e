"""Chinese chapter titles name things (issue 26): a Han word must stand in a noun frame
(的, a measure word) at least once, must not be a piece of a longer word (its neighbour
is always the same character) and what it grows into must end a tag, the head of a
Chinese phrase; so 玩得开心, 记住, 美好 or 装店 never name a chapter. And the same events
give the same chapters in every run: they are batched in the order of their turns, not in
the order concurrent workers happened to write them."""

import sqlite3
from pathlib import Path

from cards import event_card
from topic_data import new_space

from stratagate_plugin.core.events.documents import EVENT_RULES
from stratagate_plugin.core.memory import StrataGate
from stratagate_plugin.core.store import event_rows, topic_jobs
from stratagate_plugin.core.topics.chapter_words import describe
from stratagate_plugin.core.topics.subjects import TermStats, chapter_title


def events(person: str, said: list[tuple[str, list[str]]]) -> list[dict[str, object]]:
    return [
        {
            "id": f"e{n}",
            "title": title,
            "summary": f"{person}说：{title}",
            "tags": tags,
            "participants": [person],
        }
        for n, (title, tags) in enumerate(said)
    ]


JON = events(
    "乔恩",
    [
        ("乔恩和朋友们在派对上玩得很开心", ["玩得开心", "派对"]),
        ("乔恩和学生们玩得很开心", ["玩得开心"]),
        ("乔恩周末在海边玩得很开心", ["玩得开心", "海边"]),
        ("乔恩记住了学生的笑容", ["记住", "笑容"]),
        ("乔恩记住了那天的日落", ["记住", "日落"]),
        ("乔恩的舞蹈工作室开业了", ["舞蹈工作室", "开业"]),
        ("乔恩在舞蹈工作室教孩子跳舞", ["舞蹈工作室", "教学"]),
    ],
)
GINA = events(
    "吉娜",
    [
        ("吉娜想经营自己的线上服装店", ["线上服装店", "经营自己"]),
        ("吉娜的线上服装店来了新顾客", ["线上服装店", "顾客"]),
        ("吉娜为线上服装店拍了一组照片", ["照片", "线上服装店"]),
        ("吉娜觉得经营自己的事业很美好", ["经营自己", "美好"]),
        ("吉娜把照片发给了朋友", ["照片"]),
    ],
)


def test_a_chinese_title_names_things_not_what_was_done_or_felt() -> None:
    assert chapter_title(JON, TermStats(), zh=True) == "乔恩：舞蹈工作室"
    assert describe(JON, TermStats(), zh=True) == "乔恩：舞蹈工作室"
    title = chapter_title(GINA, TermStats(), zh=True)
    person, _, subjects = title.partition("：")
    assert person == "吉娜" and subjects, title
    for weak in ("经营", "自己", "美好", "上服装店", "装店"):
        assert weak not in subjects.split("、"), title
    assert "线上服装店" in subjects or "照片" in subjects, title


MARIA = events(
    "玛丽亚",
    [
        ("玛丽亚在公园度过了美好的一天", ["美好", "公园"]),
        ("玛丽亚说那些都是美好的回忆", ["美好", "回忆"]),
        ("玛丽亚和家人去公园野餐", ["家人", "公园"]),
        ("玛丽亚在美好的回忆中找到力量", ["美好"]),
        ("玛丽亚的家人来看她", ["家人"]),
    ],
)


def test_a_word_only_ever_met_as_a_modifier_names_nothing() -> None:
    """美好 is always followed by 的 (美好的一天, 美好的回忆): it describes, it is not the
    subject, though the extractor tagged it three times."""
    assert chapter_title(MARIA, TermStats(), zh=True) == "玛丽亚：公园、家人"


def test_a_chapters_title_does_not_depend_on_the_order_of_its_events() -> None:
    assert chapter_title(JON[::-1], TermStats(), zh=True) == chapter_title(JON, TermStats(), True)


async def test_events_are_batched_in_the_order_of_their_turns_not_of_their_writing(
    tmp_path: Path,
) -> None:
    """Two workers derived turn 9's block before turn 3's: the batch still starts with
    turn 3's events, so every run groups the same events the same way."""
    async with await StrataGate.open(tmp_path / "m.db") as memory:
        await new_space(memory, "ns")
        written = [("evt_b1", 9), ("evt_b2", 9), ("evt_a1", 3), ("evt_a2", 3), ("evt_c1", 6)]

        def insert(raw: sqlite3.Connection) -> None:
            for event_id, turn in written:
                event_rows.insert_event(raw, event_card(event_id, formed_turn=turn), EVENT_RULES)

        await memory.db.write(insert)
        await memory.topics.refile_unfiled()  # what the sync does before reading them
        rows = await memory.db.read(lambda raw: topic_jobs.unplaced_rows(raw, "ns"))
    assert [row["id"] for row in rows] == ["evt_a1", "evt_a2", "evt_c1", "evt_b1", "evt_b2"]
