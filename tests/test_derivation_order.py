"""A pass with several workers derives what one worker derives, whatever order the model's
answers arrive in: the same events, the same supersede and restatement links, and the same
ranked search results (the precondition of comparing `stratagate bench locomo` runs byte
for byte).

The model here is the offline model behind a gate: a call is answered only when every
running summary or extraction job is waiting at the gate, and then the newest call goes
first, so later blocks (of other threads) finish before earlier ones. No sleeps: the gate
looks again whenever a call arrives or a job ends.
"""

import asyncio
import json
import sqlite3
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from stratagate_plugin.core.config import MemoryConfig
from stratagate_plugin.core.derivation.service import DERIVATION_JOBS
from stratagate_plugin.core.llm.base import StructuredTask
from stratagate_plugin.core.llm.offline.model import OfflineModel
from stratagate_plugin.core.llm.tasks import EXTRACT_EVENT_CARDS, SUMMARIZE_BLOCK
from stratagate_plugin.core.memory import StrataGate
from stratagate_plugin.core.records import Job

T = TypeVar("T")
CONFIG = MemoryConfig(block_turn_size=2)
SPACE = "home"
# Four threads of one space, two blocks each. Later threads restate, cancel and move what
# earlier ones said, so which card is inserted, restated or superseded depends on the
# order in which the blocks' extractions commit.
THREADS = {
    "monday": [
        "I'm going to start pottery classes at the community centre in March.",
        "My sister Lena lent me her old bicycle yesterday.",
        "We booked the cabin at Lake Tahoe for the first week of July.",
        "I adopted a grey cat named Pixel last weekend.",
    ],
    "tuesday": [
        "I'm going to start pottery classes at the community centre in March.",
        "Lena asked for her bicycle back this morning.",
        "I adopted a grey cat named Pixel last weekend.",
        "I signed up for the Berlin half marathon in September.",
    ],
    "wednesday": [
        "I cancelled the pottery classes at the community centre.",
        "We moved the Lake Tahoe cabin booking to the second week of August.",
        "I signed up for the Berlin half marathon in September.",
        "My sister Lena got a new job at the museum.",
    ],
    "thursday": [
        "I withdrew from the Berlin half marathon because of my knee.",
        "We cancelled the Lake Tahoe cabin booking.",
        "I'm going to start pottery classes at the community centre in March.",
        "Pixel the cat knocked over my coffee this morning.",
    ],
}
QUESTIONS = [
    "pottery classes community centre",
    "Lake Tahoe cabin booking",
    "Berlin half marathon",
    "Lena bicycle",
    "grey cat Pixel",
]


class ScrambledModel:
    """The offline model, its summary and extraction answers released newest first once
    every running derivation job is waiting here (so a pass never stalls on the gate)."""

    name = "offline"

    def __init__(self) -> None:
        self.offline = OfflineModel()
        self.memory: StrataGate | None = None
        self.waiting: list[asyncio.Event] = []
        self.released = 0
        self._looks: set[asyncio.Task[None]] = set()

    async def complete(self, task: StructuredTask[T]) -> T:
        if task.name in (SUMMARIZE_BLOCK, EXTRACT_EVENT_CARDS):
            turn = asyncio.Event()
            self.waiting.append(turn)
            await self.look()
            await asyncio.wait_for(turn.wait(), timeout=120)
        return await self.offline.complete(task)

    def job_ended(self, job: Job) -> None:
        look = asyncio.get_running_loop().create_task(self.look())
        self._looks.add(look)
        look.add_done_callback(self._looks.discard)

    async def look(self) -> None:
        assert self.memory is not None
        running = [
            job
            for job in await self.memory.derivation.list_jobs(status="running")
            if job.kind in DERIVATION_JOBS
        ]
        if self.waiting and len(self.waiting) >= len(running):
            self.waiting.pop().set()  # the newest call goes first
            self.released += 1


async def record(memory: StrataGate) -> None:
    for day, (thread, lines) in enumerate(THREADS.items(), start=2):
        for i, line in enumerate(lines):
            at = datetime(2026, 3, day, 9, i, tzinfo=UTC)
            await memory.blocks.append_turn(
                SPACE, thread, user=line, assistant="Noted.", at=at, receipt_id=f"{thread}:{i}"
            )
        await memory.blocks.seal_tail(SPACE, thread)


async def derive(path: Path, workers: int, scrambled: bool) -> dict[str, Any]:
    model = ScrambledModel() if scrambled else OfflineModel()
    async with await StrataGate.open(path, CONFIG, model=model) as memory:
        await record(memory)
        on_job = None
        if isinstance(model, ScrambledModel):
            model.memory, on_job = memory, model.job_ended
        report = await memory.derivation.process_pending(concurrency=workers, on_job=on_job)
        assert not report.errors
        if isinstance(model, ScrambledModel):
            assert model.released == 2 * len(report.ready_blocks) - report.skipped
        ranked = {
            q: [h.message_id for h in await memory.retrieval.retrieve(SPACE, q, 10)]
            for q in QUESTIONS
        }
        events = {
            q: [
                h.card.id
                for h in await memory.events.search(SPACE, q, limit=10, track_retrieval=False)
            ]
            for q in QUESTIONS
        }
    return described(path, ranked, events)


def described(path: Path, ranked: dict[str, list[str]], events: dict[str, list[str]]) -> Any:
    """The derived memory and the rankings with every id replaced by what it names (a
    message by thread and position, an event by its block and title): ids differ by run."""
    plain = sqlite3.connect(path)
    plain.row_factory = sqlite3.Row
    blocks = {
        row["id"]: f"{row['thread_id']}#{row['thread_sequence']}"
        for row in plain.execute("SELECT * FROM blocks")
    }
    names = {
        row["id"]: f"{row['thread_id']}:{row['position']}"
        for row in plain.execute("SELECT id, thread_id, position FROM messages")
    }
    nodes = plain.execute("SELECT id, name_key, type FROM graph_nodes").fetchall()
    names |= {row["id"]: f"{row['type']} {row['name_key']}" for row in nodes}
    rows = plain.execute("SELECT * FROM events ORDER BY pk").fetchall()
    names |= {row["id"]: f"{blocks[row['source_block_id']]} {row['title']}" for row in rows}
    plain.close()

    def named(value: Any) -> Any:
        if isinstance(value, str):
            return names.get(value, value)
        if isinstance(value, list):
            return [named(item) for item in value]
        if isinstance(value, dict):
            return {key: named(item) for key, item in value.items()}
        return value

    cards = [
        (
            names[row["id"]],
            row["status"],
            named(row["superseded_by"]),
            row["mention_count"],
            named(json.loads(row["temporal_json"])),
        )
        for row in rows
    ]
    return {"events": cards, "ranked": named(ranked), "event_search": named(events)}


def test_scrambled_workers_derive_what_one_worker_derives(tmp_path: Path) -> None:
    one = asyncio.run(derive(tmp_path / "one.db", workers=1, scrambled=False))
    many = asyncio.run(derive(tmp_path / "many.db", workers=4, scrambled=True))
    assert [card[1:] for card in one["events"] if card[1] == "superseded"]  # links exist
    assert any(card[3] > 1 for card in one["events"])  # restatements exist
    assert many["events"] == one["events"]
    assert many["event_search"] == one["event_search"]
    assert many["ranked"] == one["ranked"]
