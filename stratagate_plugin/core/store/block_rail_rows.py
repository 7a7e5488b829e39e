"""The reads behind the block rail: a space's conversations, one page of a thread's blocks
and what belongs to just those blocks (messages, jobs, events).

Every read goes through an index: threads by their primary key, blocks by
``(namespace, thread_id, thread_sequence)`` (sequences run 1..block_count, so a page is a
range), messages by ``messages_block``, jobs by ``(kind, target_id)``, events by
``events_block``; nothing here reads a whole thread's messages.
"""

import sqlite3
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from ..blocks.storage import Conversation, EventLink, OpenTail
from ..errors import NotFound
from ..records import EXTRACTION_JOB, SUMMARY_JOB, Block, Job, Role, ToolTrace
from .rows import block_from_row, job_from_row, maybe_time, traces_from_json

_CONVERSATIONS = (
    "SELECT t.thread_id, t.title, t.message_count, t.turn_count, "
    "(SELECT COALESCE(MAX(b.thread_sequence), 0) FROM blocks b WHERE b.namespace = t.namespace "
    "AND b.thread_id = t.thread_id) AS block_count, "
    "(SELECT m.created_at FROM messages m WHERE m.namespace = t.namespace "
    "AND m.thread_id = t.thread_id AND m.position = t.message_count) AS last_at "
    "FROM threads t WHERE t.namespace = ? ORDER BY last_at DESC, t.thread_id LIMIT ?"
)


def conversations(raw: sqlite3.Connection, space: str, limit: int) -> list[Conversation]:
    """The space's threads, most recently active first (two index probes a thread; the
    block count is the newest block's sequence, as ``thread_tail`` reads it)."""
    rows = raw.execute(_CONVERSATIONS, (space, limit)).fetchall()
    return [
        Conversation(
            thread_id=row["thread_id"],
            blocks=int(row["block_count"]),
            messages=int(row["message_count"]),
            turns=int(row["turn_count"]),
            last_at=maybe_time(row["last_at"]),
            title=row["title"],
        )
        for row in rows
    ]


def thread_titles(raw: sqlite3.Connection, space: str) -> dict[str, str]:
    """Every titled thread of the space: its id → its title."""
    rows = raw.execute(
        "SELECT thread_id, title FROM threads WHERE namespace = ? AND title != ''", (space,)
    ).fetchall()
    return {row["thread_id"]: row["title"] for row in rows}


def set_thread_titles(raw: sqlite3.Connection, space: str, titles: dict[str, str]) -> int:
    """Title the threads of ``titles`` that exist; how many changed."""
    changed = 0
    for thread_id, title in titles.items():
        changed += raw.execute(
            "UPDATE threads SET title = ? WHERE namespace = ? AND thread_id = ? AND title != ?",
            (title, space, thread_id, title),
        ).rowcount
    return changed


def thread_tail(raw: sqlite3.Connection, space: str, thread_id: str) -> tuple[int, OpenTail]:
    """(the thread's newest block sequence, i.e. how many blocks it has, and its open tail
    against the space's block size). The sequence is read from the blocks (one index probe),
    not from the thread's counter, so a database written by other tools pages right too."""
    row = raw.execute(
        "SELECT (SELECT COALESCE(MAX(b.thread_sequence), 0) FROM blocks b "
        "WHERE b.namespace = t.namespace AND b.thread_id = t.thread_id) AS block_count, "
        "t.open_user_messages, t.message_count - t.sealed_position AS open, "
        "n.block_turn_size FROM threads t JOIN namespaces n ON n.namespace = t.namespace "
        "WHERE t.namespace = ? AND t.thread_id = ?",
        (space, thread_id),
    ).fetchone()
    if row is None:
        raise NotFound(f"no conversation {thread_id!r} in memory space {space!r}")
    tail = OpenTail(int(row["open_user_messages"]), int(row["open"]), int(row["block_turn_size"]))
    return int(row["block_count"]), tail


def blocks_between(
    raw: sqlite3.Connection, space: str, thread_id: str, first: int, last: int
) -> list[Block]:
    """The thread's blocks with sequence in [first, last], oldest first."""
    rows = raw.execute(
        "SELECT * FROM blocks WHERE namespace = ? AND thread_id = ? "
        "AND thread_sequence BETWEEN ? AND ? ORDER BY thread_sequence",
        (space, thread_id, first, last),
    ).fetchall()
    return [block_from_row(row) for row in rows]


def _marks(ids: Sequence[str]) -> str:
    return ",".join("?" * len(ids))


@dataclass(frozen=True)
class Said:
    """The three columns the L5 view is rendered from (a full ``Message`` costs 10× more to
    build, and a page holds a thousand of them)."""

    role: Role
    content: str
    tool_calls: tuple[ToolTrace, ...]


def raw_tokens_of(raw: sqlite3.Connection, block_ids: Sequence[str]) -> dict[str, int | None]:
    """Each block's L5 size as stored when it sealed (None: not stored)."""
    rows = raw.execute(
        f"SELECT id, raw_tokens FROM blocks WHERE id IN ({_marks(block_ids)})", list(block_ids)
    )
    return {row[0]: row[1] for row in rows}


def transcripts_of(raw: sqlite3.Connection, block_ids: Sequence[str]) -> dict[str, list[Said]]:
    """Each block's messages, in order, as the transcript rules read them."""
    if not block_ids:
        return {}
    rows = raw.execute(
        f"SELECT block_id, role, content, tool_calls_json FROM messages "
        f"WHERE block_id IN ({_marks(block_ids)}) ORDER BY block_id, position",
        list(block_ids),
    ).fetchall()
    found: dict[str, list[Said]] = defaultdict(list)
    for block_id, role, content, traces in rows:
        found[block_id].append(Said(role, content, traces_from_json(traces)))
    return found


def jobs_of(raw: sqlite3.Connection, block_ids: Sequence[str]) -> dict[str, list[Job]]:
    """The derivation jobs (summary, extraction) of each block."""
    rows = raw.execute(
        f"SELECT * FROM jobs WHERE kind IN (?, ?) AND target_id IN ({_marks(block_ids)}) "
        "ORDER BY created_at, id",
        [SUMMARY_JOB, EXTRACTION_JOB, *block_ids],
    ).fetchall()
    found: dict[str, list[Job]] = defaultdict(list)
    for row in rows:
        found[row["target_id"]].append(job_from_row(row))
    return found


def events_of(raw: sqlite3.Connection, block_ids: Sequence[str]) -> dict[str, list[EventLink]]:
    """The events extracted from each block (forgotten ones left out)."""
    rows = raw.execute(
        "SELECT id, title, status, source_block_id FROM events "
        f"WHERE source_block_id IN ({_marks(block_ids)}) AND status != 'forgotten' "
        "ORDER BY source_block_id, pk",
        list(block_ids),
    ).fetchall()
    found: dict[str, list[EventLink]] = defaultdict(list)
    for row in rows:
        found[row["source_block_id"]].append(EventLink(row["id"], row["title"], row["status"]))
    return found


def failed_job(raw: sqlite3.Connection, block_id: str) -> Job | None:
    """The block's failed derivation job (the summary before the extraction), if any."""
    jobs = [job for job in jobs_of(raw, [block_id]).get(block_id, []) if job.status == "failed"]
    jobs.sort(key=lambda job: job.kind != SUMMARY_JOB)
    return jobs[0] if jobs else None
