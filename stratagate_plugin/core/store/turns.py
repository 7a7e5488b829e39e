"""Recording turns: receipts, messages and sealing, in one transaction.

These are plain functions over a ``sqlite3.Connection``; ``Database.write`` runs each
call inside ``BEGIN IMMEDIATE`` so a turn is recorded whole or not at all. Whether the
tail the turn extends is sealed is the blocks' rule (the ``Sealer`` handed in).
"""

import hashlib
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from ..blocks.storage import ReceiptExists, Sealer
from ..clock import iso
from ..errors import InvalidInput, NotFound, ReceiptConflict
from ..ids import new_id
from ..records import MessageIn, TurnReceipt
from .provenance_rows import previous_turn, settle_turn
from .rows import dump_json, maybe_json, traces_json
from .sealing import seal_ready_tails


@dataclass(frozen=True)
class NewSpaceDefaults:
    """The block settings a namespace starts with (``spaces.storage.SpaceDefaults``)."""

    block_turn_size: int
    block_decay_lambda: float


def ensure_space(raw: sqlite3.Connection, space: str, defaults: NewSpaceDefaults, now: str) -> None:
    raw.execute(
        "INSERT OR IGNORE INTO namespaces(namespace, block_turn_size, block_decay_lambda, "
        "created_at, updated_at) VALUES (?, ?, ?, ?, ?)",
        (space, defaults.block_turn_size, defaults.block_decay_lambda, now, now),
    )


SPACE_SETTINGS = frozenset({"block_turn_size", "block_decay_lambda"})


def update_space_setting(
    raw: sqlite3.Connection,
    space: str,
    column: str,
    value: float,
    defaults: NewSpaceDefaults,
    now: str,
) -> None:
    """Set one of the namespace's ``SPACE_SETTINGS`` (the space is made if new)."""
    if column not in SPACE_SETTINGS:
        raise ValueError(f"not a namespace setting: {column}")
    ensure_space(raw, space, defaults, now)
    raw.execute(
        f"UPDATE namespaces SET {column} = ?, updated_at = ? WHERE namespace = ?",
        (value, now, space),
    )


def ensure_thread(raw: sqlite3.Connection, space: str, thread_id: str, now: str) -> None:
    raw.execute(
        "INSERT OR IGNORE INTO threads(namespace, thread_id, created_at) VALUES (?, ?, ?)",
        (space, thread_id, now),
    )


def turn_fingerprint(thread_id: str, messages: Sequence[MessageIn]) -> str:
    """A digest of everything a turn carries, to tell a replay from a conflicting one."""
    digest = hashlib.sha256(thread_id.encode())
    for m in messages:
        stamp = iso(m.at) if m.at else ""
        for part in (m.role, m.content, traces_json(m.tool_calls), stamp):
            digest.update(b"\x1f" + part.encode())
        digest.update(b"\x1e")
    return digest.hexdigest()


def record_turn(
    raw: sqlite3.Connection,
    space: str,
    thread_id: str,
    messages: Sequence[MessageIn],
    at: datetime,
    receipt_id: str,
    defaults: NewSpaceDefaults,
    sealer: Sealer,
    tools_thread: str | None = None,
) -> TurnReceipt:
    """Append one turn to the thread's open tail, sealing what ``sealer`` finds full; the turn's
    provenance is settled with it (``provenance_rows.settle_turn``). ``tools_thread``: the
    thread the turn's tool calls ran under, when it is not ``thread_id`` (MCP)."""
    if not any(m.role == "user" for m in messages):
        raise InvalidInput("a turn needs at least one user message")
    fingerprint = turn_fingerprint(thread_id, messages)
    now = iso(at)
    since = previous_turn(raw, space, thread_id)
    space_turn, block_size = _bump_space(raw, space, defaults, now)
    thread = _bump_thread(raw, space, thread_id, messages, now)
    ids = _insert_messages(raw, space, thread_id, thread, space_turn, messages, now)
    _insert_receipt(
        raw, space, receipt_id, fingerprint, thread_id, space_turn, thread.turn, ids, now
    )
    spoken = [(mid, m.role, m.content) for mid, m in zip(ids, messages, strict=True)]
    settle_turn(raw, space, [thread_id, tools_thread or thread_id], since, spoken)
    sealed = []
    if sealer.full(thread.open_user_messages, block_size):
        sealed = seal_ready_tails(raw, space, thread_id, now, sealer)
    return TurnReceipt(
        receipt_id=receipt_id,
        replayed=False,
        namespace_turn=space_turn,
        thread_turn=thread.turn,
        message_ids=ids,
        sealed_block_id=sealed[-1] if sealed else None,
    )


@dataclass(frozen=True)
class ThreadCounters:
    turn: int
    first_position: int
    open_user_messages: int


def replayed_receipt(
    raw: sqlite3.Connection, space: str, receipt_id: str, fingerprint: str
) -> TurnReceipt:
    """What an earlier call with this receipt recorded; a different payload is a conflict."""
    row = raw.execute(
        "SELECT * FROM ingestion_receipts WHERE namespace = ? AND receipt_id = ?",
        (space, receipt_id),
    ).fetchone()
    if row is None:
        raise NotFound(f"no receipt {receipt_id!r} in {space!r}")
    if row["fingerprint"] != fingerprint:
        raise ReceiptConflict(f"receipt {receipt_id!r} was already recorded with different content")
    return TurnReceipt(
        receipt_id=receipt_id,
        replayed=True,
        namespace_turn=row["namespace_turn"],
        thread_turn=row["thread_turn"],
        message_ids=maybe_json(row["message_ids_json"]),
    )


def _bump_space(
    raw: sqlite3.Connection, space: str, defaults: NewSpaceDefaults, now: str
) -> tuple[int, int]:
    """(new namespace turn, block size); creates the namespace on first use."""
    sql = (
        "UPDATE namespaces SET current_turn = current_turn + 1, updated_at = ? "
        "WHERE namespace = ? RETURNING current_turn, block_turn_size"
    )
    row = raw.execute(sql, (now, space)).fetchone()
    if row is None:
        ensure_space(raw, space, defaults, now)
        row = raw.execute(sql, (now, space)).fetchone()
    return int(row[0]), int(row[1])


def _bump_thread(
    raw: sqlite3.Connection,
    space: str,
    thread_id: str,
    messages: Sequence[MessageIn],
    now: str,
) -> ThreadCounters:
    users = sum(1 for m in messages if m.role == "user")
    sql = (
        "UPDATE threads SET turn_count = turn_count + 1, message_count = message_count + ?, "
        "open_user_messages = open_user_messages + ? WHERE namespace = ? AND thread_id = ? "
        "RETURNING turn_count, message_count, open_user_messages"
    )
    params = (len(messages), users, space, thread_id)
    row = raw.execute(sql, params).fetchone()
    if row is None:
        ensure_thread(raw, space, thread_id, now)
        row = raw.execute(sql, params).fetchone()
    return ThreadCounters(int(row[0]), int(row[1]) - len(messages) + 1, int(row[2]))


def _insert_messages(
    raw: sqlite3.Connection,
    space: str,
    thread_id: str,
    thread: ThreadCounters,
    space_turn: int,
    messages: Sequence[MessageIn],
    now: str,
) -> list[str]:
    ids = []
    for offset, message in enumerate(messages):
        message_id = new_id("msg")
        raw.execute(
            "INSERT INTO messages(id, namespace, thread_id, position, turn, namespace_turn, "
            "role, content, tool_calls_json, created_at) VALUES (?,?,?,?,?,?,?,?,?,?)",
            (
                message_id,
                space,
                thread_id,
                thread.first_position + offset,
                thread.turn,
                space_turn,
                message.role,
                message.content,
                traces_json(message.tool_calls),
                iso(message.at) if message.at else now,
            ),
        )
        ids.append(message_id)
    return ids


def _insert_receipt(
    raw: sqlite3.Connection,
    space: str,
    receipt_id: str,
    fingerprint: str,
    thread_id: str,
    space_turn: int,
    thread_turn: int,
    ids: list[str],
    now: str,
) -> None:
    cursor = raw.execute(
        "INSERT INTO ingestion_receipts(namespace, receipt_id, fingerprint, thread_id, "
        "namespace_turn, thread_turn, message_ids_json, created_at) VALUES (?,?,?,?,?,?,?,?) "
        "ON CONFLICT(namespace, receipt_id) DO NOTHING",
        (
            space,
            receipt_id,
            fingerprint,
            thread_id,
            space_turn,
            thread_turn,
            dump_json(ids),
            now,
        ),
    )
    if cursor.rowcount == 0:
        raise ReceiptExists(receipt_id)


def receipt_fingerprint(raw: sqlite3.Connection, space: str, receipt_id: str) -> str | None:
    """The fingerprint ``receipt_id`` was recorded with, None when it was not."""
    row = raw.execute(
        "SELECT fingerprint FROM ingestion_receipts WHERE namespace = ? AND receipt_id = ?",
        (space, receipt_id),
    ).fetchone()
    return None if row is None else str(row[0])


def existing_receipts(raw: sqlite3.Connection, space: str, receipt_ids: list[str]) -> set[str]:
    """Which of ``receipt_ids`` are already recorded in ``namespace`` (900 per query)."""
    found: set[str] = set()
    for start in range(0, len(receipt_ids), 900):
        chunk = receipt_ids[start : start + 900]
        marks = ",".join("?" * len(chunk))
        rows = raw.execute(
            f"SELECT receipt_id FROM ingestion_receipts WHERE namespace = ? "
            f"AND receipt_id IN ({marks})",
            (space, *chunk),
        )
        found.update(row[0] for row in rows)
    return found
