"""Who derived a block, its event cards and a job's result (issue 31), and the blocks the
offline model derived because the model failed.

``derived_by`` is the model's name, "offline", or "offline-fallback"; ``derive_error`` the
model's error as one line. A block is "offline-fallback" when either of its jobs fell
back: a later job that the model did answer never hides an earlier fallback.
"""

import sqlite3
from collections.abc import Sequence

from ..records import OFFLINE_FALLBACK, Block, Job
from .rows import block_from_row, job_from_row

__all__ = ["OFFLINE_FALLBACK", "fallback_jobs", "mark_block", "mark_events", "mark_job"]

_FELL_BACK = f"derived_by = '{OFFLINE_FALLBACK}'"
"""The partial indexes' own condition, written out rather than bound: a parameter would
leave PostgreSQL's generic plan of a prepared statement unable to use them."""


def mark_block(raw: sqlite3.Connection, block_id: str, by: str, error: str | None) -> None:
    raw.execute(
        "UPDATE blocks SET derived_by = ?, derive_error = ? WHERE id = ?", (by, error, block_id)
    )


def note_block(raw: sqlite3.Connection, block_id: str, by: str, error: str | None) -> None:
    """The extraction's part in the block's mark: a fallback marks it; a model's answer
    keeps an earlier fallback of the summary."""
    raw.execute(
        "UPDATE blocks SET derived_by = ?, derive_error = ? WHERE id = ? "
        "AND (? = ? OR derived_by IS NOT ?)",
        (by, error, block_id, by, OFFLINE_FALLBACK, OFFLINE_FALLBACK),
    )


def mark_events(
    raw: sqlite3.Connection, event_ids: Sequence[str], by: str, error: str | None
) -> None:
    raw.executemany(
        "UPDATE events SET derived_by = ?, derive_error = ? WHERE id = ?",
        [(by, error, event_id) for event_id in event_ids],
    )


def mark_job(raw: sqlite3.Connection, job_id: str, by: str, error: str | None) -> None:
    """A finished job's author; a fallback keeps the model's error in ``last_error``."""
    raw.execute("UPDATE jobs SET derived_by = ?, last_error = ? WHERE id = ?", (by, error, job_id))


def offline_blocks(raw: sqlite3.Connection, space: str | None = None) -> list[Block]:
    """Blocks derived offline because the model failed, oldest first. ``+sequence`` keeps
    SQLite on the partial ``blocks_derived_offline`` index, sorting the few it finds: to
    save that sort it walked every block of the space by ``(namespace, sequence)``, 18 ms
    at 21,000 blocks on every jobs page."""
    rows = _fell_back(raw, "blocks", space, "namespace, +sequence")
    return [block_from_row(row) for row in rows]


def fallback_jobs(raw: sqlite3.Connection, space: str | None = None) -> list[Job]:
    """Finished jobs whose result came from the offline model (the graph and topic
    batches among them have no block to mark), oldest first: read from the partial
    ``jobs_derived_offline`` index, not the space's every job."""
    return [job_from_row(row) for row in _fell_back(raw, "jobs", space, "created_at, id")]


def _fell_back(
    raw: sqlite3.Connection, table: str, space: str | None, order: str
) -> list[sqlite3.Row]:
    """``table``'s rows derived offline because the model failed (in ``space``, or every
    space's), in ``order``."""
    sql, params = f"SELECT * FROM {table} WHERE {_FELL_BACK}", []
    if space is not None:
        sql, params = f"{sql} AND namespace = ?", [space]
    return raw.execute(f"{sql} ORDER BY {order}", params).fetchall()
