"""Persisted derivation jobs: claim under a lease, renew it, finish, fail with backoff.

``pending → running → succeeded | skipped | failed``; at most three attempts with
``next_retry_at = now + 1 s · 2^(attempts−1)``. A claim leases the job to one worker
(``owner``) until ``lease_expires_at`` and the worker renews the lease while it works, so
only a job whose lease ran out (its worker died or stalled) is taken back: it becomes
failed, retryable at once while attempts remain. Every write of a result first checks the
claim (``holds``): a worker whose job was taken back applies nothing.

Several workers may claim at once; a kind claimed *in space order* (event extraction, whose
timeline and commit-time checks read the space's earlier events) waits for the space's
earlier blocks, so what it derives does not depend on which worker was faster.
"""

import re
import sqlite3
from collections.abc import Iterable
from datetime import datetime, timedelta

from ..clock import iso
from ..errors import InvalidInput, NotFound
from ..records import MAX_ATTEMPTS, SUMMARY_JOB, Job
from .postgres.job_claims import HOLDS_TO_COMMIT, SKIP_LOCKED
from .rows import job_from_row
from .units import alone, on_postgres

INTERRUPTED = "interrupted before completion"
_HELD = "id = ? AND status = 'running' AND owner = ? AND claims = ?"
_RETRY_DUE = (
    "status = 'failed' AND attempts < ? AND next_retry_at IS NOT NULL AND next_retry_at <= ?"
)
_DUE = f"(status = 'pending' OR ({_RETRY_DUE}))"
BY_PRIORITY = "priority DESC, created_at, id"
"""Claim order of queued work of one kind (``jobs_pending`` is in this order)."""
_EXPIRED = "status = 'running' AND (lease_expires_at IS NULL OR lease_expires_at <= ?)"
_CLAIMABLE = f"({_DUE} OR ({_EXPIRED} AND attempts < ?))"
_JOB_COLUMNS = re.compile(r"\b(?:status|attempts|next_retry_at|lease_expires_at)\b")
_INTERRUPT = (
    "UPDATE jobs SET status = 'failed', last_error = ?, lease_expires_at = NULL, "
    "updated_at = ?, next_retry_at = CASE WHEN attempts < ? THEN ? ELSE NULL END WHERE "
)
_UNFINISHED = (  # a job that failed for itself holds nothing back; one interrupted runs again
    "(other.status IN ('pending', 'running') OR (other.status = 'failed' AND other.attempts < ? "
    "AND other.last_error = ?))"
)
_WAITING = (  # from the space's unfinished jobs (few), those of earlier blocks or the next
    "EXISTS (SELECT 1 FROM blocks mine JOIN jobs other ON other.namespace = mine.namespace "
    "AND other.status IN ('pending', 'running', 'failed') AND other.kind IN ({marks}) "
    "JOIN blocks prior ON prior.id = other.target_id "
    "WHERE mine.id = due.target_id AND other.id != due.id AND "
    "(prior.sequence < mine.sequence OR (other.kind = ? AND prior.thread_id = mine.thread_id "
    "AND prior.thread_sequence BETWEEN mine.thread_sequence AND mine.thread_sequence + 1)) "
    f"AND {_UNFINISHED})"
)
ONE_PER_SPACE = "one job a space"
_RETRY = (
    "UPDATE jobs SET status = 'pending', attempts = 0, next_retry_at = NULL, updated_at = ? "
    "WHERE status = 'failed'"
)


def backoff(attempts: int, unit_s: float = 1.0) -> timedelta:
    return timedelta(seconds=unit_s * 2 ** max(0, attempts - 1))


def claim_next(
    raw: sqlite3.Connection,
    now: datetime,
    kinds: tuple[str, ...],
    owner: str,
    lease: timedelta,
    in_space_order: str | None = None,
    order: str = "created_at, id",
    one_per_space: bool = False,
) -> Job | None:
    """Lease the first due job in ``order`` (default: the oldest) to ``owner`` (one more
    attempt), expired leases taken back first.

    A job of kind ``in_space_order`` is due only once no job of an earlier block of its
    space (by the space's block sequence, any thread) is unfinished (pending, running, or
    interrupted with attempts left), nor the summary of its thread's next block: so it runs
    after its predecessors committed and sees its neighbour's key points, as it would with
    one worker, however many claim at once and in whatever order their answers come. Its
    timeline (the space's recent events), restatements and supersede links are then the
    same on every run; other spaces and summaries still run side by side. A job
    that failed (the model's or the block's fault) holds nothing back: its retry may fail
    again, and the thread's later blocks would wait for all its attempts (issue 24).

    With ``one_per_space`` a job is due only while no job of these kinds runs in its space
    (the claims made alone, ``ONE_PER_SPACE``; the busy spaces read first, a few running
    rows): a graph projection reads the nodes the space's earlier projections made, so two
    side by side each missed the other's (a dog adopted by "Ana" was lost when Ana's node
    was not yet there, 57 runs in 60).
    """
    if one_per_space:
        alone(raw, ONE_PER_SPACE)
    recover_expired(raw, now)
    busy = running_spaces(raw, kinds) if one_per_space else []
    found = first_due(raw, now, kinds, order, in_space_order=in_space_order, leave_out=busy)
    return None if found is None else lease_job(raw, found, owner, lease, now)


def first_due(
    raw: sqlite3.Connection,
    now: datetime,
    kinds: tuple[str, ...],
    order: str,
    *,
    in_space_order: str | None = None,
    leave_out: list[str] | None = None,
) -> str | None:
    """The id of the first due job of ``kinds`` in ``order``, of no space in ``leave_out``
    (locked on PostgreSQL, others' locked rows skipped).

    Of each kind, the first pending job (read in ``BY_PRIORITY`` order from
    ``jobs_pending``; with spaces left out, each other space's first from
    ``jobs_pending_spaces``, since walking past a busy space's queue cost 1.7 ms a claim
    that found nothing) and the first failed one due for a retry (few) are read, and the
    first of those in ``order`` is taken, so ``order`` must agree with ``BY_PRIORITY``
    within a kind. No claim orders the whole queue: that cost 11 ms in the write lock with
    20,000 back-fill jobs queued."""
    marks = ",".join("?" * len(kinds))
    where, params = "", []  # the in-space-order condition and its parameters
    if in_space_order is not None:
        where += f" AND (kind != ? OR NOT {_WAITING.format(marks=marks)})"
        params += [in_space_order, *kinds, SUMMARY_JOB, MAX_ATTEMPTS, INTERRUPTED]
    lock = SKIP_LOCKED if on_postgres(raw) else ""  # a claimant per job across processes

    def first(kind: str, status: str, *values: object) -> str | None:
        sql = f"SELECT id FROM jobs AS due WHERE kind = ? AND {status}{where} "
        row = raw.execute(f"{sql}ORDER BY {BY_PRIORITY} LIMIT 1{lock}", [kind, *values, *params])
        found = row.fetchone()
        return None if found is None else str(found[0])

    pending, out = "status = 'pending'", leave_out or []
    retry = _RETRY_DUE + (f" AND namespace NOT IN ({','.join('?' * len(out))})" if out else "")
    found: list[str | None] = []
    for kind in kinds:
        if out:
            spaces = pending_spaces(raw, kind, out)
            found += [first(kind, f"{pending} AND namespace = ?", name) for name in spaces]
        else:
            found.append(first(kind, pending))
        found.append(first(kind, retry, MAX_ATTEMPTS, iso(now), *out))
    ids = [job_id for job_id in found if job_id is not None]
    if len(ids) < 2:
        return ids[0] if ids else None
    both = f"SELECT id FROM jobs AS due WHERE id IN ({','.join('?' * len(ids))}) "
    return str(raw.execute(f"{both}ORDER BY {order} LIMIT 1", ids).fetchone()[0])


def pending_spaces(raw: sqlite3.Connection, kind: str, leave_out: list[str]) -> list[str]:
    """The spaces with a pending job of ``kind``, but those in ``leave_out``: one seek of
    ``jobs_pending_spaces`` a space holding any."""
    spaces: list[str] = []
    sql = "SELECT namespace FROM jobs WHERE kind = ? AND status = 'pending'"
    row = raw.execute(f"{sql} ORDER BY namespace LIMIT 1", (kind,)).fetchone()
    while row is not None:
        spaces += [] if row[0] in leave_out else [str(row[0])]
        after = f"{sql} AND namespace > ? ORDER BY namespace LIMIT 1"
        row = raw.execute(after, (kind, row[0])).fetchone()
    return spaces


def running_spaces(raw: sqlite3.Connection, kinds: tuple[str, ...]) -> list[str]:
    """The spaces with a job of ``kinds`` running (a few rows of ``jobs_due``)."""
    marks = ",".join("?" * len(kinds))
    sql = f"SELECT DISTINCT namespace FROM jobs WHERE status = 'running' AND kind IN ({marks})"
    return [row[0] for row in raw.execute(sql, kinds)]


def lease_job(
    raw: sqlite3.Connection, job_id: str, owner: str, lease: timedelta, now: datetime
) -> Job:
    """Hand a due job to ``owner`` until ``now + lease``: one more attempt, one more claim."""
    raw.execute(
        "UPDATE jobs SET status = 'running', attempts = attempts + 1, claims = claims + 1, "
        "owner = ?, lease_expires_at = ?, updated_at = ? WHERE id = ?",
        (owner, iso(now + lease), iso(now), job_id),
    )
    return get_job(raw, job_id)


def due_clause(alias: str) -> str:
    """The SQL condition of a job row ``alias`` that may be claimed (params: attempts cap, now)."""
    return _aliased(_DUE, alias)


def claimable_clause(alias: str) -> str:
    """``due_clause``, or running under a lease that ran out with attempts left: what a
    claim would take, expired leases counted as taken back (params: attempts cap, now,
    now, attempts cap)."""
    return _aliased(_CLAIMABLE, alias)


def _aliased(condition: str, alias: str) -> str:
    return _JOB_COLUMNS.sub(lambda found: f"{alias}.{found.group(0)}", condition)


def holds(raw: sqlite3.Connection, job: Job) -> bool:
    """Is ``job`` still running under the claim it was handed out with (same owner, same
    claim)? Asked first in a job's commit; on PostgreSQL the job's row stays locked to that
    commit (``HOLDS_TO_COMMIT``), so a purge taking the claim back waits for it or makes it
    fail, never lets it write what it read before the purge (SQLite: one writer)."""
    lock = HOLDS_TO_COMMIT if on_postgres(raw) else ""
    row = raw.execute(f"SELECT 1 FROM jobs WHERE {_HELD}{lock}", _claim(job)).fetchone()
    return row is not None


def renew(raw: sqlite3.Connection, job: Job, until: datetime) -> bool:
    """Extend the lease of a job still held; False once it was taken back."""
    cursor = raw.execute(
        f"UPDATE jobs SET lease_expires_at = ? WHERE {_HELD}", (iso(until), *_claim(job))
    )
    return cursor.rowcount == 1


def _claim(job: Job) -> tuple[str, str | None, int]:
    return job.id, job.owner, job.claims


def get_job(raw: sqlite3.Connection, job_id: str) -> Job:
    row = raw.execute("SELECT * FROM jobs WHERE id = ?", (job_id,)).fetchone()
    if row is None:
        raise NotFound(f"no job with id {job_id!r}")
    return job_from_row(row)


def finish(
    raw: sqlite3.Connection, job_id: str, status: str, now: datetime, detail: str = ""
) -> None:
    """Close a job the caller checked it ``holds`` in the same transaction."""
    raw.execute(
        "UPDATE jobs SET status = ?, last_error = NULL, next_retry_at = NULL, detail = ?, "
        "lease_expires_at = NULL, updated_at = ? WHERE id = ?",
        (status, detail or None, iso(now), job_id),
    )


def fail(
    raw: sqlite3.Connection, job: Job, error: str, now: datetime, backoff_unit_s: float = 1.0
) -> Job | None:
    """Record a failed attempt of a job still held and schedule the next one unless attempts
    are used up (after ``backoff_unit_s · 2^(attempts−1)``); ``None`` (nothing written) when
    the job was taken back."""
    if not holds(raw, job):
        return None
    retry_at = (
        iso(now + backoff(job.attempts, backoff_unit_s)) if job.attempts < MAX_ATTEMPTS else None
    )
    raw.execute(
        "UPDATE jobs SET status = 'failed', last_error = ?, next_retry_at = ?, "
        "lease_expires_at = NULL, updated_at = ? WHERE id = ?",
        (error[:1000], retry_at, iso(now), job.id),
    )
    return get_job(raw, job.id)


def interrupt(raw: sqlite3.Connection, job: Job, now: datetime) -> bool:
    """Give back a job still held whose worker was stopped: failed, retryable at once."""
    cursor = raw.execute(
        _INTERRUPT + _HELD, (INTERRUPTED, iso(now), MAX_ATTEMPTS, iso(now), *_claim(job))
    )
    return cursor.rowcount == 1


def any_expired(raw: sqlite3.Connection, now: datetime) -> bool:
    """Whether ``recover_expired`` has anything to do (asked without a write lock, so an
    open does not queue behind another process's long write)."""
    row = raw.execute(f"SELECT 1 FROM jobs WHERE {_EXPIRED} LIMIT 1", (iso(now),)).fetchone()
    return row is not None


def lease_holders(raw: sqlite3.Connection) -> set[str]:
    """The owners of running jobs (whose processes may have died before their lease ends)."""
    rows = raw.execute("SELECT DISTINCT owner FROM jobs WHERE status = 'running'")
    return {row[0] for row in rows if row[0]}


def release_owners(raw: sqlite3.Connection, owners: Iterable[str], now: datetime) -> int:
    """The running jobs of ``owners`` (known dead) taken back as ``recover_expired`` does."""
    count = 0
    for owner in owners:
        count += raw.execute(
            _INTERRUPT + "status = 'running' AND owner = ?",
            (INTERRUPTED, iso(now), MAX_ATTEMPTS, iso(now), owner),
        ).rowcount
    return count


def recover_expired(raw: sqlite3.Connection, now: datetime) -> int:
    """Running jobs whose lease ran out (a dead or stalled worker) become failed, retryable
    now if attempts remain; a live worker's job is never touched."""
    cursor = raw.execute(
        _INTERRUPT + _EXPIRED, (INTERRUPTED, iso(now), MAX_ATTEMPTS, iso(now), iso(now))
    )
    return cursor.rowcount


def retry(raw: sqlite3.Connection, job_id: str, now: datetime) -> Job:
    """A manual retry: only failed jobs; attempts start again from zero."""
    job = get_job(raw, job_id)
    if job.status != "failed":
        raise InvalidInput(f"job {job_id} is {job.status}; only failed jobs can be retried")
    raw.execute(_RETRY + " AND id = ?", (iso(now), job_id))
    return get_job(raw, job_id)


def requeue_block(raw: sqlite3.Connection, block_id: str, now: datetime) -> None:
    """A purge changed the block's words: its summary job runs again from zero attempts, and
    a job running on the old words loses its claim (``holds`` fails, nothing is applied).
    A finished extraction stays finished, so no event is formed from the block twice."""
    raw.execute(
        "UPDATE jobs SET status = 'pending', attempts = 0, next_retry_at = NULL, "
        "last_error = NULL, owner = NULL, lease_expires_at = NULL, updated_at = ? "
        "WHERE target_id = ? AND (kind = ? OR status = 'running')",
        (iso(now), block_id, SUMMARY_JOB),
    )


def retry_failed(raw: sqlite3.Connection, now: datetime) -> int:
    """Every failed job queued again, attempts from zero; how many there were."""
    return raw.execute(_RETRY, (iso(now),)).rowcount


def due_counts(raw: sqlite3.Connection, now: datetime, kinds: tuple[str, ...]) -> dict[str, int]:
    """Jobs a worker could claim now, by kind (expired leases counted as taken back)."""
    marks = ",".join("?" * len(kinds))
    rows = raw.execute(
        f"SELECT kind, COUNT(*) FROM jobs WHERE kind IN ({marks}) AND {_CLAIMABLE} GROUP BY kind",
        (*kinds, MAX_ATTEMPTS, iso(now), iso(now), MAX_ATTEMPTS),
    ).fetchall()
    return {kind: count for kind, count in rows}


def list_jobs(
    raw: sqlite3.Connection, space: str | None = None, status: str | None = None
) -> list[Job]:
    clauses, params = [], []
    if space:
        clauses.append("namespace = ?")
        params.append(space)
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
