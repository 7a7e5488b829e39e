"""A job that meets another process's write lock past the busy timeout is handed back, not
failed: the same run takes it again and nothing is left failed (the contention of two
``process`` runs once left a graph job failed with backoff, so ``process`` exited 1)."""

import sqlite3
from pathlib import Path

import pytest
from topic_data import add_events, new_space

from stratagate_plugin.core.errors import StorageBusy
from stratagate_plugin.core.graph.service import Projector
from stratagate_plugin.core.memory import StrataGate
from stratagate_plugin.core.records import Job
from stratagate_plugin.core.store.health import describe
from stratagate_plugin.core.topics.service import TopicsService


def test_a_locked_file_is_told_apart_from_other_storage_errors(tmp_path: Path) -> None:
    busy = describe(tmp_path / "m.db", sqlite3.OperationalError("database is locked"))
    damaged = describe(tmp_path / "m.db", sqlite3.DatabaseError("database disk image is malformed"))
    assert isinstance(busy, StorageBusy) and "busy timeout" in str(busy)
    assert not isinstance(damaged, StorageBusy)


async def test_a_busy_graph_job_is_given_back_and_runs_again(
    memory: StrataGate, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_run, calls = Projector.run, []

    async def busy_once(self: Projector, job: Job) -> str:
        calls.append(job.id)
        if len(calls) == 1:
            raise StorageBusy("m.db stayed locked by another process past the busy timeout")
        return await real_run(self, job)

    monkeypatch.setattr(Projector, "run", busy_once)
    await memory.blocks.append_turn(
        "ns", "t", user="Caroline: I live in Paris.", assistant="Noted."
    )
    await memory.blocks.seal_tail("ns", "t")
    report = await memory.derivation.process_pending()
    assert calls[0] == calls[1]  # the handed-back job was claimed again in the same run
    assert report.graph_failed == 0
    graph_jobs = [
        job for job in await memory.derivation.list_jobs() if job.kind == "graph_projection"
    ]
    assert graph_jobs and {job.status for job in graph_jobs} == {"succeeded"}


async def test_a_busy_topic_job_is_given_back_and_runs_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_project, calls = TopicsService._project, []

    async def busy_once(self: TopicsService, job: Job) -> str:
        calls.append(job.id)
        if len(calls) == 1:
            raise StorageBusy("m.db stayed locked by another process past the busy timeout")
        return await real_project(self, job)

    monkeypatch.setattr(TopicsService, "_project", busy_once)
    async with await StrataGate.open(tmp_path / "m.db") as memory:
        await new_space(memory, "ns")
        await add_events(memory, "ns", 3)
        report = await memory.topics.process()
        assert calls[0] == calls[1] and report.failed == 0 and report.succeeded == 1
        assert (await memory.topics.book("ns"))["pending"] == []
