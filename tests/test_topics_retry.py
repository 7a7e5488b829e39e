"""One retry rule for a topic batch wherever it is asked for (spec §5.3): the topics page,
the jobs page's "retry every failed job", one job's retry and ``stratagate jobs retry
--all`` all queue its events again as a fresh job (a new id, attempts from zero) that a
historical batch still runs only within the historical budget."""

import json
import sqlite3
from collections import deque
from pathlib import Path

import pytest
from topic_data import TopicScript, add_events, at, new_space

from stratagate_plugin.core.clock import iso
from stratagate_plugin.core.config import MemoryConfig
from stratagate_plugin.core.errors import InvalidInput
from stratagate_plugin.core.llm.base import ModelError
from stratagate_plugin.core.memory import StrataGate
from stratagate_plugin.core.records import Job
from stratagate_plugin.core.store import jobs
from stratagate_plugin.core.topics.budget import LEDGER_KEY

NS = "ns"


async def old_space(path: Path) -> None:
    """A space whose three events predate the topic catalog: a historical batch."""
    async with await StrataGate.open(path) as memory:
        await new_space(memory, NS)
        await add_events(memory, NS, 3)
        await memory.db.write(lambda raw: raw.execute("DELETE FROM topic_state"))


async def exhaust(memory: StrataGate) -> str:
    """Three failed attempts (two in the first budget window, one in the next)."""
    for minutes in (0, 0.5, 10):
        memory.topics.clock = lambda m=minutes: at(m)  # type: ignore[method-assign]
        assert (await memory.topics.process()).failed == 1
    [pending] = (await memory.topics.book(NS))["pending"]
    assert (pending["status"], pending["attempts"], pending["nextRetryAt"]) == ("failed", 3, None)
    return str(pending["jobId"])


def job(raw: sqlite3.Connection, job_id: str) -> Job:
    return jobs.get_job(raw, job_id)


@pytest.mark.parametrize("path", ["topics page", "jobs page", "one job", "every space"])
async def test_every_retry_path_queues_a_fresh_job_under_the_budget(
    tmp_path: Path, path: str
) -> None:
    await old_space(tmp_path / "m.db")
    model = TopicScript(answers=deque([ModelError("down")] * 3))
    config = MemoryConfig(topic_projector="model", offline_fallback=False)  # failing on purpose
    async with await StrataGate.open(tmp_path / "m.db", config, model) as memory:
        failed = await exhaust(memory)
        retry = {
            "topics page": lambda: memory.topics.retry(NS),
            "jobs page": lambda: memory.overview.retry_failed_jobs_in(NS),
            "one job": lambda: memory.derivation.retry_job(failed),
            "every space": lambda: memory.derivation.retry_failed_jobs(),
        }[path]
        answer = await retry()
        assert answer == 1 or (isinstance(answer, Job) and answer.id != failed)
        old = await memory.db.read(lambda raw: job(raw, failed))
        assert old.status == "skipped" and "retried as batch" in (old.detail or "")
        [fresh] = (await memory.topics.book(NS))["pending"]
        assert fresh["jobId"] != failed and (fresh["status"], fresh["attempts"]) == ("pending", 0)
        assert len(fresh["eventIds"]) == 3
        spent = json.dumps({"reset_at": iso(at(30)), "used": 2})
        await memory.db.write(
            lambda raw: raw.execute("UPDATE meta SET value = ? WHERE key = ?", (spent, LEDGER_KEY))
        )
        memory.topics.clock = lambda: at(11)  # type: ignore[method-assign]
        assert (await memory.topics.process()).ran == 0  # historical: waits for the budget
        memory.topics.clock = lambda: at(30)  # type: ignore[method-assign]
        assert (await memory.topics.process()).succeeded == 1  # the grouper answers now
        book = await memory.topics.book(NS)
        assert book["pending"] == [] and book["fallbackEntries"] == 0
        with pytest.raises(InvalidInput, match="only failed jobs"):
            await memory.derivation.retry_job(fresh["jobId"])


async def test_a_topic_batch_is_due_for_an_idle_worker_only_within_the_budget(
    tmp_path: Path,
) -> None:
    """What an idle worker's poll asks (``topics.jobs_due``): a historical batch counts
    while the budget has a slot, or always with a free projector; none queued, none due."""
    async with await StrataGate.open(tmp_path / "empty.db") as memory:
        await new_space(memory, NS)
        assert not await memory.topics.jobs_due()
    await old_space(tmp_path / "m.db")
    config = MemoryConfig(topic_projector="model")
    async with await StrataGate.open(tmp_path / "m.db", config, TopicScript()) as memory:
        memory.topics.clock = lambda: at(11)  # type: ignore[method-assign]
        assert await memory.topics.jobs_due()
        spent = json.dumps({"reset_at": iso(at(30)), "used": 2})
        await memory.db.write(
            lambda raw: raw.execute(
                "INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET "
                "value = excluded.value",
                (LEDGER_KEY, spent),
            )
        )
        assert not await memory.topics.jobs_due()
        memory.topics.clock = lambda: at(30)  # type: ignore[method-assign]
        assert await memory.topics.jobs_due()
    async with await StrataGate.open(tmp_path / "m.db") as memory:  # the offline grouper
        memory.topics.clock = lambda: at(11)  # type: ignore[method-assign]
        assert await memory.topics.jobs_due()
        assert (await memory.topics.process()).succeeded == 1
        assert not await memory.topics.jobs_due()
