"""Manual retries of failed jobs, one rule per kind wherever they are asked for.

A derivation (or graph) job is reset in place: attempts from zero, due now (``jobs``). A
topic batch is queued again as a fresh job under the historical budget
(``topic_jobs.requeue``, spec §5.3) — the same whether the topics page, the jobs page,
one job's retry button or ``stratagate jobs retry`` asks.
"""

import sqlite3
from datetime import datetime

from ..errors import InvalidInput
from ..records import Job
from . import jobs, topic_jobs


def retry(raw: sqlite3.Connection, job_id: str, now: datetime) -> Job:
    """One failed job retried by its kind's rule; a job not failed is refused."""
    job = jobs.get_job(raw, job_id)
    if job.kind != topic_jobs.TOPIC_JOB:
        return jobs.retry(raw, job_id, now)
    if job.status != "failed":
        raise InvalidInput(f"job {job_id} is {job.status}; only failed jobs can be retried")
    return topic_jobs.requeue(raw, job, now)


def retry_failed(raw: sqlite3.Connection, now: datetime, namespace: str | None = None) -> int:
    """Every failed job (of ``namespace``, or of every space) retried by its kind's rule;
    how many."""
    sql, params = "SELECT id FROM jobs WHERE status = 'failed'", []
    if namespace is not None:
        sql, params = f"{sql} AND namespace = ?", [namespace]
    ids = [row[0] for row in raw.execute(f"{sql} ORDER BY created_at, id", params).fetchall()]
    for job_id in ids:
        retry(raw, job_id, now)
    return len(ids)
