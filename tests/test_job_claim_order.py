"""A claim takes the first due job in its kind's order without ordering the whole queue
(``jobs.first_due``: each kind's first pending job from ``jobs_pending``, its first retry
due, the first of those). Checked against a plain model of the order over random queues,
and by SQLite's plan: no claim sorts the pending jobs."""

import random
import sqlite3
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import pytest

from stratagate_plugin.core.clock import iso, parse_iso
from stratagate_plugin.core.records import (
    EXTRACTION_JOB,
    GRAPH_JOB,
    MAX_ATTEMPTS,
    SUMMARY_JOB,
    TOPIC_JOB,
    Job,
)
from stratagate_plugin.core.store import graph_jobs, jobs, topic_jobs
from stratagate_plugin.core.store.migrations import migrate
from stratagate_plugin.core.store.search_index import register_functions
from stratagate_plugin.core.store.sqlite.derivation import EXTRACTIONS_FIRST

NOW = parse_iso("2026-03-01T09:00:00+00:00")
LEASE = timedelta(minutes=5)
SPACES = ("home", "work", "club")
pytestmark = pytest.mark.sqlite_only(reason="a claim's statements on a bare SQLite schema")

Row = dict[str, object]


@pytest.fixture
def raw(tmp_path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(tmp_path / "jobs.db", isolation_level=None)
    conn.row_factory = sqlite3.Row
    register_functions(conn)
    migrate(conn)
    return conn


def random_queue(seed: int, kinds: tuple[str, ...], size: int = 60) -> list[Row]:
    """Jobs of ``kinds`` in every state a claim must tell apart, ages drawn so that ties
    happen (same second); graph jobs' priorities too (others' are always 0)."""
    draw = random.Random(seed)
    queue = []
    for n in range(size):
        status = draw.choice(["pending"] * 4 + ["failed", "failed", "running", "succeeded"])
        kind = draw.choice(kinds)
        retry_in = draw.choice([-30, -1, 0, 1, 30])
        queue.append(
            {
                "id": f"job{draw.randrange(10**6):06d}{n:03d}",
                "namespace": draw.choice(SPACES),
                "kind": kind,
                "status": status,
                "attempts": draw.randint(0, MAX_ATTEMPTS) if status == "failed" else 0,
                "next_retry_at": iso(NOW + timedelta(seconds=retry_in))
                if status == "failed" and draw.random() < 0.9
                else None,
                "priority": draw.choice([0, 1, 2, 2000]) if kind == GRAPH_JOB else 0,
                "created_at": iso(NOW - timedelta(seconds=draw.randint(0, 8))),
                "lease_expires_at": iso(NOW + LEASE) if status == "running" else None,
            }
        )
    return queue


def insert(raw: sqlite3.Connection, queue: list[Row]) -> None:
    for job in queue:
        columns = ", ".join(job)
        raw.execute(
            f"INSERT INTO jobs({columns}, target_id, updated_at) "
            f"VALUES ({', '.join('?' * len(job))}, ?, ?)",
            (*job.values(), f"t-{job['id']}", iso(NOW)),
        )


def due(job: Row) -> bool:
    if job["status"] == "pending":
        return True
    retry = job["next_retry_at"]
    return (
        job["status"] == "failed"
        and int(str(job["attempts"])) < MAX_ATTEMPTS
        and retry is not None
        and str(retry) <= iso(NOW)
    )


def graph_key(job: Row) -> tuple[object, ...]:
    return job["status"] == "failed", -int(str(job["priority"])), job["created_at"], job["id"]


def extractions_first(job: Row) -> tuple[object, ...]:
    return job["kind"] != EXTRACTION_JOB, job["created_at"], job["id"]


def oldest(job: Row) -> tuple[object, ...]:
    return job["created_at"], job["id"]


def claimed_in_turn(raw: sqlite3.Connection, kinds: tuple[str, ...], order: str) -> list[str]:
    taken = []
    while (job := jobs.claim_next(raw, NOW, kinds, "me", LEASE, order=order)) is not None:
        taken.append(job.id)
    return taken


CASES: list[tuple[tuple[str, ...], str, Callable[[Row], tuple[object, ...]]]] = [
    ((GRAPH_JOB,), graph_jobs.CLAIM_ORDER, graph_key),
    ((SUMMARY_JOB, EXTRACTION_JOB), EXTRACTIONS_FIRST, extractions_first),
    ((SUMMARY_JOB, EXTRACTION_JOB), "created_at, id", oldest),
]


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize(("kinds", "order", "key"), CASES)
def test_claims_come_in_the_order_of_the_whole_queue(
    raw: sqlite3.Connection,
    seed: int,
    kinds: tuple[str, ...],
    order: str,
    key: Callable[[Row], tuple[object, ...]],
) -> None:
    queue = random_queue(seed, (*kinds, TOPIC_JOB))  # another kind's jobs are never taken
    insert(raw, queue)
    expected = [job["id"] for job in sorted(filter(due, queue), key=key) if job["kind"] in kinds]
    assert expected  # every seed has due jobs of these kinds
    assert claimed_in_turn(raw, kinds, order) == expected


@pytest.mark.parametrize("seed", range(6))
def test_graph_claims_one_a_space_come_in_the_order_of_the_free_spaces_queues(
    raw: sqlite3.Connection, seed: int
) -> None:
    queue = random_queue(seed, (GRAPH_JOB, TOPIC_JOB), 90)
    insert(raw, queue)
    graph = [job for job in queue if job["kind"] == GRAPH_JOB]
    busy = {job["namespace"] for job in graph if job["status"] == "running"}
    expected = []
    for job in sorted(filter(due, graph), key=graph_key):
        if job["namespace"] not in busy:  # taken: its space is busy from now on
            expected.append(job["id"])
            busy.add(job["namespace"])
    taken = []
    while (job := claim_one_a_space(raw)) is not None:
        taken.append(job.id)
    assert taken == expected


def claim_one_a_space(raw: sqlite3.Connection) -> Job | None:
    order = graph_jobs.CLAIM_ORDER
    return jobs.claim_next(raw, NOW, (GRAPH_JOB,), "me", LEASE, order=order, one_per_space=True)


def test_a_graph_claim_skips_the_spaces_with_a_projection_running(
    raw: sqlite3.Connection,
) -> None:
    drawn = random_queue(7, (GRAPH_JOB,))
    queue = [job for job in drawn if job["status"] != "running" or job["namespace"] == "home"]
    insert(raw, queue)
    busy = {job["namespace"] for job in queue if job["status"] == "running"}
    assert busy == {"home"}  # its best due job is not the one taken
    assert min(filter(due, queue), key=graph_key)["namespace"] == "home"
    plans = plans_of(raw, lambda: claim_one_a_space(raw))  # rolled back
    firsts = [plan for sql, plan in plans if "namespace = " in sql and "LIMIT 1" in sql]
    assert len(firsts) == 2  # work's first job, club's: home's queue is not walked
    assert all("jobs_pending_spaces (kind=? AND namespace=?)" in plan for plan in firsts)
    assert all("TEMP B-TREE" not in plan for plan in firsts), plans
    job = jobs.claim_next(
        raw, NOW, (GRAPH_JOB,), "me", LEASE, order=graph_jobs.CLAIM_ORDER, one_per_space=True
    )
    free = [j for j in queue if due(j) and j["namespace"] not in busy]
    assert job is not None and job.id == min(free, key=graph_key)["id"]


def test_a_topic_claim_takes_incremental_batches_first_and_historical_ones_on_budget(
    raw: sqlite3.Connection,
) -> None:
    later = NOW + timedelta(seconds=1)
    historical = topic_jobs.queue_batch(raw, "home", ["e1"], True, NOW)
    incremental = topic_jobs.queue_batch(raw, "work", ["e2"], False, later)
    never = lambda ledger: (False, "{}")  # noqa: E731 - the budget refuses
    first = topic_jobs.claim(raw, NOW, "me", LEASE, never)
    assert first is not None and first.target_id == incremental
    assert topic_jobs.claim(raw, NOW, "me", LEASE, never) is None  # historical waits
    second = topic_jobs.claim(raw, NOW, "me", LEASE, None)  # a free projector: no budget
    assert second is not None and second.target_id == historical


def test_no_claim_sorts_the_pending_queue(raw: sqlite3.Connection) -> None:
    insert(raw, random_queue(8, (GRAPH_JOB, SUMMARY_JOB, EXTRACTION_JOB, TOPIC_JOB), 400))
    topic_jobs.queue_batch(raw, "home", ["e1"], False, NOW)
    claims = [
        lambda: jobs.claim_next(raw, NOW, (GRAPH_JOB,), "me", LEASE, order=graph_jobs.CLAIM_ORDER),
        lambda: jobs.claim_next(
            raw, NOW, (SUMMARY_JOB, EXTRACTION_JOB), "me", LEASE, order=EXTRACTIONS_FIRST
        ),
        lambda: topic_jobs.claim(raw, NOW, "me", LEASE, None),
    ]
    for claim in claims:
        plans = plans_of(raw, claim)
        pending = [plan for sql, plan in plans if "status = 'pending'" in sql]
        assert pending and all("USING INDEX jobs_pending" in plan for plan in pending), plans
        assert all("USING INDEX" in plan for plan in pending), plans  # no walk of the table
        assert all("TEMP B-TREE" not in plan for plan in pending), plans


def test_the_topics_page_reads_a_page_of_unfinished_jobs_in_order(
    raw: sqlite3.Connection,
) -> None:
    batches = [  # queued in this order: a job's age is when it was queued
        topic_jobs.queue_batch(raw, space, [f"e{n}a", f"e{n}b"], False, NOW)
        for n, space in enumerate(["home", "work", "home", "home", "home"])
    ]
    raw.execute("UPDATE jobs SET status = 'succeeded' WHERE target_id = ?", (batches[4],))
    raw.execute("UPDATE jobs SET status = 'failed' WHERE target_id = ?", (batches[2],))
    page = topic_jobs.topic_jobs(raw, "home", 2)
    assert [(job.target_id, job.status, ids) for job, ids in page] == [
        (batches[0], "pending", ["e0a", "e0b"]),  # the oldest unfinished first
        (batches[2], "failed", ["e2a", "e2b"]),
    ]
    plans = plans_of(raw, lambda: topic_jobs.topic_jobs(raw, "home", 2))
    [(_, jobs_plan)] = [(sql, plan) for sql, plan in plans if "FROM jobs" in sql]
    assert "jobs_unfinished" in jobs_plan and "TEMP B-TREE" not in jobs_plan


def plans_of(raw: sqlite3.Connection, claim: Callable[[], object]) -> list[tuple[str, str]]:
    """Each SELECT the claim ran with SQLite's plan for it (parameters bound as text)."""
    said: list[str] = []
    raw.execute("SAVEPOINT plan")
    raw.set_trace_callback(said.append)
    claim()
    raw.set_trace_callback(None)
    raw.execute("ROLLBACK TO plan")
    raw.execute("RELEASE plan")
    selects = [sql for sql in said if sql.lstrip().startswith("SELECT")]
    return [(sql, plan(raw, sql)) for sql in selects]


def plan(raw: sqlite3.Connection, sql: str) -> str:
    rows = raw.execute(f"EXPLAIN QUERY PLAN {sql}").fetchall()
    return "\n".join(str(row["detail"]) for row in rows)
