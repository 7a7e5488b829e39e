"""An import batch in the store (spec §11.4): its permanent source block, and undoing it.

The source block is made whole in the commit's transaction: thread
``external-import:<blockId>``, the import text as one user message (indexed for raw search
like any sealed message), ready at once with the views the importer made by rule
(``importer/source_block.py``) and ``should_extract`` off, so no summary or extraction job
ever runs on it.

Undo, in one transaction, deletes the batch's events and everything that points at them:
their sources, search rows, queued topic work, graph provenance (records left citing
nothing are deleted), projection batches left empty with their jobs (a running one too:
its worker then finds the job gone and drops its result), relation ids in other events,
their ids in usage receipts (a receipt that adopted only them is deleted). They leave
their chapters here too, not at the next topic sync: a chapter holding one has its words
cleared (pending, rebuilt by the next pass from the members left) and a chapter left
empty is deleted, so no listing names an event that is gone. What they superseded is
active again unless something else still supersedes it; then the source block, its
message and its thread are deleted.
"""

import json
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass

from ..events.cards import RELATION_LISTS
from ..importer.storage import SourceBlock
from ..records import GRAPH_JOB, IMPORT_THREAD_PREFIX
from . import block_rows, topic_rows
from .event_rows import locked_temporals
from .graph_writes import strip_event_provenance
from .rows import dump_json
from .sealing import next_fts_rowid
from .search_index import index_messages, unindex_events, unindex_messages
from .turns import NewSpaceDefaults, ensure_space, ensure_thread

THREAD_PREFIX = IMPORT_THREAD_PREFIX  # raw search leaves these threads out


def current_turn(raw: sqlite3.Connection, space: str) -> int:
    """The space's turn now (0 for a space not made yet)."""
    row = raw.execute(
        "SELECT current_turn FROM namespaces WHERE namespace = ?", (space,)
    ).fetchone()
    return 0 if row is None else int(row[0])


def insert_source_block(
    raw: sqlite3.Connection,
    space: str,
    source: SourceBlock,
    defaults: NewSpaceDefaults,
    now: str,
) -> int:
    """The batch's ready source block holding its text as one user message; its turn."""
    ensure_space(raw, space, defaults, now)
    block_id, message_id, text = source.block_id, source.message_id, source.text
    thread_id = f"{THREAD_PREFIX}{block_id}"
    ensure_thread(raw, space, thread_id, now)
    turn = current_turn(raw, space)
    fts_rowid = next_fts_rowid(raw)
    raw.execute(
        "INSERT INTO messages(id, namespace, thread_id, position, turn, namespace_turn, role, "
        "content, created_at) VALUES (?, ?, ?, 1, 1, ?, 'user', ?, ?)",
        (message_id, space, thread_id, turn, text, now),
    )
    sequence = raw.execute(
        "UPDATE namespaces SET block_count = block_count + 1, updated_at = ? "
        "WHERE namespace = ? RETURNING block_count",
        (now, space),
    ).fetchone()[0]
    raw.execute(
        "INSERT INTO blocks(id, namespace, thread_id, sequence, thread_sequence, start_turn, "
        "end_turn, l4_readable, l3_condensed, raw_tokens, should_extract, created_at, "
        "updated_at) VALUES (?, ?, ?, ?, 1, 1, 1, ?, ?, ?, 0, ?, ?)",
        (
            block_id,
            space,
            thread_id,
            sequence,
            source.readable,
            source.condensed,
            source.raw_tokens,
            now,
            now,
        ),
    )
    raw.execute(
        "UPDATE threads SET turn_count = 1, message_count = 1, sealed_position = 1, "
        "block_count = 1 WHERE namespace = ? AND thread_id = ?",
        (space, thread_id),
    )
    raw.execute(
        "UPDATE messages SET block_id = ?, fts_rowid = ? WHERE id = ?",
        (block_id, fts_rowid, message_id),
    )
    index_messages(raw, space, [(fts_rowid, text)])
    block_rows.mark_ready(raw, block_id, now, source.derived)
    return turn


def batch_event_ids(raw: sqlite3.Connection, block_id: str) -> list[str]:
    rows = raw.execute("SELECT id FROM events WHERE source_block_id = ? ORDER BY pk", (block_id,))
    return [row[0] for row in rows]


@dataclass(frozen=True)
class Removed:
    event_ids: list[str]
    restored_ids: list[str]
    graph_node_ids: list[str]


def remove_batch(raw: sqlite3.Connection, block_id: str, now: str) -> Removed:
    """Undo the batch whose source block is ``block_id`` (see the module docstring)."""
    removed = remove_events(raw, batch_event_ids(raw, block_id), now)
    _delete_block(raw, block_id)
    return removed


def remove_events(raw: sqlite3.Connection, ids: list[str], now: str) -> Removed:
    """Delete these events and everything pointing at them (the module docstring's undo
    without the block; also what a re-derivation replaces, ``rederive_rows``)."""
    nodes = strip_event_provenance(raw, ids)
    _drop_projection(raw, ids)
    restored = _restore_superseded(raw, ids, now)
    _scrub_links(raw, ids, now)
    _scrub_receipts(raw, ids)
    _leave_chapters(raw, ids, now)
    _delete_events(raw, ids)
    return Removed(ids, restored, nodes)


def _marks(ids: Sequence[str]) -> str:
    return ",".join("?" * len(ids))


def _drop_projection(raw: sqlite3.Connection, ids: Sequence[str]) -> None:
    """Out of graph batches; a batch left empty goes with its job, even a running one (its
    worker's commit checks that it still holds the job, so nothing it made is written)."""
    if not ids:
        return
    batches = [
        row[0]
        for row in raw.execute(
            f"SELECT DISTINCT batch_id FROM graph_batch_events WHERE event_id IN ({_marks(ids)})",
            list(ids),
        )
    ]
    raw.execute(f"DELETE FROM graph_batch_events WHERE event_id IN ({_marks(ids)})", list(ids))
    for batch_id in batches:
        left = raw.execute(
            "SELECT 1 FROM graph_batch_events WHERE batch_id = ? LIMIT 1", (batch_id,)
        ).fetchone()
        if left is None:
            raw.execute(
                "DELETE FROM jobs WHERE kind = ? AND target_id = ?",
                (GRAPH_JOB, batch_id),
            )
            raw.execute("DELETE FROM graph_batches WHERE id = ?", (batch_id,))


def _restore_superseded(raw: sqlite3.Connection, ids: Sequence[str], now: str) -> list[str]:
    """Events the batch superseded become active again (the 0.1 cap lifted); one that some
    other event supersedes as well stays superseded, now under that event."""
    if not ids:
        return []
    rows = raw.execute(
        f"SELECT id FROM events WHERE superseded_by IN ({_marks(ids)}) AND id NOT IN "
        f"({_marks(ids)}) ORDER BY pk",
        [*ids, *ids],
    ).fetchall()
    restored = []
    for (event_id,) in rows:
        other = _other_superseder(raw, event_id, ids)
        if other is None:
            raw.execute(
                "UPDATE events SET status = 'active', superseded_by = NULL, forced_cap = NULL, "
                "updated_at = ? WHERE id = ? AND status = 'superseded'",
                (now, event_id),
            )
            restored.append(event_id)
        else:
            raw.execute(
                "UPDATE events SET superseded_by = ?, updated_at = ? WHERE id = ?",
                (other, now, event_id),
            )
    return restored


def _other_superseder(raw: sqlite3.Connection, event_id: str, ids: Sequence[str]) -> str | None:
    row = raw.execute(
        f"SELECT e.id FROM events e, json_each(e.temporal_json, '$.supersedes_event_ids') j "
        f"WHERE j.value = ? AND e.status IN ('active', 'superseded') "
        f"AND e.id NOT IN ({_marks(ids)}) ORDER BY e.pk DESC LIMIT 1",
        [event_id, *ids],
    ).fetchone()
    return None if row is None else str(row[0])


def _scrub_links(raw: sqlite3.Connection, ids: Sequence[str], now: str) -> None:
    """Relation ids naming the batch's events leave every other event's temporal fields
    (read again under the rows' locks: a graph write-back may be rewriting them too)."""
    if not ids:
        return
    gone = set(ids)
    linking = raw.execute(
        f"SELECT DISTINCT e.id FROM events e, json_each(e.temporal_json) t, "
        f"json_each(t.value) j WHERE t.type = 'array' AND j.value IN ({_marks(ids)}) "
        f"AND e.id NOT IN ({_marks(ids)})",
        [*ids, *ids],
    ).fetchall()
    for event_id, temporal in locked_temporals(raw, [row[0] for row in linking]).items():
        for key in RELATION_LISTS:
            if key in temporal:
                temporal[key] = [i for i in temporal[key] if i not in gone]
                if not temporal[key]:
                    del temporal[key]
        raw.execute(
            "UPDATE events SET temporal_json = ?, updated_at = ? WHERE id = ?",
            (dump_json(temporal), now, event_id),
        )


def _scrub_receipts(raw: sqlite3.Connection, ids: Sequence[str]) -> None:
    """The batch's events leave the usage receipts that adopted them; a receipt that
    adopted nothing else is deleted (it would only point at events that never were)."""
    if not ids:
        return
    gone = set(ids)
    rows = raw.execute(
        f"SELECT DISTINCT r.rowid, r.event_ids_json FROM usage_receipts r, "
        f"json_each(r.event_ids_json) j WHERE j.value IN ({_marks(ids)})",
        list(ids),
    ).fetchall()
    for rowid, event_ids_json in rows:
        kept = [i for i in json.loads(event_ids_json) if i not in gone]
        if kept:
            raw.execute(
                "UPDATE usage_receipts SET event_ids_json = ? WHERE rowid = ?",
                (dump_json(kept), rowid),
            )
        else:
            raw.execute("DELETE FROM usage_receipts WHERE rowid = ?", (rowid,))


def _leave_chapters(raw: sqlite3.Connection, ids: Sequence[str], now: str) -> None:
    """The events leave every chapter now; a chapter they were in waits for its rebuild."""
    if not ids:
        return
    held: dict[str, list[str]] = {}
    for event_id, topic_id in topic_rows.topics_holding(raw, ids).items():
        held.setdefault(topic_id, []).append(event_id)
    for topic_id, event_ids in held.items():
        topic_rows.leave_chapter(raw, topic_id, event_ids, now)
    for (space,) in raw.execute(
        f"SELECT DISTINCT namespace FROM events WHERE id IN ({_marks(ids)})", list(ids)
    ).fetchall():
        topic_rows.delete_empty_topics(raw, space)


def _delete_events(raw: sqlite3.Connection, ids: Sequence[str]) -> None:
    if not ids:
        return
    marks, params = _marks(ids), list(ids)
    pks = [row[0] for row in raw.execute(f"SELECT pk FROM events WHERE id IN ({marks})", params)]
    for table in ("event_sources", "topic_queue"):  # chapters holding them: topics/sync.py
        raw.execute(f"DELETE FROM {table} WHERE event_id IN ({marks})", params)
    for pk in pks:
        raw.execute("DELETE FROM event_documents WHERE pk = ?", (pk,))
        try:
            unindex_events(raw, [pk])
        except sqlite3.OperationalError as error:
            if "no such table: event_fts" not in str(error):
                raise
    raw.execute(f"DELETE FROM events WHERE id IN ({marks})", params)


def _delete_block(raw: sqlite3.Connection, block_id: str) -> None:
    row = raw.execute(
        "SELECT namespace, thread_id FROM blocks WHERE id = ?", (block_id,)
    ).fetchone()
    if row is None:
        return
    rowids = [
        int(r[0])
        for r in raw.execute(
            "SELECT fts_rowid FROM messages WHERE block_id = ? AND fts_rowid IS NOT NULL",
            (block_id,),
        )
    ]
    unindex_messages(raw, rowids)
    raw.execute("DELETE FROM jobs WHERE target_id = ?", (block_id,))
    raw.execute("DELETE FROM messages WHERE block_id = ?", (block_id,))
    raw.execute("DELETE FROM blocks WHERE id = ?", (block_id,))
    raw.execute("DELETE FROM threads WHERE namespace = ? AND thread_id = ?", (row[0], row[1]))
