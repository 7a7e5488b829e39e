"""Data for the topic tests: conversations derived offline, events written directly, and a
model that answers the topic task from a script and every other task offline."""

import sqlite3
from collections import deque
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from cards import T0, event_card

from stratagate_plugin.core.events.documents import EVENT_RULES
from stratagate_plugin.core.llm.base import ScriptedModel, StructuredTask, T
from stratagate_plugin.core.llm.offline.model import OfflineModel
from stratagate_plugin.core.llm.tasks import PROJECT_MEMORY_TOPICS
from stratagate_plugin.core.memory import StrataGate
from stratagate_plugin.core.store import event_rows

EN_TURNS = [
    (
        "Caroline: I went to the LGBTQ support group yesterday and it was powerful.",
        "Melanie: That's great, Caroline!",
    ),
    (
        "Caroline: I'm thinking about adoption; I want to give a kid a home.",
        "Melanie: Adoption is a beautiful choice.",
    ),
    (
        "Melanie: I painted a lake sunrise last week for my pottery class.",
        "Caroline: Your painting sounds lovely.",
    ),
    ("Melanie: My kids and I went camping at the beach in June.", "Caroline: Camping sounds fun."),
]
ZH_TURNS = [
    ("小明: 我们决定把新版官网的发布推迟到五月。", "小红: 好的，我通知设计团队。"),
    ("小明: 我喜欢喝绿茶，不喜欢咖啡。", "小红: 记住了。"),
    ("小红: 我下周要去杭州参加产品会议。", "小明: 祝会议顺利。"),
]


async def conversation(memory: StrataGate, space: str, turns: list[tuple[str, str]]) -> None:
    """The turns in one thread, sealed and derived (topics included) by the offline model."""
    for user, assistant in turns:
        await memory.blocks.append_turn(space, "t1", user=user, assistant=assistant)
    await memory.blocks.seal_tail(space, "t1")
    await memory.derivation.process_pending()


async def add_events(
    memory: StrataGate,
    space: str,
    count: int,
    start: int = 0,
    distinct: bool = False,
    **fields: Any,
) -> list[str]:
    """``count`` events written straight to the store (the space must exist), titled
    ``Event <n> about <word>`` (one of seven words, or each its own when ``distinct``);
    no topic pass runs."""
    cards = []
    for n in range(start, start + count):
        word = f"subject{n:04d}" if distinct else WORDS[n % len(WORDS)]
        cards.append(
            event_card(
                f"evt_{space}_{n:04d}",
                namespace=space,
                title=f"Event {n} about {word}",
                summary=f"Something happened with {word} (number {n}).",
                tags=[word],
                **fields,
            )
        )

    def write(raw: sqlite3.Connection) -> None:
        for card in cards:
            event_rows.insert_event(raw, card, EVENT_RULES)

    await memory.db.write(write)
    return [card.id for card in cards]


WORDS = ["gardening", "pottery", "camping", "guitar", "chess", "cooking", "running"]


async def new_space(memory: StrataGate, space: str) -> None:
    """A memory space (its row) holding no event yet."""
    await memory.blocks.append_turn(space, "t0", user="hello", assistant="hi")


@dataclass
class TopicScript:
    """Offline for every task but the topic projection, which answers from ``answers``
    (a dict, an exception, or ``None`` for the offline grouper's own answer)."""

    answers: deque[Any] = field(default_factory=deque)
    name: str = "topic-script"
    offline: OfflineModel = field(default_factory=OfflineModel)
    topic_tasks: list[StructuredTask[Any]] = field(default_factory=list)

    async def complete(self, task: StructuredTask[T]) -> T:
        if task.name != PROJECT_MEMORY_TOPICS or not self.answers:
            return await self.offline.complete(task)
        self.topic_tasks.append(task)
        answer = self.answers.popleft()
        if answer is None:
            return await self.offline.complete(task)
        return await ScriptedModel.of([answer]).complete(task)


def at(minutes: float) -> datetime:
    """``minutes`` after the test cards' creation time."""
    return T0 + timedelta(minutes=minutes)
