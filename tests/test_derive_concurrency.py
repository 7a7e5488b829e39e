"""Derivation with K model calls in flight (#14), against a real loopback server that
answers with the offline model: K reached and never passed, the same events and links as
one worker, each job applied once, a cancelled pass giving back every job in flight, and
a block's extraction claimed only after the earlier blocks of its space."""

import asyncio
import json
import sqlite3
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from loopback import fake_provider, loopback_server, no_proxies
from starlette.responses import JSONResponse, Response
from test_concurrent_process import copy_database
from test_llm_http import KEY, KEY_ENV, SUMMARY, _summary_task, _text_reply

from stratagate_plugin.bench.model_server import SlowModelServer, event_fingerprints
from stratagate_plugin.cli.main import main
from stratagate_plugin.core.clock import utc_now
from stratagate_plugin.core.config import MemoryConfig
from stratagate_plugin.core.derivation.service import (
    DERIVATION_JOBS,
    EXTRACTION_JOB,
    DerivationReport,
    Deriver,
)
from stratagate_plugin.core.derivation.workers import Pass, run_all
from stratagate_plugin.core.llm.base import StructuredModel
from stratagate_plugin.core.llm.http import HttpModel, HttpModelConfig
from stratagate_plugin.core.memory import StrataGate
from stratagate_plugin.core.records import SUMMARY_JOB, Job
from stratagate_plugin.core.store import jobs
from stratagate_plugin.memory_plugin.settings import validated

CONFIG = MemoryConfig(block_turn_size=2)
# Three threads of two blocks; each second block moves what its first one planned, so its
# extraction links to an event only when it ran after the first block's (thread order).
THREADS = {
    "garden": [
        "We planned the tomato planting for 3 May.",
        "Marco lent me his compost sieve yesterday.",
        "We decided to move the tomato planting to 9 May.",
        "The greenhouse heater broke last week.",
    ],
    "cycling": [
        "We booked the club race in Leeds for 14 June.",
        "Priya fixed my rear derailleur yesterday.",
        "We decided to move the Leeds club race to 21 June.",
        "My new helmet shipped on Friday.",
    ],
    "studio": [
        "We planned the pottery open day for 2 April.",
        "Ana ordered blue glaze from Glazeworks.",
        "We decided to move the pottery open day to 8 April.",
        "I cancelled the order with Glazeworks.",
    ],
}
BLOCKS = 6


async def record(path: Path) -> None:
    async with await StrataGate.open(path, CONFIG) as memory:
        for thread, lines in THREADS.items():
            for i, line in enumerate(lines):
                receipt = f"{thread}:{i}"
                await memory.blocks.append_turn(
                    "ns", thread, user=line, assistant="Noted.", receipt_id=receipt
                )


@asynccontextmanager
async def stand_in(
    monkeypatch: pytest.MonkeyPatch, held: bool = False
) -> AsyncIterator[tuple[SlowModelServer, HttpModel]]:
    """The offline model behind a loopback server; ``held``: every answer waits for the gate."""
    no_proxies(monkeypatch)
    server = SlowModelServer(gate=asyncio.Event() if held else None)
    async with loopback_server(server.app) as base_url:
        model = HttpModel(HttpModelConfig(base_url=base_url, model="stand-in"))
        try:
            yield server, model
        finally:
            if server.gate is not None:
                server.gate.set()  # held requests answer, so the server can stop
            await model.aclose()


async def derive(
    path: Path,
    model: StructuredModel | None,
    k: int,
    on_job: Callable[[Job], None] | None = None,
) -> DerivationReport:
    async with await StrataGate.open(path, CONFIG, model=model) as memory:
        return await memory.derivation.process_pending(on_job=on_job, concurrency=k)


async def fingerprints(path: Path) -> set[tuple[Any, ...]]:
    async with await StrataGate.open(path) as memory:
        return event_fingerprints(await memory.events.cards(include_hidden=True))


async def until(condition: Callable[[], bool]) -> None:
    """Wait for ``condition`` (bounded only so that a broken build fails instead of hanging)."""

    async def poll() -> None:
        while not condition():
            await asyncio.sleep(0.005)

    await asyncio.wait_for(poll(), timeout=60)


def job_rows(plain: sqlite3.Connection) -> list[sqlite3.Row]:
    return plain.execute(
        "SELECT * FROM jobs WHERE kind NOT IN "
        "('topic_projection', 'graph_projection') "
        "ORDER BY created_at, id"
    ).fetchall()


async def test_four_workers_keep_four_model_calls_in_flight_and_never_more(
    db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    await record(db_path)  # six summaries due at once
    async with stand_in(monkeypatch, held=True) as (server, model):
        run = asyncio.create_task(derive(db_path, model, 4))
        await until(lambda: server.in_flight == 4)
        assert server.gate is not None
        server.gate.set()
        report = await run
    assert server.peak_in_flight == 4
    assert (report.ran, report.failed, len(report.ready_blocks)) == (2 * BLOCKS, 0, BLOCKS)


async def test_four_workers_derive_the_same_events_and_links_as_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    one, four, offline = tmp_path / "one.db", tmp_path / "four.db", tmp_path / "offline.db"
    await record(one)
    copy_database(one, four)
    copy_database(one, offline)
    async with stand_in(monkeypatch) as (_, model):
        await derive(one, model, 1)
        await derive(four, model, 4)
    await derive(offline, None, 1)  # the offline model in process, no server
    derived = await fingerprints(one)
    assert await fingerprints(four) == derived == await fingerprints(offline)
    links = sorted(key for _, _, found in derived for key, _ in found)
    assert links == ["supersedes_event_ids"] * 3  # each thread's move, after its plan


async def test_each_job_is_applied_once_with_four_workers(
    db_path: Path, plain: sqlite3.Connection, monkeypatch: pytest.MonkeyPatch
) -> None:
    await record(db_path)
    seen: list[str] = []
    async with stand_in(monkeypatch) as (_, model):
        report = await derive(db_path, model, 4, on_job=lambda job: seen.append(job.id))
    rows = job_rows(plain)
    assert sorted(seen) == sorted(row["id"] for row in rows)  # progress: once per job
    assert {(row["status"], row["attempts"], row["claims"]) for row in rows} <= {
        ("succeeded", 1, 1),
        ("skipped", 1, 1),
    }
    assert report.ran == report.succeeded + report.skipped == len(rows) == 2 * BLOCKS
    assert sorted(report.ready_blocks) == sorted(r["target_id"] for r in rows[:BLOCKS])
    twice = "SELECT source_block_id, title FROM events GROUP BY 1, 2 HAVING COUNT(*) > 1"
    assert plain.execute(twice).fetchall() == []
    cited = "SELECT message_id FROM event_sources GROUP BY event_id, message_id HAVING COUNT(*) > 1"
    assert plain.execute(cited).fetchall() == []


async def test_cancelling_a_pass_gives_back_every_job_in_flight(
    db_path: Path, plain: sqlite3.Connection, monkeypatch: pytest.MonkeyPatch
) -> None:
    await record(db_path)
    async with stand_in(monkeypatch, held=True) as (server, model):
        memory = await StrataGate.open(db_path, CONFIG, model=model)
        run = asyncio.create_task(memory.derivation.process_pending(concurrency=4))
        await until(lambda: server.in_flight == 4)
        run.cancel()
        with pytest.raises(asyncio.CancelledError):
            await run
        states = sorted(
            (r["status"], r["last_error"], r["lease_expires_at"]) for r in job_rows(plain)
        )
        assert states == [("failed", jobs.INTERRUPTED, None)] * 4 + [("pending", None, None)] * 2
        assert server.gate is not None
        server.gate.set()
        report = await memory.derivation.process_pending(concurrency=4)
        await memory.close()
    assert (report.ran, report.failed, len(report.ready_blocks)) == (2 * BLOCKS, 0, BLOCKS)
    assert {row["status"] for row in job_rows(plain)} <= {"succeeded", "skipped"}


async def claim(memory: StrataGate) -> Job | None:
    """A claim as a worker of another pass makes it."""
    moment, lease = utc_now(), timedelta(seconds=60)
    return await memory.db.write(
        lambda raw: jobs.claim_next(
            raw, moment, DERIVATION_JOBS, "other", lease, in_space_order=EXTRACTION_JOB
        )
    )


async def commit(memory: StrataGate, job: Job | None) -> None:
    """Run and commit a claimed job as its claimant would."""
    assert job is not None
    graph = memory.derivation.projector()
    worker = Deriver(memory.storage.derivation, memory.model, graph, owner=job.owner)
    await worker._run(job, DerivationReport())


async def where(memory: StrataGate, job: Job | None) -> tuple[str, str, int] | None:
    if job is None:
        return None
    block = (await memory.blocks.view(job.target_id)).block
    return job.kind, block.thread_id, block.thread_sequence


async def test_an_extraction_is_claimed_after_the_earlier_blocks_of_its_space(
    db_path: Path,
) -> None:
    await record(db_path)
    memory = await StrataGate.open(db_path, CONFIG)
    await commit(memory, await claim(memory))  # garden 1 summarised: its extraction is queued
    garden_2 = await claim(memory)
    assert await where(memory, garden_2) == (SUMMARY_JOB, "garden", 2)
    summaries = [await claim(memory) for _ in range(4)]  # the other threads' summaries
    assert await claim(memory) is None  # garden 1's extraction waits for its next block's summary
    for job in [*summaries, garden_2]:
        await commit(memory, job)
    garden_1 = await claim(memory)
    assert await where(memory, garden_1) == (EXTRACTION_JOB, "garden", 1)
    assert await claim(memory) is None  # later blocks, of any thread, wait for it
    await commit(memory, garden_1)
    garden_2 = await claim(memory)
    assert await where(memory, garden_2) == (EXTRACTION_JOB, "garden", 2)
    assert await claim(memory) is None
    await commit(memory, garden_2)
    assert await where(memory, await claim(memory)) == (EXTRACTION_JOB, "cycling", 1)
    await memory.close()


async def test_a_failing_worker_stops_the_others_and_its_own_error_is_raised() -> None:
    started, stopped = asyncio.Event(), []

    async def holds_a_job() -> None:
        started.set()
        try:
            await asyncio.Event().wait()
        finally:
            stopped.append("gave back")

    async def breaks() -> None:
        await started.wait()
        raise sqlite3.OperationalError("disk I/O error")

    with pytest.raises(sqlite3.OperationalError, match="disk I/O"):  # not an ExceptionGroup
        await run_all([holds_a_job(), breaks()])
    assert stopped == ["gave back"]


@pytest.mark.parametrize("max_jobs", [None, 7])
async def test_a_jobs_end_wakes_one_waiting_worker_and_the_pass_still_ends(
    max_jobs: int | None,
) -> None:
    """A chain of twelve jobs, each due once the one before ended (a space's graph jobs):
    four workers claim about twice a job (the one that ran it, and one waiter), not four
    times; every worker leaves when the chain (or ``max_jobs``) is done."""
    chain, held, claims = list(range(12)), [False], [0]
    run = Pass(max_jobs)

    async def claim() -> Job | None:
        claims[0] += 1
        await asyncio.sleep(0)
        if chain and not held[0]:
            held[0] = True
            return Job.model_construct(id=f"job-{chain[0]}")
        return None

    async def worker() -> None:
        while await run.next_job(claim) is not None:
            await asyncio.sleep(0.001)
            chain.pop(0)
            held[0] = False
            run.job_done()

    await asyncio.wait_for(asyncio.gather(*(worker() for _ in range(4))), timeout=30)
    done = 12 - len(chain)
    assert done == (max_jobs or 12) and run.running == 0
    assert claims[0] <= 2 * done + 8  # and the first and last rounds: a claim a worker


async def test_requests_in_flight_share_one_adaptation_of_the_request_shape(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    arrived, both = [], asyncio.Event()

    async def no_tools() -> Response:
        arrived.append(1)
        if len(arrived) == 2:
            both.set()
        await both.wait()  # both requests were sent with tools before either is rejected
        body = {"error": {"message": "tool_choice is not supported by this server"}}
        return JSONResponse(body, status_code=400)

    async with fake_provider(monkeypatch, KEY_ENV, KEY) as provider:
        config = HttpModelConfig(base_url=provider.base_url, model="m", api_key_env=KEY_ENV)
        provider.push(no_tools, no_tools, _text_reply(json.dumps(SUMMARY)))
        provider.push(_text_reply(json.dumps(SUMMARY)))
        async with HttpModel(config) as model:
            model.use_mode("tools")
            results = await asyncio.gather(*(model.complete(_summary_task()) for _ in range(2)))
    assert [result.title for result in results] == [SUMMARY["title"]] * 2
    assert ["tools" in request.body for request in provider.requests] == [True, True, False, False]


def test_concurrency_is_a_setting_and_a_process_option(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    assert validated({"derive_concurrency": 8})["derive_concurrency"] == 8
    assert validated({"derive_concurrency": 0})["derive_concurrency"] == 4  # the default
    assert "derive_concurrency" in caplog.text and "using the default 4" in caplog.text
    asyncio.run(record(tmp_path / "m.db"))
    assert main(["process", "--db", str(tmp_path / "m.db"), "--concurrency", "3"]) == 0
    assert f"ran {2 * BLOCKS} jobs" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["process", "--concurrency", "0"])
    assert "at least 1" in capsys.readouterr().err
