"""Derivation jobs are leased to one worker: another open or worker leaves a live lease
alone, takes an expired one, and a job's result is applied once, only under its claim."""

import asyncio
import sqlite3
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, TypeVar

import pytest
from test_derivation import SUMMARY, card, open_memory, seal_block

from stratagate_plugin.core.clock import utc_now
from stratagate_plugin.core.config import MemoryConfig
from stratagate_plugin.core.derivation.service import DERIVATION_JOBS, LOST, Deriver
from stratagate_plugin.core.llm.base import ModelServerError, ScriptedModel, StructuredTask
from stratagate_plugin.core.llm.tasks import EventCardDraft
from stratagate_plugin.core.memory import StrataGate
from stratagate_plugin.core.records import Job
from stratagate_plugin.core.store import jobs

T = TypeVar("T")
MINUTE = timedelta(seconds=60)


class GatedModel:
    """Says it has a task (``started``), then answers only once ``release`` is set."""

    name = "gated"

    def __init__(self, answer: Any) -> None:
        self.answer = answer
        self.started, self.release = asyncio.Event(), asyncio.Event()

    async def complete(self, task: StructuredTask[T]) -> T:
        self.started.set()
        await self.release.wait()
        if isinstance(self.answer, BaseException):
            raise self.answer
        return task.output_type.model_validate(self.answer)


def job_row(plain: sqlite3.Connection, kind: str = "event_extraction") -> sqlite3.Row:
    row: sqlite3.Row = plain.execute("SELECT * FROM jobs WHERE kind = ?", (kind,)).fetchone()
    return row


async def summarised_block(db_path: Path) -> tuple[StrataGate, list[str]]:
    """An open memory whose one block has its summary: the extraction job is due."""
    memory = await open_memory(db_path, ScriptedModel.of([SUMMARY]))
    ids = await seal_block(memory)
    await memory.derivation.process_pending(max_jobs=1)
    return memory, ids


def deriver(memory: StrataGate, model: Any, **options: Any) -> Deriver:
    """A worker of its own over the engine's storage, projecting graph jobs offline."""
    graph = memory.derivation.projector(clock=options.get("clock", utc_now))
    return Deriver(memory.storage.derivation, model, graph, **options)


async def claim(memory: StrataGate, owner: str, now: datetime | None = None) -> Job | None:
    moment = now or utc_now()
    return await memory.db.write(
        lambda raw: jobs.claim_next(raw, moment, DERIVATION_JOBS, owner, MINUTE)
    )


async def test_opening_again_leaves_a_live_workers_job_running(
    db_path: Path, plain: sqlite3.Connection
) -> None:
    memory = await open_memory(db_path, ScriptedModel())
    await seal_block(memory)
    model = GatedModel(SUMMARY)
    worker_a = deriver(memory, model)
    running = asyncio.create_task(worker_a.process_pending(max_jobs=1))
    await model.started.wait()  # A holds the summary job, its model call under way
    second = await StrataGate.open(db_path)
    row = job_row(plain, "block_summary")
    assert (row["status"], row["attempts"]) == ("running", 1)
    assert row["owner"] == worker_a.owner
    assert (await second.derivation.process_pending()).ran == 0  # nor does a second worker take it
    model.release.set()
    assert (await running).succeeded == 1
    await second.close()
    await memory.close()


async def test_an_expired_lease_is_taken_back_at_open_and_at_claim(
    db_path: Path, plain: sqlite3.Connection
) -> None:
    memory = await open_memory(db_path, ScriptedModel())
    await seal_block(memory)
    claimed_at = utc_now()
    await claim(memory, "worker-a", claimed_at)
    assert jobs.recover_expired(plain, claimed_at + MINUTE / 2) == 0
    plain.commit()
    assert await claim(memory, "worker-b", claimed_at + MINUTE / 2) is None
    after = claimed_at + MINUTE + timedelta(seconds=1)
    taken = await claim(memory, "worker-b", after)
    assert taken is not None and (taken.owner, taken.attempts, taken.claims) == ("worker-b", 2, 2)
    plain.execute("UPDATE jobs SET lease_expires_at = ?", ("2000-01-01T00:00:00+00:00",))
    plain.commit()
    await memory.close()
    await (await StrataGate.open(db_path)).close()
    row = job_row(plain, "block_summary")
    assert (row["status"], row["last_error"]) == ("failed", jobs.INTERRUPTED)
    assert row["lease_expires_at"] is None and row["next_retry_at"] is not None


async def test_applying_the_same_extraction_twice_inserts_its_cards_once(
    db_path: Path, plain: sqlite3.Connection
) -> None:
    memory, ids = await summarised_block(db_path)
    worker = deriver(memory, memory.model)
    job = await worker._claim()
    assert job is not None
    [view] = await memory.blocks.views()
    drafts = [EventCardDraft.model_validate(card(ids[0]))]
    assert await worker._finish_extraction(job, view.block, drafts, "") == "succeeded"
    assert await worker._finish_extraction(job, view.block, drafts, "") == LOST
    assert len(await memory.events.cards()) == 1
    assert job_row(plain)["detail"] == "1 events"
    await memory.close()


@pytest.mark.parametrize("first_answer", ["cards", "error"])
async def test_a_worker_whose_job_was_taken_over_applies_nothing(
    db_path: Path, plain: sqlite3.Connection, first_answer: str
) -> None:
    memory, ids = await summarised_block(db_path)
    extraction = {
        "should_extract": True,
        "events": [card(ids[0]), card(ids[2], title="Friday glaze")],
    }
    model_a = GatedModel(extraction if first_answer == "cards" else ModelServerError("503"))
    worker_a = asyncio.create_task(deriver(memory, model_a).process_pending())
    await model_a.started.wait()
    other = await StrataGate.open(db_path)  # another command opening the file meanwhile
    model_b = GatedModel(extraction)
    later = utc_now() + 2 * MINUTE  # A stalled past its lease: B may take the job over
    worker_b = deriver(other, model_b, clock=lambda: later)
    running_b = asyncio.create_task(worker_b.process_pending())
    await model_b.started.wait()
    model_b.release.set()
    report_b = await running_b
    model_a.release.set()
    report_a = await worker_a
    assert len(await memory.events.cards()) == 2
    row = job_row(plain)
    assert (row["status"], row["detail"]) == ("succeeded", "2 events")
    assert (row["owner"], row["claims"]) == (worker_b.owner, 2)
    assert (report_b.succeeded, report_a.lost, report_a.failed, report_a.succeeded) == (1, 1, 0, 0)
    await other.close()
    await memory.close()


async def test_the_lease_is_renewed_while_the_model_works(
    db_path: Path, plain: sqlite3.Connection
) -> None:
    class WaitsForRenewal:
        name = "waits"

        async def complete(self, task: StructuredTask[T]) -> T:
            claimed = job_row(plain, "block_summary")["lease_expires_at"]
            while job_row(plain, "block_summary")["lease_expires_at"] == claimed:
                await asyncio.sleep(0.005)
            return task.output_type.model_validate(SUMMARY)

    config = MemoryConfig(block_turn_size=2, job_lease_s=0.03)
    memory = await StrataGate.open(db_path, config, model=WaitsForRenewal())
    await seal_block(memory)
    report = await asyncio.wait_for(memory.derivation.process_pending(max_jobs=1), timeout=30)
    assert report.succeeded == 1  # the model answered: it saw the lease renewed
    row = job_row(plain, "block_summary")
    assert (row["status"], row["lease_expires_at"]) == ("succeeded", None)
    await memory.close()


async def test_a_cancelled_run_gives_its_job_back_at_once(
    db_path: Path, plain: sqlite3.Connection
) -> None:
    model = GatedModel(SUMMARY)
    memory = await open_memory(db_path, ScriptedModel())
    await seal_block(memory)
    memory.model = model
    run = asyncio.create_task(memory.derivation.process_pending())
    await model.started.wait()
    run.cancel()
    with pytest.raises(asyncio.CancelledError):
        await run
    row = job_row(plain, "block_summary")
    assert (row["status"], row["last_error"]) == ("failed", jobs.INTERRUPTED)
    assert row["lease_expires_at"] is None and row["next_retry_at"] is not None
    memory.model = ScriptedModel.of([SUMMARY, {"should_extract": False}])
    assert (await memory.derivation.process_pending()).ran == 2
    await memory.close()


async def test_a_killed_local_workers_job_is_taken_back_at_the_next_open(tmp_path: Path) -> None:
    """A lease outlives a SIGKILLed worker; its pid being gone is proof enough here."""
    import os
    import socket
    import sqlite3
    import subprocess
    import sys

    from stratagate_plugin.core.memory import StrataGate

    path = tmp_path / "m.db"
    async with await StrataGate.open(path) as memory:
        await memory.blocks.append_turn("ns", "t", user="kiln fires friday", assistant="ok")
        await memory.blocks.seal_tail("ns", "t")
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    raw = sqlite3.connect(path)
    raw.execute(
        "UPDATE jobs SET status = 'running', attempts = 1, claims = 1, owner = ?, "
        "lease_expires_at = '2999-01-01T00:00:00+00:00'",
        (f"{socket.gethostname()}:{gone.pid}:dead0000",),
    )
    raw.execute(
        "INSERT INTO jobs(id, namespace, kind, target_id, status, attempts, claims, owner, "
        "lease_expires_at, created_at, updated_at) VALUES ('job_live', 'ns', 'block_summary', "
        "'x', 'running', 1, 1, ?, '2999-01-01T00:00:00+00:00', '2026-01-01T00:00:00+00:00', "
        "'2026-01-01T00:00:00+00:00')",
        (f"{socket.gethostname()}:{os.getpid()}:live0000",),
    )
    raw.commit()
    raw.close()
    async with await StrataGate.open(path) as memory:
        states = {job.id: job.status for job in await memory.derivation.list_jobs()}
        report = await memory.derivation.process_pending()
    assert states["job_live"] == "running"  # this process is alive: its lease holds
    assert [s for i, s in states.items() if i != "job_live"] == ["failed"]
    assert report.succeeded >= 1
