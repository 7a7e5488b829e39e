"""A person's memory actions in the store: their receipts, the reads ``show`` and ``search``
make of one item, and purging an event's source messages.

A purge runs in the caller's one transaction: the messages keep their rows (block, position,
id) with a tombstone for text and no tool traces, leave the FTS index, and every view built
on their words is redone or blanked — the blocks' L4/L3 recomputed, their L0–L2 blanked and
the summary job queued again (the extraction is not re-run, so no event is formed twice),
and every event citing them forgotten with its texts blanked, in the search index and in
the titles batches and adoption receipts kept of it. What is recomputed (the layers, what
stays of a card's temporal fields, a receipt's payload) the caller's rules say
(``curation.storage.PurgeRules``): the store reads, asks them and writes.
"""

import json
import sqlite3
from collections.abc import Sequence
from typing import Any

from ..clock import parse_iso
from ..curation.records import (
    PURGED_TITLE,
    Actor,
    EventBrief,
    MemoryAction,
    MessageCard,
    PurgePlan,
    ReceiptKind,
)
from ..curation.storage import PurgeRules
from ..errors import NotFound
from ..events.storage import EventRules
from ..ids import new_id
from . import block_rows, jobs
from .event_rows import VISIBLE, get_event, locked_temporal
from .graph_writes import strip_event_provenance
from .rows import dump_json, message_from_row, record_from_row
from .search_index import reindex_event, unindex_messages

_IDS = "(SELECT value FROM json_each(?))"
EVERY_STATUS = (*VISIBLE, "forgotten", "archived")


# -- receipts ----------------------------------------------------------------------------


def insert_action(
    raw: sqlite3.Connection,
    space: str,
    kind: ReceiptKind,
    target_id: str,
    actor: Actor,
    detail: dict[str, Any],
    now: str,
) -> MemoryAction:
    action_id = new_id("act")
    raw.execute(
        "INSERT INTO memory_actions(id, namespace, kind, target_id, actor, detail_json, "
        "created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
        (action_id, space, kind, target_id, actor, dump_json(detail), now),
    )
    return list_actions(raw, action_id=action_id)[0]


def list_actions(
    raw: sqlite3.Connection,
    target_id: str | None = None,
    action_id: str | None = None,
    limit: int = 100,
) -> list[MemoryAction]:
    """Receipts oldest first: of one target, one receipt, or (neither given) the newest."""
    rows = raw.execute(
        "SELECT * FROM (SELECT * FROM memory_actions WHERE (? IS NULL OR target_id = ?) "
        "AND (? IS NULL OR id = ?) ORDER BY created_at DESC, id DESC LIMIT ?) "
        "ORDER BY created_at, id",
        (target_id, target_id, action_id, action_id, limit),
    ).fetchall()
    return [record_from_row(MemoryAction, row) for row in rows]


# -- reading one item ----------------------------------------------------------------------


def message_cards(raw: sqlite3.Connection, message_ids: Sequence[str]) -> list[MessageCard]:
    """The messages in the order asked (unknown ids left out), each with the live events
    citing it: one read for the messages, one for the citations."""
    ids = json.dumps(list(message_ids))
    rows = raw.execute(f"SELECT * FROM messages WHERE id IN {_IDS}", (ids,)).fetchall()
    by_id = {row["id"]: row for row in rows}
    citing = citing_events(raw, list(by_id))
    return [
        MessageCard(
            message=message_from_row(by_id[key]),
            purged_at=by_id[key]["purged_at"],
            events=citing.get(key, []),
        )
        for key in message_ids
        if key in by_id
    ]


def citing_events(
    raw: sqlite3.Connection, message_ids: Sequence[str], statuses: Sequence[str] = VISIBLE
) -> dict[str, list[EventBrief]]:
    """Per message, the events with one of ``statuses`` that cite it (oldest event first)."""
    marks = ",".join("?" * len(statuses))
    rows = raw.execute(
        "SELECT s.message_id, e.id, e.title, e.status, e.pinned FROM event_sources s "
        f"JOIN events e ON e.id = s.event_id WHERE s.message_id IN {_IDS} "
        f"AND e.status IN ({marks}) ORDER BY e.pk",
        (json.dumps(list(message_ids)), *statuses),
    ).fetchall()
    found: dict[str, list[EventBrief]] = {}
    for message_id, event_id, title, status, pinned in rows:
        brief = EventBrief(id=event_id, title=title, status=status, pinned=bool(pinned))
        found.setdefault(message_id, []).append(brief)
    return found


def briefs(raw: sqlite3.Connection, event_ids: Sequence[str]) -> dict[str, EventBrief]:
    """Id, title and status of those of ``event_ids`` that exist, whatever their status."""
    rows = raw.execute(
        f"SELECT id, title, status FROM events WHERE id IN {_IDS}", (json.dumps(list(event_ids)),)
    ).fetchall()
    return {row[0]: EventBrief(id=row[0], title=row[1], status=row[2]) for row in rows}


def block_exists(raw: sqlite3.Connection, block_id: str) -> bool:
    return raw.execute("SELECT 1 FROM blocks WHERE id = ?", (block_id,)).fetchone() is not None


def block_event_briefs(raw: sqlite3.Connection, block_id: str) -> list[EventBrief]:
    """The live events formed from the block, in the order they were formed."""
    rows = raw.execute(
        "SELECT id, title, status FROM events WHERE source_block_id = ? AND status IN (?, ?) "
        "ORDER BY pk",
        (block_id, *VISIBLE),
    ).fetchall()
    return [EventBrief(id=row[0], title=row[1], status=row[2]) for row in rows]


def purged_sources(raw: sqlite3.Connection, event_id: str) -> list[str]:
    """The event's source messages whose text was purged."""
    rows = raw.execute(
        "SELECT m.id FROM event_sources s JOIN messages m ON m.id = s.message_id "
        "WHERE s.event_id = ? AND m.purged_at IS NOT NULL ORDER BY s.position",
        (event_id,),
    ).fetchall()
    return [row[0] for row in rows]


# -- corrections and conflicts ------------------------------------------------------------


def set_temporal(
    raw: sqlite3.Connection, event_id: str, temporal: dict[str, Any], now: str, rules: EventRules
) -> None:
    """Store the event's edited temporal fields (links) and re-index its text."""
    raw.execute(
        "UPDATE events SET temporal_json = ?, updated_at = ? WHERE id = ?",
        (dump_json(temporal), now, event_id),
    )
    reindex_event(raw, event_id, rules)


def supersede(raw: sqlite3.Connection, older_id: str, newer_id: str, cap: float, now: str) -> None:
    """``older_id`` becomes history under ``newer_id``, its weight capped at ``cap`` (the
    cap every superseded card has, ``events.weights``)."""
    raw.execute(
        "UPDATE events SET status = 'superseded', superseded_by = ?, forced_cap = ?, "
        "updated_at = ? WHERE id = ?",
        (newer_id, cap, now, older_id),
    )


# -- purge -------------------------------------------------------------------------------


def purge_plan(raw: sqlite3.Connection, event_id: str) -> PurgePlan:
    card = get_event(raw, event_id)
    ids = json.dumps(card.source_message_ids)
    rows = raw.execute(
        f"SELECT DISTINCT block_id FROM messages WHERE id IN {_IDS} AND block_id IS NOT NULL "
        "ORDER BY block_id",
        (ids,),
    ).fetchall()
    citing = citing_events(raw, card.source_message_ids, EVERY_STATUS)  # hidden ones too
    others = {e.id: e for found in citing.values() for e in found if e.id != event_id}
    return PurgePlan(
        event_id=event_id,
        namespace=card.namespace,
        message_ids=card.source_message_ids,
        block_ids=[row[0] for row in rows],
        also_forgotten=list(others.values()),
    )


def purge(
    raw: sqlite3.Connection,
    plan: PurgePlan,
    text: str,
    now: str,
    rules: PurgeRules,
    events: EventRules,
) -> None:
    """Tombstone the plan's messages (``text`` for their words) and redo or blank every
    view of their words by ``rules``; a message purged before keeps its first tombstone
    (and its blocks are not derived again)."""
    fresh = raw.execute(
        f"SELECT id, fts_rowid, block_id FROM messages WHERE id IN {_IDS} AND purged_at IS NULL",
        (json.dumps(plan.message_ids),),
    ).fetchall()
    unindex_messages(raw, [int(row[1]) for row in fresh if row[1] is not None])
    raw.executemany(
        "UPDATE messages SET content = ?, tool_calls_json = '[]', fts_rowid = NULL, "
        "purged_at = ? WHERE id = ?",
        [(text, now, row[0]) for row in fresh],
    )
    for block_id in dict.fromkeys(row[2] for row in fresh if row[2] is not None):
        rederive_block(raw, block_id, now, rules)
    for event_id in [plan.event_id, *(event.id for event in plan.also_forgotten)]:
        blank_event(raw, event_id, text, now, rules, events)


def rederive_block(raw: sqlite3.Connection, block_id: str, now: str, rules: PurgeRules) -> None:
    """L4/L3 (and L5's size) again from the tombstoned L5; L0–L2 blank until the summary job
    runs again."""
    readable, condensed, tokens = rules.block_layers(block_rows.block_messages(raw, block_id))
    raw.execute(
        "UPDATE blocks SET l4_readable = ?, l3_condensed = ?, raw_tokens = ?, l0_title = NULL, "
        "l0_tags_json = NULL, l1_summary = NULL, l2_keypoints_json = NULL, updated_at = ? "
        "WHERE id = ?",
        (readable, condensed, tokens, now, block_id),
    )
    jobs.requeue_block(raw, block_id, parse_iso(now))


def blank_event(
    raw: sqlite3.Connection,
    event_id: str,
    text: str,
    now: str,
    rules: PurgeRules,
    events: EventRules,
) -> None:
    """The event forgotten with its texts blanked (``text`` for its summary), in the search
    index, the graph's provenance and wherever its title was recorded."""
    temporal = locked_temporal(raw, event_id)
    if temporal is None:
        raise NotFound(f"no event with id {event_id!r}")
    raw.execute(
        "UPDATE events SET title = ?, summary = ?, tags_json = '[]', quotes_json = '[]', "
        "catalog_hints_json = '[]', temporal_json = ?, updated_at = ?, status = CASE WHEN "
        "status IN ('active', 'superseded') THEN 'forgotten' ELSE status END WHERE id = ?",
        (PURGED_TITLE, text, dump_json(rules.purged_temporal(temporal)), now, event_id),
    )
    reindex_event(raw, event_id, events)
    strip_event_provenance(raw, [event_id])
    _blank_recorded_titles(raw, event_id, rules)


def _blank_recorded_titles(raw: sqlite3.Connection, event_id: str, rules: PurgeRules) -> None:
    """The event's title as batches and adoption receipts keep it; a receipt's payload is
    recomputed from its audit, so an identical replay is still recognised."""
    key = f'$."event:{event_id}"'
    raw.execute(
        "UPDATE batches SET titles_json = json_set(titles_json, ?, ?) "
        "WHERE json_extract(titles_json, ?) IS NOT NULL",
        (key, PURGED_TITLE, key),
    )
    receipts = raw.execute(
        "SELECT u.rowid, u.event_ids_json, u.audit_json FROM usage_receipts u "
        "WHERE EXISTS (SELECT 1 FROM json_each(u.event_ids_json) j WHERE j.value = ?)",
        (event_id,),
    ).fetchall()
    for rowid, event_ids_json, audit_json in receipts:
        audit = json.loads(audit_json)
        for citation in audit.get("citations", []):
            if citation.get("kind") == "event" and citation.get("id") == event_id:
                citation["title"] = PURGED_TITLE
        payload = rules.receipt_payload(json.loads(event_ids_json), audit)
        raw.execute(
            "UPDATE usage_receipts SET audit_json = ?, payload = ? WHERE rowid = ?",
            (dump_json(audit), payload, rowid),
        )
