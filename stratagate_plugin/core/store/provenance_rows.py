"""A turn's truthful provenance, written in the transaction that records the turn.

Two facts are only known once a turn is recorded, and both are settled right there:

- which user message an event written *during* the turn cites: ``memory_remember`` runs
  before its turn is recorded, so its event waits in ``pending_citations`` and the next
  recorded turn of its thread resolves it (no moment in which it cites other words);
- whether the turn's answer was composed from memory: the evidence gate's receipts for
  the thread since its previous turn name the refs the answer adopted. Such a message is
  marked (``composed_from_memory``), never a new event's source, and ranks below the words
  it repeats.
"""

import json
import sqlite3
from collections.abc import Sequence

from ..text.search_terms import query_tokens
from .rows import dump_json


def add_pending_citation(
    raw: sqlite3.Connection, space: str, thread_id: str, event_id: str, now: str
) -> None:
    """``event_id`` will cite the user message of the next turn recorded in the thread."""
    raw.execute(
        "INSERT OR IGNORE INTO pending_citations(event_id, namespace, thread_id, created_at) "
        "VALUES (?, ?, ?, ?)",
        (event_id, space, thread_id, now),
    )


def pending_event_ids(raw: sqlite3.Connection, space: str, thread_id: str) -> list[str]:
    rows = raw.execute(
        "SELECT event_id FROM pending_citations WHERE namespace = ? AND thread_id = ? "
        "ORDER BY created_at, event_id",
        (space, thread_id),
    )
    return [row[0] for row in rows]


def previous_turn(raw: sqlite3.Connection, space: str, thread_id: str) -> int:
    """The namespace turn of the thread's newest recorded message (0 before its first)."""
    row = raw.execute(
        "SELECT namespace_turn FROM messages WHERE namespace = ? AND thread_id = ? "
        "ORDER BY position DESC LIMIT 1",
        (space, thread_id),
    ).fetchone()
    return int(row[0]) if row else 0


def settle_turn(
    raw: sqlite3.Connection,
    space: str,
    threads: Sequence[str],
    since_turn: int,
    spoken: Sequence[tuple[str, str, str]],
) -> None:
    """Cite the turn's user message for the threads' pending events and mark its answer
    when it was composed from memory. ``spoken`` is (id, role, content) of the turn's
    messages; ``threads`` the recorded thread and the one its tool calls ran under."""
    users = [(mid, content) for mid, role, content in spoken if role == "user"]
    for thread in dict.fromkeys(threads):
        for event_id in pending_event_ids(raw, space, thread):
            _cite(raw, event_id, _citing_message(raw, event_id, users))
        raw.execute(
            "DELETE FROM pending_citations WHERE namespace = ? AND thread_id = ?",
            (space, thread),
        )
    refs = adopted_refs(raw, space, threads, since_turn)
    answers = [mid for mid, role, content in spoken if role == "assistant" and content.strip()]
    if refs and answers:
        raw.executemany(
            "UPDATE messages SET composed_from_memory = 1, adopted_refs_json = ? WHERE id = ?",
            [(dump_json(refs), mid) for mid in answers],
        )


def adopted_refs(
    raw: sqlite3.Connection, space: str, threads: Sequence[str], since_turn: int
) -> list[str]:
    """The evidence refs that usage receipts adopted in batches the threads opened at or
    after namespace turn ``since_turn`` (the previous turn's): what this answer used."""
    refs: list[str] = []
    for thread in dict.fromkeys(threads):
        rows = raw.execute(
            "SELECT u.audit_json FROM batches b JOIN usage_receipts u ON u.batch_id = b.id "
            "WHERE b.namespace = ? AND b.thread_id = ? AND b.turn >= ? ORDER BY b.sequence",
            (space, thread, since_turn),
        )
        for (audit,) in rows:
            refs += [str(ref) for ref in json.loads(audit).get("evidence_refs") or []]
    return list(dict.fromkeys(refs))


def _citing_message(
    raw: sqlite3.Connection, event_id: str, users: Sequence[tuple[str, str]]
) -> str | None:
    """Of the turn's user messages, the last one sharing a content term with the event
    (a turn usually has one); else the last of them."""
    if not users:
        return None
    row = raw.execute("SELECT title, summary FROM events WHERE id = ?", (event_id,)).fetchone()
    if row is None:
        return None
    terms = set(query_tokens(f"{row[0]} {row[1]}"))
    sharing = [mid for mid, content in users if terms & set(query_tokens(content))]
    return (sharing or [mid for mid, _ in users])[-1]


def _cite(raw: sqlite3.Connection, event_id: str, message_id: str | None) -> None:
    """Add ``message_id`` to the event's sources (after any it already has)."""
    if message_id is None:
        return
    raw.execute(
        "INSERT OR IGNORE INTO event_sources(event_id, message_id, position) "
        "SELECT ?, ?, COALESCE(MAX(position), -1) + 1 FROM event_sources WHERE event_id = ?",
        (event_id, message_id, event_id),
    )
