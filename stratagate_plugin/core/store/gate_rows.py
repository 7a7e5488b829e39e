"""Evidence-gate persistence: batches, adoption receipts, reinforcement, pin/forget flags.

Plain functions over a ``sqlite3.Connection``; callers run writes inside ``Database.write``.
A thread's batches with their receipts are read in one query for the chat's citation
tails. Batch ids are ``batch_<n>`` from a database-wide counter, so they survive restarts and
stay short for the agent. Forget and restore are reversible: restore returns an event to
``superseded`` when it has a successor, else to ``active``.
"""

import json
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..curation.records import Adoption
from ..errors import InvalidInput, NotFound
from ..events.cards import EventCard
from ..events.storage import EventRules
from ..gate.records import Assessment, Batch
from ..gate.trail import BatchUse, EventMark, MessageMark
from ..text.secrets import redact_secrets, redact_value
from .event_rows import VISIBLE, get_event
from .graph_jobs import AGENT_PRIORITY, CONVERSATION_PRIORITY, queue_events
from .graph_writes import strip_event_provenance
from .rows import dump_json, record_from_row
from .search_index import reindex_event


def current_turn(raw: sqlite3.Connection, space: str) -> int:
    """The namespace turn counter (0 for a namespace without recorded turns)."""
    row = raw.execute(
        "SELECT current_turn FROM namespaces WHERE namespace = ?", (space,)
    ).fetchone()
    return int(row[0]) if row else 0


# -- batches -----------------------------------------------------------------------------


def batch_from_row(row: sqlite3.Row) -> Batch:
    return record_from_row(Batch, row)


def list_batches(
    raw: sqlite3.Connection, space: str, thread_id: str, status: str | None = None
) -> list[Batch]:
    """The thread's batches by sequence (optionally only those with ``status``)."""
    rows = raw.execute(
        "SELECT * FROM batches WHERE namespace = ? AND thread_id = ? "
        "AND (? IS NULL OR status = ?) ORDER BY sequence",
        (space, thread_id, status, status),
    ).fetchall()
    return [batch_from_row(row) for row in rows]


def batch_choices(
    raw: sqlite3.Connection, space: str, thread_id: str, batch_id: str | None
) -> list[Batch]:
    """The named batch of the thread (the latest when ``batch_id`` is None), else every
    batch of the thread: what ``gate.select_batch`` chooses from, loading only the batch
    needed (all of them only for its error)."""
    found = raw.execute(
        "SELECT * FROM batches WHERE namespace = ? AND thread_id = ? AND (? IS NULL OR id = ?) "
        "ORDER BY sequence DESC LIMIT 1",
        (space, thread_id, batch_id, batch_id),
    ).fetchall()
    batches = [batch_from_row(row) for row in found]
    return batches or list_batches(raw, space, thread_id)


def latest_batch_id(raw: sqlite3.Connection, space: str, thread_id: str) -> str | None:
    row = raw.execute(
        "SELECT id FROM batches WHERE namespace = ? AND thread_id = ? ORDER BY sequence DESC "
        "LIMIT 1",
        (space, thread_id),
    ).fetchone()
    return None if row is None else str(row[0])


def batch_turn(raw: sqlite3.Connection, batch_id: str) -> int:
    """The namespace turn at which the batch was opened."""
    row = raw.execute("SELECT turn FROM batches WHERE id = ?", (batch_id,)).fetchone()
    if row is None:
        raise NotFound(f"no batch with id {batch_id!r}")
    return int(row[0])


def insert_batch(
    raw: sqlite3.Connection,
    space: str,
    thread_id: str,
    tool: str,
    evidence_refs: Sequence[str],
    titles: Mapping[str, str],
    now: str,
) -> Batch:
    """A new unresolved batch, last in its thread, stamped with the namespace turn."""
    refs = list(dict.fromkeys(evidence_refs))
    (number,) = raw.execute("SELECT COALESCE(MAX(rowid), 0) + 1 FROM batches").fetchone()
    (sequence,) = raw.execute(
        "SELECT COALESCE(MAX(sequence), 0) + 1 FROM batches WHERE namespace = ? AND thread_id = ?",
        (space, thread_id),
    ).fetchone()
    batch_id = f"batch_{number}"
    raw.execute(
        "INSERT INTO batches(id, namespace, thread_id, sequence, tool, evidence_refs_json, "
        "titles_json, turn, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?)",
        (
            batch_id,
            space,
            thread_id,
            sequence,
            tool,
            dump_json(refs),
            dump_json({ref: titles[ref] for ref in refs if ref in titles}),
            current_turn(raw, space),
            now,
            now,
        ),
    )
    return _get_batch(raw, batch_id)


def _get_batch(raw: sqlite3.Connection, batch_id: str) -> Batch:
    row = raw.execute("SELECT * FROM batches WHERE id = ?", (batch_id,)).fetchone()
    if row is None:
        raise NotFound(f"no batch with id {batch_id!r}")
    return batch_from_row(row)


def save_assessment(raw: sqlite3.Connection, assessment: Assessment, now: str) -> Batch:
    """Store (overwrite) the batch's assessment."""
    raw.execute(
        "UPDATE batches SET assessment_json = ?, updated_at = ? WHERE id = ?",
        (assessment.model_dump_json(), now, assessment.batch_id),
    )
    return _get_batch(raw, assessment.batch_id)


def mark_batch_recorded(raw: sqlite3.Connection, batch_id: str, now: str) -> Batch:
    raw.execute(
        "UPDATE batches SET status = 'recorded', updated_at = ? WHERE id = ?", (now, batch_id)
    )
    return _get_batch(raw, batch_id)


# -- receipts ----------------------------------------------------------------------------


def receipt_row(raw: sqlite3.Connection, space: str, receipt_id: str) -> sqlite3.Row | None:
    """The stored receipt (``batch_id``, ``payload``, ``event_ids_json`` …) or None."""
    row: sqlite3.Row | None = raw.execute(
        "SELECT * FROM usage_receipts WHERE namespace = ? AND receipt_id = ?",
        (space, receipt_id),
    ).fetchone()
    return row


def insert_receipt(
    raw: sqlite3.Connection,
    space: str,
    receipt_id: str,
    batch_id: str,
    payload: str,
    event_ids: Sequence[str],
    audit: dict[str, Any],
    now: str,
) -> None:
    raw.execute(
        "INSERT INTO usage_receipts(namespace, receipt_id, batch_id, payload, event_ids_json, "
        "audit_json, created_at) VALUES (?,?,?,?,?,?,?)",
        (
            space,
            receipt_id,
            batch_id,
            payload,
            dump_json(list(event_ids)),
            dump_json(audit),
            now,
        ),
    )


def adoptions_of(raw: sqlite3.Connection, event_id: str) -> list[Adoption]:
    """Every adoption receipt naming the event, oldest first, with its batch's tool and turn
    (a scan of the receipts: a person's ``show``, not a hot path)."""
    rows = raw.execute(
        "SELECT u.receipt_id, u.batch_id, u.audit_json, u.created_at, b.tool, b.turn "
        "FROM usage_receipts u LEFT JOIN batches b ON b.id = u.batch_id "
        "WHERE EXISTS (SELECT 1 FROM json_each(u.event_ids_json) j WHERE j.value = ?) "
        "ORDER BY u.created_at, u.rowid",
        (event_id,),
    ).fetchall()
    found = []
    for row in rows:
        audit = json.loads(row["audit_json"])
        found.append(
            Adoption(
                receipt_id=row["receipt_id"],
                batch_id=row["batch_id"],
                thread_id=audit.get("thread_id"),
                turn=audit.get("turn", row["turn"]),
                tool=row["tool"],
                verdict=audit.get("verdict"),
                created_at=row["created_at"],
            )
        )
    return found


# -- reinforcement and flags ---------------------------------------------------------------


def reinforce_events(
    raw: sqlite3.Connection, space: str, event_ids: Iterable[str], turn: int, now: str
) -> list[str]:
    """``mention_count + 1`` and ``last_adopted_turn = turn`` for each live event, once each.

    Missing, foreign-namespace, forgotten and archived events are skipped; the ids actually
    reinforced are returned in input order.
    """
    done: list[str] = []
    for event_id in dict.fromkeys(event_ids):
        cursor = raw.execute(
            "UPDATE events SET mention_count = mention_count + 1, last_adopted_turn = ?, "
            "updated_at = ? WHERE id = ? AND namespace = ? AND status IN (?, ?)",
            (turn, now, event_id, space, *VISIBLE),
        )
        if cursor.rowcount:
            done.append(event_id)
    return done


def set_pinned(raw: sqlite3.Connection, event_id: str, pinned: bool, now: str) -> EventCard:
    get_event(raw, event_id)
    raw.execute(
        "UPDATE events SET pinned = ?, updated_at = ? WHERE id = ?", (int(pinned), now, event_id)
    )
    return get_event(raw, event_id)


def forget(raw: sqlite3.Connection, event_id: str, now: str) -> EventCard:
    """Hide the event from every view; its sources and links stay (idempotent)."""
    card = get_event(raw, event_id)
    if card.status in VISIBLE:
        raw.execute(
            "UPDATE events SET status = 'forgotten', updated_at = ? WHERE id = ?", (now, event_id)
        )
        strip_event_provenance(raw, [event_id])
    elif card.status != "forgotten":
        raise InvalidInput(f"event {event_id} is {card.status}; only live events can be forgotten")
    return get_event(raw, event_id)


def restore(raw: sqlite3.Connection, event_id: str, now: str) -> EventCard:
    """Undo ``forget``: superseded again when it has a successor, else active (idempotent);
    its graph provenance, stripped by the forget, is projected again."""
    card = get_event(raw, event_id)
    if card.status == "forgotten":
        status = "superseded" if card.superseded_by else "active"
        raw.execute(
            "UPDATE events SET status = ?, updated_at = ? WHERE id = ?", (status, now, event_id)
        )
        priority = AGENT_PRIORITY if card.pool == "agent" else CONVERSATION_PRIORITY
        queue_events(raw, card.namespace, [event_id], priority, now)
    return get_event(raw, event_id)


def merge_into(
    raw: sqlite3.Connection,
    event_id: str,
    summary: str,
    tags: Sequence[str],
    turn: int,
    now: str,
    rules: EventRules,
) -> None:
    """Rewrite a merge target's summary and tags, reinforce it once and re-index its text."""
    raw.execute(
        "UPDATE events SET summary = ?, tags_json = ?, mention_count = mention_count + 1, "
        "last_adopted_turn = ?, updated_at = ? WHERE id = ?",
        (redact_secrets(summary), dump_json(redact_value(list(tags))), turn, now, event_id),
    )
    reindex_event(raw, event_id, rules)


# -- a thread's evidence trail (the chat's citation tails) ---------------------------------


def thread_uses(raw: sqlite3.Connection, space: str, thread_id: str) -> list[BatchUse]:
    """Every batch of the thread by sequence with its receipt, if recorded: one query over
    the ``(namespace, thread_id, sequence)`` key and the receipts' batch index."""
    rows = raw.execute(
        "SELECT b.id, b.sequence, b.tool, b.evidence_refs_json, b.titles_json, b.status, "
        "b.turn AS opened_turn, b.created_at, u.receipt_id, u.audit_json, "
        "u.created_at AS recorded_at FROM batches b LEFT JOIN usage_receipts u "
        "ON u.batch_id = b.id AND u.namespace = b.namespace "
        "WHERE b.namespace = ? AND b.thread_id = ? ORDER BY b.sequence",
        (space, thread_id),
    ).fetchall()
    uses = []
    for row in rows:
        audit = json.loads(row["audit_json"]) if row["audit_json"] else {}
        adopted = tuple(audit.get("evidence_refs") or ())
        uses.append(record_from_row(BatchUse, row, adopted_refs=adopted))
    return uses


def event_marks(raw: sqlite3.Connection, event_ids: Sequence[str]) -> dict[str, EventMark]:
    """Title, status and times of those of ``event_ids`` that exist, whatever their status
    (by the events' unique id index)."""
    rows = raw.execute(
        "SELECT id, title, status, json_extract(temporal_json, '$.happened_start') AS "
        "happened_start, json_extract(temporal_json, '$.mentioned_at') AS mentioned_at "
        "FROM events WHERE id IN (SELECT value FROM json_each(?))",
        (json.dumps(list(event_ids)),),
    ).fetchall()
    return {row["id"]: record_from_row(EventMark, row) for row in rows}


def message_marks(
    raw: sqlite3.Connection, message_ids: Sequence[str], chars: int
) -> dict[str, MessageMark]:
    """Role, time and the first ``chars`` characters of those of ``message_ids`` that exist."""
    rows = raw.execute(
        "SELECT id, role, substr(content, 1, ?) AS text, created_at FROM messages "
        "WHERE id IN (SELECT value FROM json_each(?))",
        (chars, json.dumps(list(message_ids))),
    ).fetchall()
    return {row["id"]: record_from_row(MessageMark, row) for row in rows}
