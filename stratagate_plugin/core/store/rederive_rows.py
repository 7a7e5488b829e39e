"""A block the offline model derived because the model failed, derived again by the model:
which of its cards may go, and the replacement, in the caller's one transaction.

A person's action on a card is never lost to a re-derivation: a card that is pinned,
forgotten, restored or otherwise acted on, superseded or corrected, adopted in a reply,
restated by a later block or linked from another card is *kept* (and said so); only the
untouched ones are removed (``import_batch_rows.remove_events``: sources, search rows,
graph provenance, chapters, links) before the model's cards are written
(``store/sqlite/derivation.py``'s ``replace_offline``).
"""

import sqlite3

from ..clock import iso
from ..records import EXTRACTION_JOB, SUMMARY_JOB, Block
from .derivation_marks import OFFLINE_FALLBACK

_REASONS = (  # (why kept, SQL true for a card ``e`` that must be kept)
    ("not active ({status})", "e.status != 'active'"),
    ("pinned", "e.pinned != 0"),
    ("restated later", "e.mention_count > 1"),
    (
        "a memory action",
        "EXISTS (SELECT 1 FROM memory_actions a WHERE a.target_id = e.id)",
    ),
    (
        "adopted in a reply",
        "EXISTS (SELECT 1 FROM usage_receipts u, json_each(u.event_ids_json) j "
        "WHERE u.namespace = e.namespace AND j.value = e.id)",
    ),
    (
        "linked by another card",
        "EXISTS (SELECT 1 FROM events o, json_each(o.temporal_json) t, json_each(t.value) j "
        "WHERE o.namespace = e.namespace AND o.id != e.id AND t.type = 'array' "
        "AND j.value = e.id)",
    ),
)


def unchanged(raw: sqlite3.Connection, block: Block) -> bool:
    """Is the block still as read (offline-fallback, same update, no job under way)?"""
    row = raw.execute(
        "SELECT 1 FROM blocks b WHERE b.id = ? AND b.derived_by = ? AND b.updated_at = ? "
        "AND NOT EXISTS (SELECT 1 FROM jobs j WHERE j.target_id = b.id "
        "AND j.status IN ('pending', 'running'))",
        (block.id, OFFLINE_FALLBACK, iso(block.updated_at)),
    ).fetchone()
    return row is not None


def fallback_cards(raw: sqlite3.Connection, block_id: str) -> tuple[list[str], dict[str, str]]:
    """The block's offline-fallback cards: those nobody acted on, and the kept ones with why."""
    rows = raw.execute(
        "SELECT id, status FROM events WHERE source_block_id = ? AND derived_by = ? ORDER BY pk",
        (block_id, OFFLINE_FALLBACK),
    ).fetchall()
    free, kept = [], {}
    for event_id, status in rows:
        reason = _kept_because(raw, event_id)
        if reason is None:
            free.append(event_id)
        else:
            kept[event_id] = reason.format(status=status)
    return free, kept


def _kept_because(raw: sqlite3.Connection, event_id: str) -> str | None:
    for reason, condition in _REASONS:
        found = raw.execute(
            f"SELECT 1 FROM events e WHERE e.id = ? AND {condition}", (event_id,)
        ).fetchone()
        if found is not None:
            return reason
    return None


def finish_extraction(
    raw: sqlite3.Connection, block_id: str, by: str, detail: str, now: str
) -> None:
    """The block's extraction job now names the model as its author, and what it did."""
    raw.execute(
        "UPDATE jobs SET derived_by = ?, last_error = NULL, detail = ?, updated_at = ? "
        "WHERE kind = ? AND target_id = ?",
        (by, detail, now, EXTRACTION_JOB, block_id),
    )


def mark_summary_job(raw: sqlite3.Connection, block_id: str, by: str, now: str) -> None:
    raw.execute(
        "UPDATE jobs SET derived_by = ?, last_error = NULL, updated_at = ? "
        "WHERE kind = ? AND target_id = ?",
        (by, now, SUMMARY_JOB, block_id),
    )
