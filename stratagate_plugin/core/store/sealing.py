"""Sealing full open tails into pending blocks: L5 stays as rows, L4/L3 are computed.

Runs inside the recording transaction, before any model is asked anything, so a
sealed block and its summary job exist the moment the turn that filled it returns.
"""

import sqlite3
import uuid

from ..transcript import layer_texts
from .rows import message_from_row

SUMMARY_JOB = "block_summary"


def seal_ready_tails(raw: sqlite3.Connection, namespace: str, thread_id: str, now: str) -> list[str]:
    """Seal as many blocks as the open tail holds (several after the size was lowered)."""
    size = raw.execute(
        "SELECT block_turn_size FROM namespaces WHERE namespace = ?", (namespace,)
    ).fetchone()[0]
    sealed = []
    while _open_user_messages(raw, namespace, thread_id) >= size:
        sealed.append(_seal_one(raw, namespace, thread_id, size, now))
    return sealed


def _open_user_messages(raw: sqlite3.Connection, namespace: str, thread_id: str) -> int:
    row = raw.execute(
        "SELECT open_user_messages FROM threads WHERE namespace = ? AND thread_id = ?",
        (namespace, thread_id),
    ).fetchone()
    return int(row[0])


def _seal_one(raw: sqlite3.Connection, namespace: str, thread_id: str, size: int, now: str) -> str:
    tail = raw.execute(
        "SELECT * FROM messages WHERE namespace = ? AND thread_id = ? AND block_id IS NULL "
        "ORDER BY position",
        (namespace, thread_id),
    ).fetchall()
    cut = _cut_index(tail, size)
    members = [message_from_row(row) for row in tail[:cut]]
    _raw_text, readable, condensed = layer_texts(members)
    block_id = f"blk_{uuid.uuid4().hex}"
    sequence, thread_sequence = _next_sequences(raw, namespace, thread_id)
    raw.execute(
        "INSERT INTO blocks(id, namespace, thread_id, sequence, thread_sequence, start_turn, "
        "end_turn, l4_readable, l3_condensed, created_at, updated_at) "
        "VALUES (?,?,?,?,?,?,?,?,?,?,?)",
        (block_id, namespace, thread_id, sequence, thread_sequence, members[0].turn,
         members[-1].turn, readable, condensed, now, now),
    )
    first, last = members[0].position, members[-1].position
    raw.execute(
        "UPDATE messages SET block_id = ? WHERE namespace = ? AND thread_id = ? "
        "AND block_id IS NULL AND position BETWEEN ? AND ?",
        (block_id, namespace, thread_id, first, last),
    )
    users = sum(1 for m in members if m.role == "user")
    raw.execute(
        "UPDATE threads SET open_user_messages = open_user_messages - ? "
        "WHERE namespace = ? AND thread_id = ?",
        (users, namespace, thread_id),
    )
    enqueue_job(raw, namespace, SUMMARY_JOB, block_id, now)
    return block_id


def _cut_index(tail: list[sqlite3.Row], size: int) -> int:
    """Index just before the (size+1)-th user message, or the whole tail."""
    users = 0
    for index, row in enumerate(tail):
        if row["role"] == "user":
            users += 1
            if users > size:
                return index
    return len(tail)


def _next_sequences(raw: sqlite3.Connection, namespace: str, thread_id: str) -> tuple[int, int]:
    row = raw.execute(
        "SELECT COALESCE(MAX(sequence), 0) FROM blocks WHERE namespace = ?", (namespace,)
    ).fetchone()
    thread_row = raw.execute(
        "SELECT COALESCE(MAX(thread_sequence), 0) FROM blocks WHERE namespace = ? "
        "AND thread_id = ?",
        (namespace, thread_id),
    ).fetchone()
    return int(row[0]) + 1, int(thread_row[0]) + 1


def enqueue_job(raw: sqlite3.Connection, namespace: str, kind: str, target_id: str, now: str) -> None:
    raw.execute(
        "INSERT OR IGNORE INTO jobs(id, namespace, kind, target_id, created_at, updated_at) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        (f"job_{uuid.uuid4().hex}", namespace, kind, target_id, now, now),
    )
