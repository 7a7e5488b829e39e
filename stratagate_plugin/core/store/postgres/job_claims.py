"""Job claims on PostgreSQL: several app processes claim from one queue at once.

SQLite serialises writers (``BEGIN IMMEDIATE``), so a claim's read of the first due job and
its lease are never raced. On PostgreSQL two READ COMMITTED claims could both read the same
first due job; locking the chosen row and skipping rows another claim holds locked
(``FOR UPDATE … SKIP LOCKED``) gives each claimant a different job without waiting. Leases
stay as on SQLite (owner, expiry, taken back when expired).
"""

import json
import sqlite3

from .unit_locks import hold

SKIP_LOCKED = " FOR UPDATE OF due SKIP LOCKED"
"""Appended to a claim's ``SELECT … FROM jobs AS due … LIMIT 1``."""

_SPACES_JOBS = (
    "SELECT id FROM jobs WHERE status IN ('pending', 'running', 'failed') AND namespace IN "
    "(SELECT value FROM json_each(?)) ORDER BY id FOR UPDATE"
)


def hold_spaces_jobs(raw: sqlite3.Connection, spaces: list[str]) -> None:
    """A purge's first write: topic claims held off (their lock, taken first as a claim
    takes it), then the spaces' unfinished jobs locked to its commit. A job's commit already
    holding its row finishes first (the purge then sweeps what it wrote); every other waits
    and finds its claim gone (``release_running_jobs``), and no job is claimed meanwhile
    (``SKIP_LOCKED``; a topic claim, whose batch may hold old events, waits): none can
    apply, after the purge, what it read before it (SQLite: one writer)."""
    from ..topic_jobs import CLAIMING  # topic_jobs imports jobs, which imports this module

    hold(raw, CLAIMING, "")
    raw.execute(_SPACES_JOBS, (json.dumps(spaces),)).fetchall()


HOLDS_TO_COMMIT = " FOR UPDATE"
"""Appended to a commit's check that its job still holds its claim: the row stays locked
until that commit ends, so a purge releasing the space's running jobs (``UPDATE jobs``)
either waits for the commit and then sweeps what it wrote, or goes first and the commit
finds its claim gone; READ COMMITTED alone would let the commit write, after the purge,
what it made of the purged words."""
