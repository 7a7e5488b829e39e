"""Persisted derivation jobs: claim, finish, fail with backoff, recover after a crash.

``pending → running → succeeded | skipped | failed``; at most three attempts with
``next_retry_at = now + 1 s · 2^(attempts−1)``; a job found ``running`` when the file is
opened was interrupted and becomes failed (retryable at once while attempts remain).
"""

import sqlite3
from datetime import datetime, timedelta

from ..clock import iso
from ..errors import InvalidInput, NotFound
from ..records import Job
from .rows import job_from_row

MAX_ATTEMPTS = 3
INTERRUPTED = "interrupted before completion"


def backoff(attempts: int) -> timedelta:
    return timedelta(seconds=2 ** max(0, attempts - 1))


def claim_next(raw: sqlite3.Connection, now: datetime, kinds: tuple[str, ...]) -> Job | None:
    """Mark the oldest due job running (one more attempt) and return it."""
    marks = ",".join("?" * len(kinds))
    row = raw.execute(
        f"SELECT * FROM jobs WHERE kind IN ({marks}) AND (status = 'pending' OR "
        "(status = 'failed' AND attempts < ? AND next_retry_at IS NOT NULL "
        "AND next_retry_at <= ?)) ORDER BY created_at, id LIMIT 1",
        (*kinds, MAX_ATTEMPTS, iso(now)),
    ).fetchone()
    if row is None:
        return None
    raw.execute(
        "UPDATE jobs SET status = 'running', attempts = attempts + 1, updated_at = ? WHERE id = ?",
        (iso(now), row["id"]),
    )
    return get_job(raw, row["id"])


def get_job(raw: sqlite3.Connection, job_id: str) -> Job:
    row = raw.execute("SELECT * FROM jobs WHERE id = ?", (job_id,)).fetchone()
    if row is None:
        raise NotFound(f"no job with id {job_id!r}")
    return job_from_row(row)


def finish(
    raw: sqlite3.Connection, job_id: str, status: str, now: datetime, detail: str = ""
) -> None:
    raw.execute(
        "UPDATE jobs SET status = ?, last_error = NULL, next_retry_at = NULL, detail = ?, "
        "updated_at = ? WHERE id = ?",
        (status, detail or None, iso(now), job_id),
    )


def fail(raw: sqlite3.Connection, job_id: str, error: str, now: datetime) -> Job:
    """Record a failed attempt; schedule the next one unless attempts are used up."""
    job = get_job(raw, job_id)
    retry_at = iso(now + backoff(job.attempts)) if job.attempts < MAX_ATTEMPTS else None
    raw.execute(
        "UPDATE jobs SET status = 'failed', last_error = ?, next_retry_at = ?, updated_at = ? "
        "WHERE id = ?",
        (error[:1000], retry_at, iso(now), job_id),
    )
    return get_job(raw, job_id)


def recover_interrupted(raw: sqlite3.Connection, now: datetime) -> int:
    """Jobs left running by a dead process become failed; retryable now if attempts remain."""
    cursor = raw.execute(
        "UPDATE jobs SET status = 'failed', last_error = ?, updated_at = ?, "
        "next_retry_at = CASE WHEN attempts < ? THEN ? ELSE NULL END WHERE status = 'running'",
        (INTERRUPTED, iso(now), MAX_ATTEMPTS, iso(now)),
    )
    return cursor.rowcount


def retry(raw: sqlite3.Connection, job_id: str, now: datetime) -> Job:
    """A manual retry: only failed jobs; attempts start again from zero."""
    job = get_job(raw, job_id)
    if job.status != "failed":
        raise InvalidInput(f"job {job_id} is {job.status}; only failed jobs can be retried")
    raw.execute(
        "UPDATE jobs SET status = 'pending', attempts = 0, next_retry_at = NULL, updated_at = ? "
        "WHERE id = ?",
        (iso(now), job_id),
    )
    return get_job(raw, job_id)


def list_jobs(
    raw: sqlite3.Connection, namespace: str | None = None, status: str | None = None
) -> list[Job]:
    clauses, params = [], []
    if namespace:
        clauses.append("namespace = ?")
        params.append(namespace)
    if status:
        clauses.append("status = ?")
        params.append(status)
    where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
    rows = raw.execute(f"SELECT * FROM jobs {where} ORDER BY created_at, id", params).fetchall()
    return [job_from_row(row) for row in rows]


def next_due_at(raw: sqlite3.Connection) -> str | None:
    """When the earliest retryable job becomes due (for a background worker's timer)."""
    row = raw.execute(
        "SELECT MIN(next_retry_at) FROM jobs WHERE status = 'failed' AND attempts < ?",
        (MAX_ATTEMPTS,),
    ).fetchone()
    return None if row is None else row[0]
