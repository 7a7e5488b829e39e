"""External-memory import jobs (spec §11.4): the job row and one row per candidate.

A candidate's decision is written once: ``record_decision`` fills an empty slot only, so a
second worker finishing the same index (or a replay after a restart) changes nothing, and
progress moves by one exactly when a slot is filled, in the same transaction (counting
every slot again per decision made analysis quadratic).
"""

import json
import sqlite3
from collections.abc import Sequence
from typing import Any

from ..errors import NotFound
from ..ids import new_id
from ..importer.external_format import ExternalCandidate
from ..importer.jobs import ImportBatch, ImportItem, ImportJob
from .rows import dump_json

_COLUMNS = (  # without the text (up to 4 MB): a job page polls its row every second
    "id, namespace, status, format, source_system, payload, processed, total, error, "
    "batch_id, created_at, updated_at, committed_at, undone_at"
)


def insert_job(
    raw: sqlite3.Connection,
    space: str,
    status: str,
    fmt: str,
    source_system: str,
    text: str,
    payload: dict[str, Any],
    candidates: Sequence[dict[str, Any]],
    now: str,
) -> str:
    job_id = new_id("imp")
    raw.execute(
        "INSERT INTO import_jobs(id, namespace, status, format, source_system, text, payload, "
        "total, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?)",
        (job_id, space, status, fmt, source_system, text, dump_json(payload), 0, now, now),
    )
    set_candidates(raw, job_id, candidates, now)
    return job_id


def set_candidates(
    raw: sqlite3.Connection, job_id: str, candidates: Sequence[dict[str, Any]], now: str
) -> None:
    """The job's candidates (v2 JSON each), replacing any; progress starts again at 0."""
    raw.execute("DELETE FROM import_items WHERE job_id = ?", (job_id,))
    raw.executemany(
        "INSERT INTO import_items(job_id, idx, candidate_json) VALUES (?, ?, ?)",
        [(job_id, index, dump_json(c)) for index, c in enumerate(candidates)],
    )
    raw.execute(
        "UPDATE import_jobs SET total = ?, processed = 0, updated_at = ? WHERE id = ?",
        (len(candidates), now, job_id),
    )


def job_row(raw: sqlite3.Connection, job_id: str) -> sqlite3.Row:
    return _one(raw, "id", job_id, "no import job with id")


def job_text(raw: sqlite3.Connection, job_id: str) -> str:
    """The text the job was made from (what recovery reads and the source block keeps)."""
    row = raw.execute("SELECT text FROM import_jobs WHERE id = ?", (job_id,)).fetchone()
    if row is None:
        raise NotFound(f"no import job with id {job_id!r}")
    return str(row[0])


def batch_job(raw: sqlite3.Connection, batch_id: str) -> sqlite3.Row:
    """The job whose committed batch (source block) is ``batch_id``."""
    return _one(raw, "batch_id", batch_id, "no import batch with id")


def _one(raw: sqlite3.Connection, column: str, value: str, missing: str) -> sqlite3.Row:
    row: sqlite3.Row | None = raw.execute(
        f"SELECT {_COLUMNS} FROM import_jobs WHERE {column} = ?", (value,)
    ).fetchone()
    if row is None:
        raise NotFound(f"{missing} {value!r}")
    return row


def item_rows(raw: sqlite3.Connection, job_id: str) -> list[sqlite3.Row]:
    return raw.execute(
        "SELECT idx, candidate_json, decision_json, choice FROM import_items "
        "WHERE job_id = ? ORDER BY idx",
        (job_id,),
    ).fetchall()


def pending_indexes(raw: sqlite3.Connection, job_id: str, limit: int) -> list[int]:
    rows = raw.execute(
        "SELECT idx FROM import_items WHERE job_id = ? AND decision_json IS NULL "
        "ORDER BY idx LIMIT ?",
        (job_id, limit),
    )
    return [int(row[0]) for row in rows]


def record_decision(
    raw: sqlite3.Connection, job_id: str, index: int, decision: dict[str, Any], now: str
) -> int | None:
    """Fill the index's empty decision slot and count it in the progress, in one
    transaction (so the count never drifts); the progress now, None if already filled."""
    done = raw.execute(
        "UPDATE import_items SET decision_json = ? WHERE job_id = ? AND idx = ? "
        "AND decision_json IS NULL",
        (dump_json(decision), job_id, index),
    ).rowcount
    if not done:
        return None
    row = raw.execute(
        "UPDATE import_jobs SET processed = processed + 1, updated_at = ? WHERE id = ? "
        "RETURNING processed",
        (now, job_id),
    ).fetchone()
    return int(row[0])


def claim(raw: sqlite3.Connection, job_id: str, owner: str, now: str) -> None:
    """``owner`` analyses the job now (its heartbeat is the job's ``updated_at``)."""
    raw.execute(
        "UPDATE import_jobs SET payload = json_set(COALESCE(payload, '{}'), '$.owner', ?), "
        "updated_at = ? WHERE id = ? AND status IN ('extracting', 'processing')",
        (owner, now, job_id),
    )


def jobs_with_text(
    raw: sqlite3.Connection, space: str, text: str, statuses: Sequence[str]
) -> list[sqlite3.Row]:
    """The space's jobs made from exactly ``text`` in one of ``statuses``, newest first."""
    return raw.execute(
        f"SELECT {_COLUMNS} FROM import_jobs WHERE namespace = ? AND text = ? "
        f"AND status IN ({','.join('?' * len(statuses))}) ORDER BY created_at DESC, id DESC",
        (space, text, *statuses),
    ).fetchall()


def set_choices(raw: sqlite3.Connection, job_id: str, choices: dict[int, str]) -> None:
    raw.executemany(
        "UPDATE import_items SET choice = ? WHERE job_id = ? AND idx = ?",
        [(action, job_id, index) for index, action in choices.items()],
    )


def set_status(
    raw: sqlite3.Connection,
    job_id: str,
    status: str,
    now: str,
    *,
    error: str | None = None,
    payload: dict[str, Any] | None = None,
    source_system: str | None = None,
) -> None:
    raw.execute(
        "UPDATE import_jobs SET status = ?, error = ?, updated_at = ?, "
        "payload = COALESCE(?, payload), source_system = COALESCE(?, source_system) "
        "WHERE id = ?",
        (
            status,
            error,
            now,
            None if payload is None else dump_json(payload),
            source_system,
            job_id,
        ),
    )


def mark_committed(
    raw: sqlite3.Connection, job_id: str, batch_id: str, payload: dict[str, Any], now: str
) -> None:
    raw.execute(
        "UPDATE import_jobs SET status = 'committed', batch_id = ?, payload = ?, "
        "committed_at = ?, updated_at = ? WHERE id = ?",
        (batch_id, dump_json(payload), now, now, job_id),
    )


def mark_undone(raw: sqlite3.Connection, job_id: str, now: str) -> bool:
    """Whether this unit took the committed job to undone: two undos at once on
    PostgreSQL (READ COMMITTED) both read it committed, and only one update finds it so."""
    changed = raw.execute(
        "UPDATE import_jobs SET status = 'undone', undone_at = ?, updated_at = ? "
        "WHERE id = ? AND status = 'committed'",
        (now, now, job_id),
    )
    return changed.rowcount == 1


def jobs_in(raw: sqlite3.Connection, statuses: Sequence[str]) -> list[str]:
    rows = raw.execute(
        f"SELECT id FROM import_jobs WHERE status IN ({','.join('?' * len(statuses))}) "
        "ORDER BY created_at, id",
        list(statuses),
    )
    return [row[0] for row in rows]


def list_jobs(raw: sqlite3.Connection, space: str, limit: int) -> list[sqlite3.Row]:
    return raw.execute(
        f"SELECT {_COLUMNS} FROM import_jobs WHERE namespace = ? "
        "ORDER BY created_at DESC, id DESC LIMIT ?",
        (space, limit),
    ).fetchall()


def batch_jobs(raw: sqlite3.Connection, space: str) -> list[sqlite3.Row]:
    return raw.execute(
        f"SELECT {_COLUMNS} FROM import_jobs WHERE namespace = ? AND batch_id IS NOT NULL "
        "ORDER BY committed_at DESC, id DESC",
        (space,),
    ).fetchall()


def space_exists(raw: sqlite3.Connection, space: str) -> bool:
    found = raw.execute("SELECT 1 FROM namespaces WHERE namespace = ?", (space,)).fetchone()
    return found is not None


def finish_analysis(raw: sqlite3.Connection, job_id: str, status: str, now: str) -> bool:
    """The job moved to ``status`` if it is still ``processing`` with every item decided."""
    changed = raw.execute(
        "UPDATE import_jobs SET status = ?, error = NULL, updated_at = ? WHERE id = ? "
        "AND status = 'processing' AND NOT EXISTS (SELECT 1 FROM import_items "
        "WHERE job_id = ? AND decision_json IS NULL)",
        (status, now, job_id, job_id),
    ).rowcount
    return changed > 0


# -- records from rows ----------------------------------------------------------------------


def payload_of(row: sqlite3.Row) -> dict[str, Any]:
    value = json.loads(row["payload"] or "{}")
    return value if isinstance(value, dict) else {}


def job_from_row(row: sqlite3.Row, items: Sequence[sqlite3.Row]) -> ImportJob:
    """An ``import_jobs`` row (read without its text) and its ``import_items`` rows."""
    payload = payload_of(row)
    fields = {key: row[key] for key in row.keys() if key != "payload"}  # noqa: SIM118
    return ImportJob.model_validate(
        {
            **fields,
            "recovered": bool(payload.get("recovered")),
            "dropped": int(payload.get("dropped", 0)),
            "owner": payload.get("owner"),
            "items": [item_from_row(item) for item in items],
        }
    )


def item_from_row(row: sqlite3.Row) -> ImportItem:
    decided: dict[str, Any] = json.loads(row["decision_json"]) if row["decision_json"] else {}
    decided.pop("gate", None)
    return ImportItem.model_validate(
        {
            "index": row["idx"],
            "candidate": ExternalCandidate.model_validate_json(row["candidate_json"]),
            "choice": row["choice"],
            **decided,
        }
    )


def batch_from_row(row: sqlite3.Row) -> ImportBatch:
    """A committed (or undone) job's row as its batch."""
    payload = payload_of(row)
    return ImportBatch.model_validate(
        {
            "id": row["batch_id"],
            "job_id": row["id"],
            "namespace": row["namespace"],
            "source_system": row["source_system"],
            "status": "undone" if row["status"] == "undone" else "committed",
            "event_ids": payload.get("event_ids", []),
            "imported_count": int(payload.get("imported", 0)),
            "ignored_count": int(payload.get("ignored", 0)),
            "committed_at": row["committed_at"],
            "undone_at": row["undone_at"],
        }
    )
