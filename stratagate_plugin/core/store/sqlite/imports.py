"""The imports' storage contract (``core/importer/storage.py``) on SQLite."""

import sqlite3
from typing import Any

from ...errors import NotFound
from ...events.cards import EventCard
from ...events.storage import EventRules
from ...importer.jobs import ImportBatch, ImportJob, MatchedEvent
from ...importer.storage import BatchWrite, CommitView, NewJob, Recovery, RemovedBatch, StaleCommit
from .. import event_rows, graph_jobs
from .. import import_batch_rows as batch_rows
from .. import import_rows as rows
from ..turns import NewSpaceDefaults
from ..units import UnitDatabase


class SqliteImportsStorage:
    def __init__(self, db: UnitDatabase, events: EventRules) -> None:
        self.db = db
        self.events = events

    async def insert_job(self, job: NewJob) -> str:
        return await self.db.write(lambda raw: rows.insert_job(raw, *job))

    async def job(self, job_id: str) -> ImportJob:
        return await self.db.read(lambda raw: _job(raw, job_id))

    async def jobs(self, space: str, limit: int) -> list[ImportJob]:
        return await self.db.read(lambda raw: _jobs(raw, rows.list_jobs(raw, space, limit)))

    async def jobs_with_text(
        self, space: str, text: str, statuses: tuple[str, ...]
    ) -> list[ImportJob]:
        return await self.db.read(
            lambda raw: _jobs(raw, rows.jobs_with_text(raw, space, text, statuses))
        )

    async def job_ids_in(self, statuses: tuple[str, ...]) -> list[str]:
        return await self.db.read(lambda raw: rows.jobs_in(raw, statuses))

    async def job_text(self, job_id: str) -> str:
        return await self.db.read(lambda raw: rows.job_text(raw, job_id))

    async def claim(self, job_id: str, owner: str, now: str) -> None:
        await self.db.write(lambda raw: rows.claim(raw, job_id, owner, now))

    async def save_recovery(self, job_id: str, recovery: Recovery) -> bool:
        return await self.db.write(lambda raw: _save_recovery(raw, job_id, recovery))

    async def pending_indexes(self, job_id: str, limit: int) -> list[int]:
        return await self.db.read(lambda raw: rows.pending_indexes(raw, job_id, limit))

    async def record_decision(
        self, job_id: str, index: int, decision: dict[str, Any], owner: str, now: str
    ) -> int | None:
        def save(raw: sqlite3.Connection) -> int | None:
            done = rows.record_decision(raw, job_id, index, decision, now)
            rows.claim(raw, job_id, owner, now)
            return done

        return await self.db.write(save)

    async def finish_analysis(self, job_id: str, status: str, now: str) -> bool:
        return await self.db.write(lambda raw: rows.finish_analysis(raw, job_id, status, now))

    async def events_sharing_words(self, space: str, text: str, limit: int) -> list[MatchedEvent]:
        found = await self.db.read(
            lambda raw: event_rows.sharing_a_token(raw, space, text, limit, every=True)
        )
        return [
            MatchedEvent(id=r["id"], title=r["title"], summary=r["summary"], status=r["status"])
            for r in found
        ]

    async def live_events(self, event_ids: list[str]) -> set[str]:
        return await self.db.read(lambda raw: event_rows.live_event_ids(raw, event_ids))

    async def event_cards(self, event_ids: list[str]) -> dict[str, EventCard]:
        def read(raw: sqlite3.Connection) -> dict[str, EventCard]:
            return {i: event_rows.get_event(raw, i) for i in dict.fromkeys(event_ids)}

        return await self.db.read(read)

    async def commit_view(self, job_id: str) -> CommitView:
        return await self.db.read(lambda raw: _commit_view(raw, job_id))

    async def write_batch(self, batch: BatchWrite, view: CommitView) -> ImportBatch:
        return await self.db.write(lambda raw: _write_batch(raw, batch, view, self.events))

    async def remove_batch(self, batch_id: str, now: str) -> RemovedBatch | None:
        return await self.db.write(lambda raw: _remove_batch(raw, batch_id, now))

    async def batch(self, batch_id: str) -> ImportBatch:
        return rows.batch_from_row(await self.db.read(lambda raw: rows.batch_job(raw, batch_id)))

    async def batches(self, space: str) -> list[ImportBatch]:
        found = await self.db.read(lambda raw: rows.batch_jobs(raw, space))
        return [rows.batch_from_row(row) for row in found]

    async def active_cards(self, space: str, limit: int) -> list[EventCard]:
        return await self.db.read(lambda raw: _active_cards(raw, space, limit))


def _job(raw: sqlite3.Connection, job_id: str) -> ImportJob:
    return rows.job_from_row(rows.job_row(raw, job_id), rows.item_rows(raw, job_id))


def _jobs(raw: sqlite3.Connection, found: list[sqlite3.Row]) -> list[ImportJob]:
    return [rows.job_from_row(row, rows.item_rows(raw, row["id"])) for row in found]


def _save_recovery(raw: sqlite3.Connection, job_id: str, recovery: Recovery) -> bool:
    if rows.job_row(raw, job_id)["status"] != "extracting":
        return False
    rows.set_candidates(raw, job_id, recovery.candidates, recovery.now)
    rows.set_status(
        raw,
        job_id,
        recovery.status,
        recovery.now,
        error=recovery.error,
        payload=recovery.payload,
        source_system=recovery.source_system,
    )
    return True


def _commit_view(raw: sqlite3.Connection, job_id: str) -> CommitView:
    job = _job(raw, job_id)
    live = event_rows.live_event_ids(raw, job.named_event_ids)
    return CommitView(job, live, batch_rows.current_turn(raw, job.namespace))


def _still(raw: sqlite3.Connection, batch: BatchWrite, view: CommitView) -> bool:
    """Nothing the commit was decided on changed since ``view`` was read (a purge, an
    undo, another commit or worker in between)."""
    return (
        _job(raw, batch.job_id) == view.job
        and rows.job_text(raw, batch.job_id) == batch.source.text
        and event_rows.live_event_ids(raw, view.job.named_event_ids) == view.live
        and batch_rows.current_turn(raw, batch.namespace) == view.turn
        and all(event_rows.get_event(raw, card.id) == card for card in batch.merged_from)
    )


def _write_batch(
    raw: sqlite3.Connection, batch: BatchWrite, view: CommitView, events: EventRules
) -> ImportBatch:
    if not _still(raw, batch, view):
        raise StaleCommit(f"import {batch.job_id} changed while its commit was decided")
    defaults = NewSpaceDefaults(*batch.space_defaults)
    stamp, source = batch.now, batch.source
    batch_rows.insert_source_block(raw, batch.namespace, source, defaults, stamp)
    for card in batch.cards:
        event_rows.insert_event(raw, card, events)
    written = [card.id for card in batch.cards]
    graph_jobs.queue_events(raw, batch.namespace, written, graph_jobs.AGENT_PRIORITY, stamp)
    rows.set_choices(raw, batch.job_id, batch.choices)
    payload = {**rows.payload_of(rows.job_row(raw, batch.job_id)), **batch.payload}
    rows.mark_committed(raw, batch.job_id, source.block_id, payload, stamp)
    return rows.batch_from_row(rows.job_row(raw, batch.job_id))


def _remove_batch(raw: sqlite3.Connection, batch_id: str, now: str) -> RemovedBatch | None:
    row = rows.batch_job(raw, batch_id)
    if row["status"] != "committed" or not rows.mark_undone(raw, row["id"], now):
        return None
    removed = batch_rows.remove_batch(raw, batch_id, now)
    return RemovedBatch(
        row["id"], row["namespace"], removed.event_ids, removed.restored_ids, removed.graph_node_ids
    )


def _active_cards(raw: sqlite3.Connection, space: str, limit: int) -> list[EventCard]:
    if not rows.space_exists(raw, space):
        raise NotFound(f"no memory space named {space!r}")
    return event_rows.list_events(raw, space, ("active",), limit=limit)
