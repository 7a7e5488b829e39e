"""Sealing open tails into pending blocks: L5 stays as rows, L4/L3 are computed.

A tail is sealed when it holds a block's turns, and whole (a shorter block) when its
session ends, its import file ends, or it has been idle too long.

Sealing is also when messages enter the FTS index: one index segment per block instead of
one per turn keeps each commit small. Readers scan the open tails beside the index (they
are short and few: ``block_rows.OPEN_TAILS``).

Runs inside the recording transaction, before any model is asked anything, so a
sealed block and its summary job exist the moment the turn that filled it returns. Which
tail is full, where its block ends and the block's L4/L3 texts are the blocks' rules,
handed in as a ``Sealer``: this module writes what they say.
"""

import sqlite3
from dataclasses import dataclass
from datetime import datetime

from ..blocks.storage import Sealer
from ..clock import iso, parse_iso, utc_now
from ..ids import new_id
from ..records import SUMMARY_JOB, Role, ToolTrace
from .rows import traces_from_json
from .search_index import index_messages


@dataclass(frozen=True)
class _TailMessage:
    """The few columns sealing needs (cheaper than a full Message record)."""

    role: Role
    content: str
    tool_calls: tuple[ToolTrace, ...]
    position: int
    turn: int

    @classmethod
    def of(cls, row: sqlite3.Row) -> "_TailMessage":
        traces = traces_from_json(row["tool_calls_json"])
        return cls(row["role"], row["content"], traces, row["position"], row["turn"])


def seal_ready_tails(
    raw: sqlite3.Connection, space: str, thread_id: str, now: str, sealer: Sealer
) -> list[str]:
    """Seal as many blocks as ``sealer`` finds full (several after the size was lowered)."""
    size = raw.execute(
        "SELECT block_turn_size FROM namespaces WHERE namespace = ?", (space,)
    ).fetchone()[0]
    sealed: list[str] = []
    while True:
        thread = raw.execute(
            "SELECT open_user_messages, sealed_position FROM threads "
            "WHERE namespace = ? AND thread_id = ?",
            (space, thread_id),
        ).fetchone()
        if not sealer.full(thread[0], size):
            return sealed
        sealed.append(_seal_one(raw, space, thread_id, size, thread[1], now, sealer))


def seal_whole_tail(
    raw: sqlite3.Connection, space: str, thread_id: str, now: str, sealer: Sealer
) -> str | None:
    """Seal everything in the open tail as one (possibly short) block, e.g. at session end."""
    thread = raw.execute(
        "SELECT open_user_messages, sealed_position FROM threads "
        "WHERE namespace = ? AND thread_id = ?",
        (space, thread_id),
    ).fetchone()
    if thread is None or thread[0] < 1:
        return None
    return _seal_one(raw, space, thread_id, int(thread[0]), int(thread[1]), now, sealer)


def idle_tails(raw: sqlite3.Connection, before: datetime) -> list[tuple[str, str]]:
    """(namespace, thread) of every open tail whose newest message is older than ``before``.

    Read off each open thread's last message (a primary-key probe); times are compared
    parsed, not as text."""
    rows = raw.execute(
        "SELECT t.namespace, t.thread_id, m.created_at FROM threads t CROSS JOIN messages m "
        "ON m.namespace = t.namespace AND m.thread_id = t.thread_id "
        "AND m.position = t.message_count WHERE t.message_count > t.sealed_position"
    ).fetchall()
    return [(row[0], row[1]) for row in rows if parse_iso(row[2]) < before]


def seal_idle_tails(
    raw: sqlite3.Connection, before: datetime, now: str, sealer: Sealer
) -> list[str]:
    """Seal each tail idle since before ``before`` whole, as one (possibly short) block."""
    idle = idle_tails(raw, before)
    sealed = (seal_whole_tail(raw, ns, thread, now, sealer) for ns, thread in idle)
    return [block_id for block_id in sealed if block_id is not None]


def _seal_one(
    raw: sqlite3.Connection,
    space: str,
    thread_id: str,
    size: int,
    after: int,
    now: str,
    sealer: Sealer,
) -> str:
    tail = raw.execute(
        "SELECT role, content, tool_calls_json, position, turn FROM messages "
        "WHERE namespace = ? AND thread_id = ? AND position > ? ORDER BY position",
        (space, thread_id, after),
    ).fetchall()
    messages = [_TailMessage.of(row) for row in tail]
    cut = sealer.cut(messages, size)
    rows, members = tail[: cut.taken], messages[: cut.taken]
    block_id = new_id("blk")
    sequence, thread_sequence = _count_block(raw, space, thread_id, members, now)
    raw.execute(
        "INSERT INTO blocks(id, namespace, thread_id, sequence, thread_sequence, start_turn, "
        "end_turn, l4_readable, l3_condensed, raw_tokens, created_at, updated_at) "
        "VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
        (
            block_id,
            space,
            thread_id,
            sequence,
            thread_sequence,
            members[0].turn,
            members[-1].turn,
            cut.readable,
            cut.condensed,
            cut.raw_tokens,
            now,
            now,
        ),
    )
    first, last = members[0].position, members[-1].position
    fts_base = next_fts_rowid(raw) - first  # consecutive FTS rows: one index region a block
    raw.execute(
        "UPDATE messages SET block_id = ?, fts_rowid = ? + position "
        "WHERE namespace = ? AND thread_id = ? AND position BETWEEN ? AND ?",
        (block_id, fts_base, space, thread_id, first, last),
    )
    index_messages(raw, space, [(fts_base + row["position"], row["content"]) for row in rows])
    enqueue_job(raw, space, SUMMARY_JOB, block_id)
    return block_id


def next_fts_rowid(raw: sqlite3.Connection) -> int:
    row = raw.execute(
        "SELECT fts_rowid FROM messages WHERE fts_rowid IS NOT NULL ORDER BY fts_rowid DESC LIMIT 1"
    ).fetchone()
    return int(row[0]) + 1 if row else 1


def _count_block(
    raw: sqlite3.Connection,
    space: str,
    thread_id: str,
    members: list[_TailMessage],
    now: str,
) -> tuple[int, int]:
    """Advance the counters a new block changes; returns (sequence, thread sequence)."""
    users = sum(1 for m in members if m.role == "user")
    sequence = raw.execute(
        "UPDATE namespaces SET block_count = block_count + 1, updated_at = ? "
        "WHERE namespace = ? RETURNING block_count",
        (now, space),
    ).fetchone()[0]
    thread_sequence = raw.execute(
        "UPDATE threads SET block_count = block_count + 1, sealed_position = ?, "
        "open_user_messages = open_user_messages - ? WHERE namespace = ? AND thread_id = ? "
        "RETURNING block_count",
        (members[-1].position, users, space, thread_id),
    ).fetchone()[0]
    return int(sequence), int(thread_sequence)


def enqueue_job(
    raw: sqlite3.Connection, space: str, kind: str, target_id: str, priority: int = 0
) -> None:
    """Queue a job once per kind and target (claimed higher ``priority`` first, where its
    kind's claim orders by it); ``created_at`` is wall-clock time."""
    now = iso(utc_now())
    raw.execute(
        "INSERT OR IGNORE INTO jobs(id, namespace, kind, target_id, priority, created_at, "
        "updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
        (new_id("job"), space, kind, target_id, priority, now, now),
    )
