"""The overview's reads: a space's counts by state, its jobs and usage receipts by page.

Every count is a ``GROUP BY`` over an index (migration 17) or a sum of the counters that
recording keeps per thread, so the status panel never loads a row of blocks, events or
messages however large the space; the lists page newest first over an index.
"""

import json
import sqlite3
from datetime import datetime
from typing import Any

from ..overview.storage import ReceiptRow, SpaceTallies
from ..records import TOPIC_JOB, Job
from .gate_rows import batch_from_row, receipt_row
from .rows import job_from_row
from .sqlite.derivation import retry_failed_rows

_AUDIT = (
    "SELECT u.receipt_id, u.batch_id, u.event_ids_json, u.audit_json, u.created_at, "
    "b.tool, b.thread_id, b.turn FROM usage_receipts u LEFT JOIN batches b ON b.id = u.batch_id "
    "WHERE u.namespace = ? ORDER BY u.created_at DESC, u.receipt_id DESC LIMIT ? OFFSET ?"
)


def space_counts(raw: sqlite3.Connection, space: str) -> SpaceTallies:
    """The space's blocks, events and jobs by state, its messages and open-tail turns."""
    threads, messages, open_turns = raw.execute(
        "SELECT COUNT(*), COALESCE(SUM(message_count), 0), COALESCE(SUM(open_user_messages), 0) "
        "FROM threads WHERE namespace = ?",
        (space,),
    ).fetchone()
    jobs: dict[str, dict[str, int]] = {}
    for kind, status, count in raw.execute(
        "SELECT kind, status, COUNT(*) FROM jobs WHERE namespace = ? GROUP BY kind, status",
        (space,),
    ):
        jobs.setdefault(kind, {})[status] = count
    (adoptions,) = raw.execute(
        "SELECT COUNT(*) FROM usage_receipts WHERE namespace = ? AND event_ids_json != '[]'",
        (space,),
    ).fetchone()
    return SpaceTallies(
        namespace=space,
        blocks=_by_status(raw, "SELECT processing_status, COUNT(*) FROM blocks", space),
        events=_by_status(raw, "SELECT status, COUNT(*) FROM events", space),
        jobs=jobs,
        threads=threads,
        messages=messages,
        open_turns=open_turns,
        adoptions=adoptions,
    )


def _by_status(raw: sqlite3.Connection, select: str, space: str) -> dict[str, int]:
    rows = raw.execute(f"{select} WHERE namespace = ? GROUP BY 1", (space,))
    return {status: count for status, count in rows}


def job_page(
    raw: sqlite3.Connection, space: str, status: str | None, offset: int, limit: int
) -> list[Job]:
    """Up to ``limit`` jobs of the space (of one status, or all), last changed first."""
    where, params = "namespace = ?", [space]
    if status is not None:  # its own condition, so the (namespace, status, …) index serves
        where, params = where + " AND status = ?", [space, status]
    rows = raw.execute(
        f"SELECT * FROM jobs WHERE {where} ORDER BY updated_at DESC, id DESC LIMIT ? OFFSET ?",
        (*params, limit, offset),
    ).fetchall()
    return [job_from_row(row) for row in rows]


def retry_failed_in(raw: sqlite3.Connection, space: str, now: datetime) -> int:
    """Every failed job of the space retried by its kind's rule (a topic batch queued
    again fresh: ``DerivationService.retry_failed_jobs(namespace)`` states it)."""
    return retry_failed_rows(raw, now, space, (TOPIC_JOB,))


def audit_page(raw: sqlite3.Connection, space: str, offset: int, limit: int) -> list[ReceiptRow]:
    """Up to ``limit`` usage receipts of the space with their batch, newest first."""
    rows = raw.execute(_AUDIT, (space, limit, offset)).fetchall()
    return [
        ReceiptRow(
            receipt_id=row["receipt_id"],
            batch_id=row["batch_id"],
            event_ids=json.loads(row["event_ids_json"]),
            audit=json.loads(row["audit_json"]),
            created_at=row["created_at"],
            tool=row["tool"],
            thread_id=row["thread_id"],
            turn=row["turn"],
        )
        for row in rows
    ]


def receipt_record(raw: sqlite3.Connection, space: str, receipt_id: str) -> dict[str, Any] | None:
    """One usage receipt as stored, its JSON decoded, with its batch (None: no receipt)."""
    row = receipt_row(raw, space, receipt_id)
    if row is None:
        return None
    batch = raw.execute("SELECT * FROM batches WHERE id = ?", (row["batch_id"],)).fetchone()
    return {
        "namespace": row["namespace"],
        "receipt_id": row["receipt_id"],
        "batch_id": row["batch_id"],
        "event_ids": json.loads(row["event_ids_json"]),
        "audit": json.loads(row["audit_json"]),
        "created_at": row["created_at"],
        "batch": None if batch is None else batch_from_row(batch).model_dump(mode="json"),
    }


def set_every_space(
    raw: sqlite3.Connection, block_turn_size: int, block_decay_lambda: float
) -> int:
    """Write the block size and decay into every space (future sealing and decay); how many.
    ``updated_at`` stays: it orders the spaces by when they were last used."""
    cursor = raw.execute(
        "UPDATE namespaces SET block_turn_size = ?, block_decay_lambda = ?",
        (block_turn_size, block_decay_lambda),
    )
    return cursor.rowcount
