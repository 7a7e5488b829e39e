"""Topic projection jobs (spec §5.3): batches of queued events, claimed one per space.

A batch is a job's target: its events wait in ``topic_queue`` until the batch commits.
A claim takes new/changed (incremental) batches first; a historical one only when the
database-wide budget grants it a slot, reserved in the claim's transaction. At most one
topic job of a space runs at a time. Each space's bootstrap (the visible events frozen as
the historical set) is recorded once per projector version in ``topic_state``.
"""

import json
import sqlite3
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta

from ..clock import iso
from ..ids import new_id
from ..records import MAX_ATTEMPTS, TOPIC_JOB, Job
from ..topics.budget import LEDGER_KEY
from ..topics.model import PROJECTOR_VERSION
from . import jobs
from .rows import job_from_row
from .sealing import enqueue_job
from .units import alone

CLAIMING = "topic claim"
INCREMENTAL = 1  # a job's priority: incremental batches before historical ones (0)
QUEUEING = "topic queue"  # syncs, bootstraps, retries (then REFILING, never before)
_UNPLACED = (  # topic_spare rows no agent chapter holds: visible events in no chapter
    "FROM topic_spare s JOIN events e ON e.pk = s.event_pk WHERE s.namespace = ? AND "
    "s.agent_chapter = 0 AND NOT EXISTS (SELECT 1 FROM topic_queue q WHERE q.event_id = e.id)"
)


def state_version(raw: sqlite3.Connection, space: str) -> int | None:
    row = raw.execute(
        "SELECT projector_version FROM topic_state WHERE namespace = ?", (space,)
    ).fetchone()
    return None if row is None else int(row[0])


def spaces_to_bootstrap(raw: sqlite3.Connection) -> list[str]:
    """Spaces not yet bootstrapped under the current projector version."""
    rows = raw.execute(
        "SELECT n.namespace FROM namespaces n LEFT JOIN topic_state s ON s.namespace = "
        "n.namespace WHERE s.projector_version IS NULL OR s.projector_version != ? "
        "ORDER BY n.namespace",
        (PROJECTOR_VERSION,),
    )
    return [row[0] for row in rows]


def record_state(raw: sqlite3.Connection, space: str, frozen: int, now: datetime) -> None:
    raw.execute(
        "INSERT INTO topic_state(namespace, projector_version, frozen_events, created_at) "
        "VALUES (?, ?, ?, ?) ON CONFLICT(namespace) DO UPDATE SET projector_version = "
        "excluded.projector_version, frozen_events = excluded.frozen_events",
        (space, PROJECTOR_VERSION, frozen, iso(now)),
    )


def retire_old_generation(raw: sqlite3.Connection, space: str) -> None:
    """Chapters of another projector version are retired with their queue."""
    old = raw.execute(
        "SELECT id FROM topics WHERE namespace = ? AND projector_version != ?",
        (space, PROJECTOR_VERSION),
    ).fetchall()
    for (topic_id,) in old:
        raw.execute("DELETE FROM topic_members WHERE topic_id = ?", (topic_id,))
        raw.execute("DELETE FROM topics WHERE id = ?", (topic_id,))


def unplaced_rows(raw: sqlite3.Connection, space: str) -> list[sqlite3.Row]:
    """Visible events in no chapter and no batch, in the order of the turns they were
    formed at (table order within a turn): workers deriving blocks at once insert in
    whatever order they finish, and batches in that order made chapters differ by run."""
    return raw.execute(
        f"SELECT e.* {_UNPLACED} ORDER BY e.formed_turn, s.event_pk", (space,)
    ).fetchall()


def unqueued_members(raw: sqlite3.Connection, topic_id: str) -> list[tuple[str, bool]]:
    """A pending chapter's members waiting for no batch: (event id, changed?)."""
    rows = raw.execute(
        "SELECT m.event_id, m.fingerprint IS NULL FROM topic_members m WHERE m.topic_id = ? "
        "AND NOT EXISTS (SELECT 1 FROM topic_queue q WHERE q.event_id = m.event_id) "
        "ORDER BY m.position",
        (topic_id,),
    )
    return [(row[0], bool(row[1])) for row in rows]


def queue_batch(
    raw: sqlite3.Connection,
    space: str,
    event_ids: Sequence[str],
    historical: bool,
    now: datetime,
    topic_id: str | None = None,
) -> str:
    """A batch of ``event_ids`` with its projection job; the batch id."""
    batch_id = new_id("tbatch")
    raw.execute(
        "INSERT INTO topic_batches(id, namespace, historical, topic_id, created_at) "
        "VALUES (?, ?, ?, ?, ?)",
        (batch_id, space, int(historical), topic_id, iso(now)),
    )
    raw.executemany(
        "INSERT INTO topic_queue(event_id, namespace, batch_id, position) VALUES (?, ?, ?, ?)",
        [(event_id, space, batch_id, i) for i, event_id in enumerate(event_ids)],
    )
    enqueue_job(raw, space, TOPIC_JOB, batch_id, 0 if historical else INCREMENTAL)
    return batch_id


def batch_of(raw: sqlite3.Connection, batch_id: str) -> tuple[bool, str | None, list[str]]:
    """(historical?, the chapter it rebuilds, its queued event ids in order)."""
    row = raw.execute(
        "SELECT historical, topic_id FROM topic_batches WHERE id = ?", (batch_id,)
    ).fetchone()
    ids = raw.execute(
        "SELECT event_id FROM topic_queue WHERE batch_id = ? ORDER BY position", (batch_id,)
    )
    return bool(row[0]), row[1], [r[0] for r in ids]


def close_batch(raw: sqlite3.Connection, batch_id: str) -> None:
    raw.execute("DELETE FROM topic_queue WHERE batch_id = ?", (batch_id,))


def claim(
    raw: sqlite3.Connection,
    now: datetime,
    owner: str,
    lease: timedelta,
    reserve: Callable[[str | None], tuple[bool, str]] | None,
) -> Job | None:
    """The next due topic job of a space with none running: incremental first; a
    historical one only when ``reserve(ledger)`` grants it (the ledger stored either way).
    ``reserve`` is ``None`` for a free projector: no budget, no ledger written. Alone
    (``CLAIMING``, the database's: it reads every space's running job and the one ledger),
    so two claims never start two jobs of a space."""
    alone(raw, CLAIMING)
    jobs.recover_expired(raw, now)
    busy = jobs.running_spaces(raw, (TOPIC_JOB,))
    job_id = jobs.first_due(raw, now, (TOPIC_JOB,), jobs.BY_PRIORITY, leave_out=busy)
    if job_id is None:
        return None
    if _historical(raw, job_id) and reserve is not None:
        granted, ledger = reserve(ledger_of(raw))
        raw.execute(
            "INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET "
            "value = excluded.value",
            (LEDGER_KEY, ledger),
        )
        if not granted:
            return None
    return jobs.lease_job(raw, job_id, owner, lease, now)


def _historical(raw: sqlite3.Connection, job_id: str) -> bool:
    row = raw.execute(
        "SELECT b.historical FROM jobs j JOIN topic_batches b ON b.id = j.target_id WHERE j.id = ?",
        (job_id,),
    ).fetchone()
    return row is not None and bool(row[0])


def due_now(raw: sqlite3.Connection, now: datetime) -> tuple[int, int]:
    """Topic jobs a claim could take at ``now`` (a lease run out counts as taken back):
    how many incremental, how many historical (those wait on the budget)."""
    rows = raw.execute(
        "SELECT b.historical, COUNT(*) FROM jobs j JOIN topic_batches b ON b.id = j.target_id "
        f"WHERE j.kind = ? AND {jobs.claimable_clause('j')} GROUP BY b.historical",
        (TOPIC_JOB, MAX_ATTEMPTS, iso(now), iso(now), MAX_ATTEMPTS),
    ).fetchall()
    counts = {bool(historical): int(count) for historical, count in rows}
    return counts.get(False, 0), counts.get(True, 0)


def ledger_of(raw: sqlite3.Connection) -> str | None:
    """The historical budget's ledger as stored (``None``: never used)."""
    row = raw.execute("SELECT value FROM meta WHERE key = ?", (LEDGER_KEY,)).fetchone()
    return None if row is None else str(row[0])


def historical_waiting(raw: sqlite3.Connection, space: str | None = None) -> int:
    """Historical batches not yet run (pending, or failed with a retry to come) of the
    space, or of every space (``None``)."""
    row = raw.execute(
        "SELECT COUNT(*) FROM jobs j JOIN topic_batches b ON b.id = j.target_id WHERE "
        "j.kind = ? AND (? IS NULL OR j.namespace = ?) AND b.historical = 1 AND "
        "(j.status = 'pending' OR (j.status = 'failed' AND j.next_retry_at IS NOT NULL))",
        (TOPIC_JOB, space, space),
    ).fetchone()
    return int(row[0])


def topic_jobs(
    raw: sqlite3.Connection, space: str, limit: int | None = None
) -> list[tuple[Job, list[str]]]:
    """The space's unfinished topic jobs (pending, running, failed) with their events, the
    oldest first; at most ``limit`` (``None``: all)."""
    rows = raw.execute(
        "SELECT * FROM jobs WHERE kind = ? AND namespace = ? AND status IN "
        "('pending', 'running', 'failed') ORDER BY created_at, id LIMIT ?",
        (TOPIC_JOB, space, -1 if limit is None else limit),
    ).fetchall()
    queued = queued_events(raw, [row["target_id"] for row in rows])
    return [(job_from_row(row), queued[row["target_id"]]) for row in rows]


def queued_events(raw: sqlite3.Connection, batch_ids: Sequence[str]) -> dict[str, list[str]]:
    """Each batch's queued event ids in order, a page of batches in one read (a page of
    20 jobs read them in 40 statements)."""
    found: dict[str, list[str]] = {batch_id: [] for batch_id in batch_ids}
    if not found:
        return found
    rows = raw.execute(
        "SELECT batch_id, event_id FROM topic_queue WHERE batch_id IN "
        "(SELECT value FROM json_each(?)) ORDER BY batch_id, position",
        (json.dumps(list(found)),),
    )
    for batch_id, event_id in rows:
        found[batch_id].append(event_id)
    return found


def topic_job_counts(raw: sqlite3.Connection, space: str) -> dict[str, int]:
    """How many of the space's unfinished topic jobs are in each state."""
    rows = raw.execute(
        "SELECT status, count(*) FROM jobs WHERE kind = ? AND namespace = ? AND status IN "
        "('pending', 'running', 'failed') GROUP BY status",
        (TOPIC_JOB, space),
    )
    return {str(status): int(n) for status, n in rows}


def retry_failed(raw: sqlite3.Connection, space: str, now: datetime) -> int:
    """Each exhausted batch of the space queued again as a fresh job (``requeue``); how
    many batches. Alone in the topic queue (``QUEUEING``): two retries would queue each
    batch twice."""
    alone(raw, QUEUEING)
    rows = raw.execute(
        "SELECT j.id FROM jobs j WHERE j.kind = ? AND j.namespace = ? AND "
        "j.status = 'failed' AND (j.attempts >= ? OR j.next_retry_at IS NULL)",
        (TOPIC_JOB, space, MAX_ATTEMPTS),
    ).fetchall()
    for (job_id,) in rows:
        requeue(raw, jobs.get_job(raw, job_id), now)
    return len(rows)


def requeue(raw: sqlite3.Connection, job: Job, now: datetime) -> Job:
    """The one manual-retry rule for a topic batch (§5.3), wherever it is asked for (the
    topics page, the jobs page, the CLI): its events queued again as a fresh batch and job
    (a new id, attempts from zero, a historical batch still within the budget at its
    claim); the old job is closed as retried. The fresh job."""
    historical, topic_id, event_ids = batch_of(raw, job.target_id)
    close_batch(raw, job.target_id)
    fresh = queue_batch(raw, job.namespace, event_ids, historical, now, topic_id)
    jobs.finish(raw, job.id, "skipped", now, f"retried as batch {fresh}")
    row = raw.execute(
        "SELECT id FROM jobs WHERE kind = ? AND target_id = ?", (TOPIC_JOB, fresh)
    ).fetchone()
    return jobs.get_job(raw, row[0])
