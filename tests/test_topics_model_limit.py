"""A model's chapter holds at most 40 events, as the offline grouper's do (issue 26): a
model that keeps extending one chapter has its overflow moved, in order, to new chapters
named after it, with their own sections and paragraphs, before the answer is validated."""

from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from topic_data import add_events, new_space

from stratagate_plugin.core.config import MemoryConfig
from stratagate_plugin.core.llm.base import ScriptedModel, StructuredTask
from stratagate_plugin.core.llm.offline.model import OfflineModel
from stratagate_plugin.core.llm.tasks import PROJECT_MEMORY_TOPICS, TopicProjection
from stratagate_plugin.core.memory import StrataGate
from stratagate_plugin.core.topics.chapter_limit import CHAPTER_LIMIT, held_to_limit
from stratagate_plugin.core.topics.validation import validate_projection

NS = "ns"
T = TypeVar("T")


@dataclass
class OneChapterModel:
    """Offline for every task but the topic projection, where it puts every event of the
    batch in one chapter "Everything", extending it whenever it is offered."""

    name: str = "one-chapter"
    free: bool = True  # run every batch now: the budget is not what this tests
    offline: OfflineModel = field(default_factory=OfflineModel)

    async def complete(self, task: StructuredTask[T]) -> T:
        if task.name != PROJECT_MEMORY_TOPICS:
            return await self.offline.complete(task)
        ids = [e["id"] for e in task.payload["events"]]
        same = [c for c in task.payload["candidates"] if c["title"] == "Everything"]
        answer = {
            "topics": [
                {
                    "topic_id": same[0]["topic_id"] if same else None,
                    "title": "Everything",
                    "event_ids": ids,
                    "sections": [{"title": "All of it", "event_ids": ids}],
                    "overview": [
                        {
                            "kind": "history",
                            "title": "All of it",
                            "text": "What happened.",
                            "event_ids": ids[:1],
                        },
                        {"kind": "history", "text": "The rest.", "event_ids": ids[-1:]},
                    ],
                }
            ]
        }
        return await ScriptedModel.of([answer]).complete(task)


async def test_a_model_extending_one_chapter_to_60_events_gets_chapters_of_at_most_40(
    tmp_path: Path,
) -> None:
    config = MemoryConfig(topic_projector="model")
    async with await StrataGate.open(tmp_path / "m.db", config, OneChapterModel()) as memory:
        await new_space(memory, NS)
        events = await add_events(memory, NS, 60)
        report = await memory.topics.process()
        assert report.failed == 0 and report.errors == []
        book = await memory.topics.book(NS)
        assert book["pending"] == [] and book["fallbackEntries"] == 0
        sizes = {c["title"]: c["sourceEventCount"] for c in book["chapters"]}
        assert sizes["Everything"] == CHAPTER_LIMIT and sum(sizes.values()) == 60
        assert all(size <= CHAPTER_LIMIT for size in sizes.values()), sizes
        assert set(sizes) <= {"Everything", "Everything (2)", "Everything (3)"}
        held = [
            i
            for c in book["chapters"]
            for s in c["sections"]
            for i in s["eventIds"]  # every event in a section of its chapter
        ]
        assert sorted(held) == sorted(events)


def test_an_answer_over_the_limit_is_split_in_order_and_then_valid() -> None:
    ids = [f"e{n}" for n in range(9)]
    answer = TopicProjection.model_validate(
        {
            "topics": [
                {
                    "title": "Garden",
                    "event_ids": ids,
                    "sections": [
                        {"title": "Roses", "event_ids": ids[:5]},
                        {"title": "Tools", "event_ids": ids[5:]},
                    ],
                    "overview": [
                        {"kind": "history", "title": "Roses", "text": "r", "event_ids": ids[:2]},
                        {"kind": "history", "title": "Tools", "text": "t", "event_ids": ids[6:]},
                        {"kind": "change", "text": "both", "event_ids": [ids[0], ids[8]]},
                    ],
                }
            ]
        }
    )
    split = held_to_limit(answer, {}, {"garden (2)": "topic_other"}, limit=4)
    parts = [(t.title, t.event_ids) for t in split.topics]
    assert (
        parts
        == [
            ("Garden", ids[:4]),
            ("Garden (3)", ids[4:8]),  # "Garden (2)" is another chapter's title
            ("Garden (4)", ids[8:]),
        ]
    )
    assert [(s.title, s.event_ids) for s in split.topics[1].sections] == [
        ("Roses", ["e4"]),
        ("Tools", ["e5", "e6", "e7"]),
    ]
    assert [p.text for p in split.topics[0].overview] == ["r"]  # "both" spans two parts
    assert [p.text for p in split.topics[2].overview] == []
    validate_projection(split, ids, {}, {"garden (2)": "topic_other"})


def test_an_answer_within_the_limit_is_unchanged() -> None:
    answer = TopicProjection.model_validate({"topics": [{"title": "Garden", "event_ids": ["a"]}]})
    assert held_to_limit(answer, {}, {}) == answer
