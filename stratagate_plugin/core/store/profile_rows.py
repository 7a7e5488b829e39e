"""Resident-profile persistence: values with per-field revisions, audit rows, proposals."""

import sqlite3

from ..ids import new_id
from ..profile.storage import ProfileConflict

__all__ = [
    "ProfileConflict",
    "add_proposal",
    "changes",
    "pending_proposals",
    "read_profile",
    "resolve_proposal",
    "updated_times",
    "write_field",
]


def read_profile(raw: sqlite3.Connection) -> dict[str, tuple[str, int]]:
    """field → (value, revision); missing fields are simply absent (read as empty)."""
    rows = raw.execute("SELECT field, value, revision FROM profile_fields").fetchall()
    return {row[0]: (row[1], int(row[2])) for row in rows}


def write_field(
    raw: sqlite3.Connection,
    field: str,
    value: str,
    source: str,
    now: str,
    expected_revision: int | None = None,
    message_id: str | None = None,
) -> tuple[bool, int]:
    """(modified, revision). The revision is the id of the field's latest change row."""
    old_value, revision = read_profile(raw).get(field, ("", 0))
    if expected_revision is not None and expected_revision != revision:
        raise ProfileConflict(field, old_value, revision, expected_revision)
    if old_value == value:
        return False, revision
    cursor = raw.execute(
        "INSERT INTO profile_changes(field, old_value, new_value, source, message_id, "
        "created_at) VALUES (?, ?, ?, ?, ?, ?)",
        (field, old_value, value, source, message_id, now),
    )
    revision = int(cursor.lastrowid or 0)
    raw.execute(
        "INSERT INTO profile_fields(field, value, revision, updated_at) VALUES (?, ?, ?, ?) "
        "ON CONFLICT(field) DO UPDATE SET value = excluded.value, "
        "revision = excluded.revision, updated_at = excluded.updated_at",
        (field, value, revision, now),
    )
    return True, revision


def updated_times(raw: sqlite3.Connection) -> dict[str, str]:
    """field → when it was last changed (ISO-8601, UTC)."""
    rows = raw.execute("SELECT field, updated_at FROM profile_fields").fetchall()
    return {row[0]: row[1] for row in rows}


def changes(raw: sqlite3.Connection, limit: int = 100, offset: int = 0) -> list[sqlite3.Row]:
    """The audit rows newest first, one page (by the primary key)."""
    return raw.execute(
        "SELECT * FROM profile_changes ORDER BY id DESC LIMIT ? OFFSET ?", (limit, offset)
    ).fetchall()


def add_proposal(raw: sqlite3.Connection, thread_key: str, field: str, value: str, now: str) -> str:
    """A new agent proposal replaces any earlier pending one in the same conversation."""
    raw.execute(
        "UPDATE profile_proposals SET status = 'refused', resolved_at = ? "
        "WHERE thread_key = ? AND status = 'pending'",
        (now, thread_key),
    )
    proposal_id = new_id("prop")
    raw.execute(
        "INSERT INTO profile_proposals(id, thread_key, field, value, created_at) "
        "VALUES (?, ?, ?, ?, ?)",
        (proposal_id, thread_key, field, value, now),
    )
    return proposal_id


def pending_proposals(raw: sqlite3.Connection, thread_key: str) -> list[sqlite3.Row]:
    return raw.execute(
        "SELECT * FROM profile_proposals WHERE thread_key = ? AND status = 'pending' "
        "ORDER BY created_at",
        (thread_key,),
    ).fetchall()


def resolve_proposal(raw: sqlite3.Connection, proposal_id: str, status: str, now: str) -> None:
    raw.execute(
        "UPDATE profile_proposals SET status = ?, resolved_at = ? WHERE id = ?",
        (status, now, proposal_id),
    )
