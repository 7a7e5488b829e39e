"""Graph projection batches (spec §4): ≤ 8 events each, queued as a ``graph_projection`` job.

New events are queued by the transaction that writes them (priority 1000 for conversation
extraction, 2000 for agent memory and import). On open, visible events in no batch yet are
back-filled — found by one query over the events written since the last back-fill
(``meta.graph_backfill_pk``), most valuable first, priority the number of batches still
behind them. A job is claimed pending before failed-due, then by priority, then by age.
"""

import sqlite3
from collections.abc import Sequence

from ..graph.shapes import PROJECTOR_VERSION
from ..ids import new_id
from ..records import GRAPH_JOB
from .jobs import BY_PRIORITY
from .rows import dump_json
from .sealing import enqueue_job

BATCH_SIZE = 8
CONVERSATION_PRIORITY, AGENT_PRIORITY = 1000, 2000
CLAIM_ORDER = f"(status = 'failed'), {BY_PRIORITY}"  # the job's priority is its batch's
_MARK = "graph_backfill_pk"
MARK_STRETCH = 5000  # events checked again on every open before the mark moves
_BACKLOG = (
    "SELECT e.pk, e.id, e.namespace FROM events e WHERE e.pk > ? "
    "AND e.status IN ('active', 'superseded') AND NOT EXISTS "
    "(SELECT 1 FROM graph_batch_events g WHERE g.event_id = e.id) "
    "ORDER BY e.namespace, e.status = 'active' DESC, e.mention_count DESC, "
    "e.scope = 'project' DESC, e.created_at DESC, e.pk"
)


def queue_events(
    raw: sqlite3.Connection,
    space: str,
    event_ids: Sequence[str],
    priority: int,
    now: str,
) -> list[str]:
    """The events in batches of eight, each batch a queued job; the batch ids."""
    ids = list(dict.fromkeys(event_ids))
    return [
        _queue_batch(raw, space, ids[start : start + BATCH_SIZE], priority, now)
        for start in range(0, len(ids), BATCH_SIZE)
    ]


def _queue_batch(
    raw: sqlite3.Connection, space: str, event_ids: Sequence[str], priority: int, now: str
) -> str:
    batch_id = new_id("gproj")
    raw.execute(
        "INSERT INTO graph_batches(id, namespace, priority, projector_version, created_at) "
        "VALUES (?, ?, ?, ?, ?)",
        (batch_id, space, priority, PROJECTOR_VERSION, now),
    )
    raw.executemany(
        "INSERT INTO graph_batch_events(batch_id, event_id) VALUES (?, ?)",
        [(batch_id, event_id) for event_id in event_ids],
    )
    enqueue_job(raw, space, GRAPH_JOB, batch_id, priority)
    return batch_id


def _mark(raw: sqlite3.Connection) -> int:
    row = raw.execute("SELECT value FROM meta WHERE key = ?", (_MARK,)).fetchone()
    return int(row[0]) if row else 0


def backlog(raw: sqlite3.Connection) -> list[sqlite3.Row]:
    """Visible events written since the last back-fill that no batch holds (a read)."""
    return raw.execute(_BACKLOG, (_mark(raw),)).fetchall()


def backfill_due(raw: sqlite3.Connection) -> bool:
    """Whether ``backfill`` has events to queue, or a long stretch to mark as checked."""
    if backlog(raw):
        return True
    newest = raw.execute("SELECT MAX(pk) FROM events").fetchone()[0] or 0
    return int(newest) - _mark(raw) > MARK_STRETCH


def backfill(raw: sqlite3.Connection, now: str) -> int:
    """Queue the backlog, per namespace, in batches of eight; how many events."""
    rows = backlog(raw)
    spaces: dict[str, list[str]] = {}
    for row in rows:
        spaces.setdefault(row["namespace"], []).append(row["id"])
    for space, ids in spaces.items():
        count = (len(ids) + BATCH_SIZE - 1) // BATCH_SIZE
        for place in range(count):
            chunk = ids[place * BATCH_SIZE : (place + 1) * BATCH_SIZE]
            _queue_batch(raw, space, chunk, count - place, now)
    newest = raw.execute("SELECT MAX(pk) FROM events").fetchone()[0] or 0
    raw.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (_MARK, str(int(newest))))
    return len(rows)


def batch_events(raw: sqlite3.Connection, batch_id: str) -> list[str]:
    rows = raw.execute(
        "SELECT event_id FROM graph_batch_events WHERE batch_id = ? ORDER BY rowid", (batch_id,)
    )
    return [row[0] for row in rows]


def batch_space(raw: sqlite3.Connection, batch_id: str) -> str:
    row = raw.execute("SELECT namespace FROM graph_batches WHERE id = ?", (batch_id,)).fetchone()
    return str(row[0])


def finish_batch(
    raw: sqlite3.Connection,
    batch_id: str,
    node_ids: Sequence[str],
    edge_ids: Sequence[str],
    reason: str,
) -> None:
    raw.execute(
        "UPDATE graph_batches SET node_ids_json = ?, edge_ids_json = ?, reason = ? WHERE id = ?",
        (dump_json(list(node_ids)), dump_json(list(edge_ids)), reason or None, batch_id),
    )
