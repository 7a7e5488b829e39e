"""Recording turns: receipts, messages, the FTS index and sealing, in one transaction.

These are plain functions over a ``sqlite3.Connection``; ``Database.write`` runs each
call inside ``BEGIN IMMEDIATE`` so a turn is recorded whole or not at all.
"""

import hashlib
import sqlite3
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from ..errors import InvalidInput, ReceiptConflict
from ..records import MessageIn, TurnReceipt
from ..timeutil import iso
from .rows import dump_json, maybe_json, traces_json
from .search_index import index_messages
from .sealing import seal_ready_tails


@dataclass(frozen=True)
class NamespaceDefaults:
    block_turn_size: int
    block_decay_lambda: float


def new_id(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex}"


def ensure_namespace(
    raw: sqlite3.Connection, namespace: str, defaults: NamespaceDefaults, now: str
) -> None:
    raw.execute(
        "INSERT OR IGNORE INTO namespaces(namespace, block_turn_size, block_decay_lambda, "
        "created_at, updated_at) VALUES (?, ?, ?, ?, ?)",
        (namespace, defaults.block_turn_size, defaults.block_decay_lambda, now, now),
    )


def ensure_thread(raw: sqlite3.Connection, namespace: str, thread_id: str, now: str) -> None:
    raw.execute(
        "INSERT OR IGNORE INTO threads(namespace, thread_id, created_at) VALUES (?, ?, ?)",
        (namespace, thread_id, now),
    )


def turn_fingerprint(thread_id: str, messages: Sequence[MessageIn]) -> str:
    payload = [thread_id] + [
        [m.role, m.content, traces_json(m.tool_calls), m.at and iso(m.at)] for m in messages
    ]
    return hashlib.sha256(dump_json(payload).encode()).hexdigest()


def record_turn(
    raw: sqlite3.Connection,
    namespace: str,
    thread_id: str,
    messages: Sequence[MessageIn],
    at: datetime,
    receipt_id: str,
    defaults: NamespaceDefaults,
) -> TurnReceipt:
    """Append one turn to the thread's open tail, sealing blocks that fill up."""
    if not any(m.role == "user" for m in messages):
        raise InvalidInput("a turn needs at least one user message")
    fingerprint = turn_fingerprint(thread_id, messages)
    replay = _replayed_receipt(raw, namespace, receipt_id, fingerprint)
    if replay is not None:
        return replay
    now = iso(at)
    ensure_namespace(raw, namespace, defaults, now)
    ensure_thread(raw, namespace, thread_id, now)
    namespace_turn = _bump_namespace_turn(raw, namespace, now)
    thread_turn, ids = _insert_turn_messages(raw, namespace, thread_id, messages, now)
    _insert_receipt(raw, namespace, receipt_id, fingerprint, thread_id, namespace_turn, thread_turn, ids, now)
    sealed = seal_ready_tails(raw, namespace, thread_id, now)
    return TurnReceipt(
        receipt_id=receipt_id,
        replayed=False,
        namespace_turn=namespace_turn,
        thread_turn=thread_turn,
        message_ids=ids,
        sealed_block_id=sealed[-1] if sealed else None,
    )


def _replayed_receipt(
    raw: sqlite3.Connection, namespace: str, receipt_id: str, fingerprint: str
) -> TurnReceipt | None:
    row = raw.execute(
        "SELECT * FROM ingestion_receipts WHERE namespace = ? AND receipt_id = ?",
        (namespace, receipt_id),
    ).fetchone()
    if row is None:
        return None
    if row["fingerprint"] != fingerprint:
        raise ReceiptConflict(
            f"receipt {receipt_id!r} was already recorded with different content"
        )
    return TurnReceipt(
        receipt_id=receipt_id,
        replayed=True,
        namespace_turn=row["namespace_turn"],
        thread_turn=row["thread_turn"],
        message_ids=maybe_json(row["message_ids_json"]),
    )


def _bump_namespace_turn(raw: sqlite3.Connection, namespace: str, now: str) -> int:
    row = raw.execute(
        "UPDATE namespaces SET current_turn = current_turn + 1, updated_at = ? "
        "WHERE namespace = ? RETURNING current_turn",
        (now, namespace),
    ).fetchone()
    return int(row[0])


def _insert_turn_messages(
    raw: sqlite3.Connection,
    namespace: str,
    thread_id: str,
    messages: Sequence[MessageIn],
    now: str,
) -> tuple[int, list[str]]:
    users = sum(1 for m in messages if m.role == "user")
    row = raw.execute(
        "UPDATE threads SET turn_count = turn_count + 1, message_count = message_count + ?, "
        "open_user_messages = open_user_messages + ? WHERE namespace = ? AND thread_id = ? "
        "RETURNING turn_count, message_count",
        (len(messages), users, namespace, thread_id),
    ).fetchone()
    thread_turn, first_position = int(row[0]), int(row[1]) - len(messages) + 1
    namespace_turn = raw.execute(
        "SELECT current_turn FROM namespaces WHERE namespace = ?", (namespace,)
    ).fetchone()[0]
    ids = [new_id("msg") for _ in messages]
    rows = [
        (ids[i], namespace, thread_id, first_position + i, thread_turn, namespace_turn,
         m.role, m.content, traces_json(m.tool_calls), iso(m.at) if m.at else now)
        for i, m in enumerate(messages)
    ]
    raw.executemany(
        "INSERT INTO messages(id, namespace, thread_id, position, turn, namespace_turn, role, "
        "content, tool_calls_json, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        rows,
    )
    _index_new_messages(raw, ids, messages)
    return thread_turn, ids


def _index_new_messages(
    raw: sqlite3.Connection, ids: list[str], messages: Sequence[MessageIn]
) -> None:
    placeholders = ",".join("?" * len(ids))
    pks = dict(raw.execute(f"SELECT id, pk FROM messages WHERE id IN ({placeholders})", ids))
    index_messages(raw, [(pks[i], m.content) for i, m in zip(ids, messages, strict=True)])


def _insert_receipt(
    raw: sqlite3.Connection,
    namespace: str,
    receipt_id: str,
    fingerprint: str,
    thread_id: str,
    namespace_turn: int,
    thread_turn: int,
    ids: list[str],
    now: str,
) -> None:
    raw.execute(
        "INSERT INTO ingestion_receipts(namespace, receipt_id, fingerprint, thread_id, "
        "namespace_turn, thread_turn, message_ids_json, created_at) VALUES (?,?,?,?,?,?,?,?)",
        (namespace, receipt_id, fingerprint, thread_id, namespace_turn, thread_turn,
         dump_json(ids), now),
    )
