"""Reading blocks and their messages, marking them ready, and re-anchoring on expand."""

import sqlite3

from ..blocks.storage import BlockParts
from ..errors import BlockNotReady, NotFound
from ..records import Block, BlockMark, LiftSource, Message
from ..text.secrets import redact_secrets, redact_value
from .rows import block_from_row, dump_json, maybe_json, message_from_row, record_from_row
from .units import on_postgres


def get_block(raw: sqlite3.Connection, block_id: str) -> Block:
    row = raw.execute("SELECT * FROM blocks WHERE id = ?", (block_id,)).fetchone()
    if row is None:
        raise NotFound(f"no block with id {block_id!r}")
    return block_from_row(row)


def block_parts(raw: sqlite3.Connection, block: Block) -> BlockParts:
    """The block with its messages, its thread's newest ready position and its space's λ:
    what its view and decayed level are computed from (``blocks.views``)."""
    latest = latest_ready_position(raw, block.namespace, block.thread_id)
    decay = decay_lambda(raw, block.namespace)
    return BlockParts(block, block_messages(raw, block.id), latest, decay)


def list_blocks(
    raw: sqlite3.Connection, space: str | None = None, thread_id: str | None = None
) -> list[Block]:
    clauses, params = [], []
    if space is not None:
        clauses.append("namespace = ?")
        params.append(space)
    if thread_id is not None:
        clauses.append("thread_id = ?")
        params.append(thread_id)
    where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
    rows = raw.execute(
        f"SELECT * FROM blocks {where} ORDER BY namespace, thread_id, thread_sequence", params
    ).fetchall()
    return [block_from_row(row) for row in rows]


def recent_ready(
    raw: sqlite3.Connection, space: str, thread_id: str | None, limit: int, offset: int = 0
) -> tuple[list[Block], int]:
    """The newest ``limit`` ready blocks of the space (or its thread) after the ``offset``
    newest, oldest first, read newest first along the sequence key; and how many ready
    blocks there are in all."""
    scope, params = "namespace = ?", [space]
    if thread_id is not None:
        scope, params = f"{scope} AND thread_id = ?", [space, thread_id]
    order = "sequence" if thread_id is None else "thread_sequence"
    rows = raw.execute(
        f"SELECT * FROM blocks WHERE {scope} AND processing_status = 'ready' "
        f"ORDER BY {order} DESC LIMIT ? OFFSET ?",
        [*params, limit, offset],
    ).fetchall()
    return [block_from_row(row) for row in reversed(rows)], _ready_count(raw, space, thread_id)


def _ready_count(raw: sqlite3.Connection, space: str, thread_id: str | None) -> int:
    """Ready blocks of the space (its status index covers the count) or of one thread
    (its key, the status summed: with the status in the WHERE, SQLite walked the status
    index over every ready block of the space, 21 ms at 21,000)."""
    if thread_id is None:
        sql = "SELECT COUNT(*) FROM blocks WHERE namespace = ? AND processing_status = 'ready'"
        return int(raw.execute(sql, (space,)).fetchone()[0])
    row = raw.execute(
        "SELECT COALESCE(SUM(CASE WHEN processing_status = 'ready' THEN 1 ELSE 0 END), 0) "
        "FROM blocks WHERE namespace = ? AND thread_id = ?",
        (space, thread_id),
    ).fetchone()
    return int(row[0])


def thread_block_marks(raw: sqlite3.Connection, space: str, thread_id: str) -> list[BlockMark]:
    """The thread's blocks oldest first, only their turns, status and times (one query
    over the ``(namespace, thread_id, thread_sequence)`` key; no texts read)."""
    rows = raw.execute(
        "SELECT id, thread_sequence, start_turn, end_turn, processing_status, "
        "l0_title AS title, created_at AS sealed_at, ready_at FROM blocks "
        "WHERE namespace = ? AND thread_id = ? ORDER BY thread_sequence",
        (space, thread_id),
    ).fetchall()
    return [record_from_row(BlockMark, row) for row in rows]


def block_messages(raw: sqlite3.Connection, block_id: str) -> list[Message]:
    rows = raw.execute(
        "SELECT * FROM messages WHERE block_id = ? ORDER BY position", (block_id,)
    ).fetchall()
    return [message_from_row(row) for row in rows]


_OPEN_TAIL = (
    "FROM messages m JOIN threads t ON t.namespace = m.namespace "
    "AND t.thread_id = m.thread_id WHERE m.namespace = ? AND m.thread_id = ? "
    "AND m.position > t.sealed_position"
)


def open_tail(raw: sqlite3.Connection, space: str, thread_id: str) -> list[Message]:
    rows = raw.execute(f"SELECT m.* {_OPEN_TAIL} ORDER BY m.position", (space, thread_id))
    return [message_from_row(row) for row in rows]


OPEN_TAILS = (
    "FROM threads t CROSS JOIN messages m ON m.namespace = t.namespace "
    "AND m.thread_id = t.thread_id AND m.position > t.sealed_position "
    "WHERE t.namespace = ? AND t.message_count > t.sealed_position AND t.thread_id IS NOT ?"
)
"""The open-tail messages of a namespace's threads but one (``IS NOT NULL``: all of them).

One primary-key probe a thread: tails are short (under a block's turns) and few, since
idle and ended sessions have theirs sealed."""

_OPEN_TAILS_LATERAL = (
    "FROM threads t CROSS JOIN LATERAL (SELECT * FROM messages WHERE namespace = t.namespace "
    "AND thread_id = t.thread_id AND position > t.sealed_position OFFSET 0) m "
    "WHERE t.namespace = ? AND t.message_count > t.sealed_position AND t.thread_id IS NOT ?"
)


def open_tails(raw: sqlite3.Connection) -> str:
    """``OPEN_TAILS`` as this backend runs it as one probe a thread. PostgreSQL cannot
    estimate ``message_count > sealed_position`` (two columns: it guesses a third of the
    threads, not the few open ones) and hashed all of ``messages`` for it, ~20 ms a call
    at 100k; a ``LATERAL`` subquery that it cannot pull up (``OFFSET 0``) leaves it only
    the per-thread index probe, in generic plans too."""
    return _OPEN_TAILS_LATERAL if on_postgres(raw) else OPEN_TAILS


def thread_and_other_tails(
    raw: sqlite3.Connection, space: str, thread_id: str
) -> tuple[list[Message], list[Message]]:
    """``open_tail`` of that thread, and every other thread's open-tail messages by thread
    and position: one statement (recall reads both; on PostgreSQL a statement is a round
    trip), each part read by the index probes it took alone."""
    rows = raw.execute(
        f"SELECT 0 AS part, m.* {_OPEN_TAIL} UNION ALL SELECT 1 AS part, m.* {open_tails(raw)} "
        "ORDER BY part, thread_id, position",
        (space, thread_id, space, thread_id),
    )
    tails: tuple[list[Message], list[Message]] = ([], [])
    for row in rows:
        tails[row["part"]].append(message_from_row(row))
    return tails


def latest_ready_position(raw: sqlite3.Connection, space: str, thread_id: str) -> int:
    """The thread's newest ready position. ``ready_position IS NOT NULL`` changes no answer
    (``MAX`` skips NULLs) but lets SQLite take the partial ``blocks_ready`` index for the
    one thread: on ``(namespace, processing_status)`` it read every ready block of the
    space, 17 ms at 21,000 blocks, in every rail page and block view."""
    row = raw.execute(
        "SELECT COALESCE(MAX(ready_position), 0) FROM blocks WHERE namespace = ? "
        "AND thread_id = ? AND ready_position IS NOT NULL AND processing_status = 'ready'",
        (space, thread_id),
    ).fetchone()
    return int(row[0])


def decay_lambda(raw: sqlite3.Connection, space: str) -> float:
    row = raw.execute(
        "SELECT block_decay_lambda FROM namespaces WHERE namespace = ?", (space,)
    ).fetchone()
    if row is None:
        raise NotFound(f"no memory space named {space!r}")
    return float(row[0])


def mark_ready(
    raw: sqlite3.Connection,
    block_id: str,
    now: str,
    derived: dict[str, object] | None = None,
) -> Block:
    """Ready = may decay and be shown; the pointer starts at L5 at the newest position."""
    block = get_block(raw, block_id)
    if block.processing_status == "ready":
        return block
    position = latest_ready_position(raw, block.namespace, block.thread_id) + 1
    fields = derived or {}
    raw.execute(
        "UPDATE blocks SET processing_status = 'ready', ready_position = ?, "
        "pointer_current_level = 5, pointer_anchor_level = 5, pointer_anchor_position = ?, "
        "l0_title = COALESCE(?, l0_title), l0_tags_json = COALESCE(?, l0_tags_json), "
        "l1_summary = COALESCE(?, l1_summary), l2_keypoints_json = COALESCE(?, "
        "l2_keypoints_json), updated_at = ?, ready_at = ? WHERE id = ?",
        (
            position,
            position,
            fields.get("l0_title"),
            _json_or_none(fields.get("l0_tags")),
            fields.get("l1_summary"),
            _json_or_none(fields.get("l2_keypoints")),
            now,
            now,
            block_id,
        ),
    )
    return get_block(raw, block_id)


def _json_or_none(value: object) -> str | None:
    return None if value is None else dump_json(value)


def reanchor(
    raw: sqlite3.Connection, block_id: str, level: int, source: LiftSource, now: str
) -> Block:
    """Expansion: anchor at ``level`` as of the newest ready position, then decay again."""
    block = get_block(raw, block_id)
    if block.processing_status != "ready":
        raise BlockNotReady(f"block {block_id} is still being processed; only ready blocks expand")
    latest = latest_ready_position(raw, block.namespace, block.thread_id)
    raw.execute(
        "UPDATE blocks SET pointer_anchor_level = ?, pointer_anchor_position = ?, "
        "pointer_current_level = ?, last_lifted_at = ?, last_lifted_by = ?, updated_at = ? "
        "WHERE id = ?",
        (level, latest, level, now, source, now, block_id),
    )
    return get_block(raw, block_id)


def store_summary(
    raw: sqlite3.Connection,
    block_id: str,
    title: str,
    tags: list[str],
    summary: str,
    keypoints: list[str],
    should_extract: bool,
    now: str,
) -> None:
    """L0–L2 from the summary job, secret-looking tokens redacted (L5 keeps them); the
    block stays pending until extraction is done."""
    raw.execute(
        "UPDATE blocks SET l0_title = ?, l0_tags_json = ?, l1_summary = ?, "
        "l2_keypoints_json = ?, should_extract = ?, updated_at = ? WHERE id = ?",
        (
            redact_secrets(title),
            dump_json(redact_value(tags)),
            redact_secrets(summary),
            dump_json(redact_value(keypoints)),
            int(should_extract),
            now,
            block_id,
        ),
    )


def neighbour_keypoints(raw: sqlite3.Connection, block: Block) -> dict[str, list[str]]:
    """L2 key points of the nearest earlier and later summarised blocks in the thread."""
    out: dict[str, list[str]] = {"previous": [], "next": []}
    for key, op, order in (("previous", "<", "DESC"), ("next", ">", "ASC")):
        row = raw.execute(
            f"SELECT l2_keypoints_json FROM blocks WHERE namespace = ? AND thread_id = ? "
            f"AND thread_sequence {op} ? AND l2_keypoints_json IS NOT NULL "
            f"ORDER BY thread_sequence {order} LIMIT 1",
            (block.namespace, block.thread_id, block.thread_sequence),
        ).fetchone()
        if row is not None:
            out[key] = list(maybe_json(row[0]) or [])
    return out


def block_space_turn(raw: sqlite3.Connection, block_id: str) -> int:
    """The namespace turn in which the block's last message was recorded."""
    row = raw.execute(
        "SELECT MAX(namespace_turn) FROM messages WHERE block_id = ?", (block_id,)
    ).fetchone()
    return int(row[0] or 0)
