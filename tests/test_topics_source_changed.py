"""A topic batch whose events change between its read and its commit (another job revised
one meanwhile) is projected again from a fresh read: the stale answer is never applied, and
a batch that merely raced does not fail (``process`` once exited 1 on such a race). One that
keeps racing fails after ``SOURCE_RETRIES`` fresh reads, with the event named."""

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from topic_data import TopicScript, add_events, new_space

from stratagate_plugin.core.config import MemoryConfig
from stratagate_plugin.core.llm.base import StructuredTask, T
from stratagate_plugin.core.llm.tasks import PROJECT_MEMORY_TOPICS
from stratagate_plugin.core.memory import StrataGate
from stratagate_plugin.core.topics.service import SOURCE_RETRIES

NS = "ns"


@dataclass
class RevisingScript(TopicScript):
    """Answers the topic task offline, after rewriting one of its events ``revisions`` times
    (as a concurrent job would) while the projection is under way."""

    memory: StrataGate | None = None
    revisions: int = 1
    event_id: str = ""

    async def complete(self, task: StructuredTask[T]) -> T:
        if task.name == PROJECT_MEMORY_TOPICS:
            self.topic_tasks.append(task)
            if self.revisions > 0 and self.memory is not None:
                self.revisions -= 1
                await self._revise(len(self.topic_tasks))
        return await self.offline.complete(task)

    async def _revise(self, round_: int) -> None:
        assert self.memory is not None
        summary = f"Revised summary number {round_} about pottery."
        await self.memory.db.write(
            lambda raw: raw.execute(
                "UPDATE events SET summary = ? WHERE id = ?", (summary, self.event_id)
            )
        )


async def run_with(tmp_path: Path, revisions: int) -> tuple[Any, RevisingScript, StrataGate]:
    model = RevisingScript(revisions=revisions)
    config = MemoryConfig(topic_projector="model", offline_fallback=False)
    memory = await StrataGate.open(tmp_path / "m.db", config, model)
    await new_space(memory, NS)
    ids = await add_events(memory, NS, 3)
    model.memory, model.event_id = memory, ids[0]
    return await memory.topics.process(), model, memory


async def test_a_batch_that_raced_a_revision_is_read_again_and_succeeds(tmp_path: Path) -> None:
    report, model, memory = await run_with(tmp_path, revisions=1)
    async with memory:
        assert (report.failed, report.succeeded, report.errors) == (0, 1, [])
        first, second = model.topic_tasks
        assert "Revised summary number 1" not in str(first.payload)
        assert "Revised summary number 1" in str(second.payload)  # the fresh read
        book = await memory.topics.book(NS)
        assert book["pending"] == []
        held = {i for chapter in book["chapters"] for i in chapter["eventIds"]}
        assert model.event_id in held


async def test_a_batch_that_keeps_racing_fails_naming_the_event(tmp_path: Path) -> None:
    report, model, memory = await run_with(tmp_path, revisions=SOURCE_RETRIES + 1)
    async with memory:
        assert (report.failed, report.succeeded) == (1, 0)
        assert len(model.topic_tasks) == SOURCE_RETRIES + 1
        [error] = report.errors
        assert "SourceChanged" in error and model.event_id in error
        [pending] = (await memory.topics.book(NS))["pending"]
        assert pending["status"] == "failed"
