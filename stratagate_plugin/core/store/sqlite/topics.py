"""The topic catalog's storage contract (``core/topics/storage.py``) on SQLite."""

import sqlite3
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime, timedelta
from typing import Any, TypeVar

from ...events.cards import EventCard
from ...records import Job
from ...topics.model import Topic
from ...topics.storage import (
    ChapterText,
    Fallback,
    Marks,
    Member,
    QueuedBatch,
    Reserve,
    SpareEntry,
    SpareSource,
    TopicsTransaction,
)
from .. import derivation_marks, event_rows, jobs, profile_rows, topic_jobs, topic_reads
from .. import topic_rows as rows
from .. import topic_unfiled as unfiled
from ..units import UnitDatabase, alone

T = TypeVar("T")
PREFERRED_LANGUAGE = "preferred_language"  # the profile field the directory follows


class SqliteTopicsStorage:
    def __init__(self, db: UnitDatabase) -> None:
        self.db = db

    async def read(self, unit: Callable[[TopicsTransaction], T]) -> T:
        return await self.db.read(lambda raw: unit(SqliteTopicsTransaction(raw)))

    async def write(self, unit: Callable[[TopicsTransaction], T]) -> T:
        return await self.db.write(lambda raw: unit(SqliteTopicsTransaction(raw)))

    async def spaces_to_bootstrap(self) -> list[str]:
        return await self.db.read(topic_jobs.spaces_to_bootstrap)

    async def claim(
        self, now: datetime, owner: str, lease: timedelta, reserve: Reserve
    ) -> Job | None:
        return await self.db.write(lambda raw: topic_jobs.claim(raw, now, owner, lease, reserve))

    async def renew(self, job: Job, until: datetime) -> bool:
        return await self.db.write(lambda raw: jobs.renew(raw, job, until))

    async def interrupt(self, job: Job, now: datetime) -> bool:
        return await self.db.write(lambda raw: jobs.interrupt(raw, job, now))

    async def fail(self, job: Job, message: str, now: datetime, backoff_s: float) -> Job | None:
        return await self.db.write(lambda raw: jobs.fail(raw, job, message, now, backoff_s))

    async def retry_failed(self, space: str, now: datetime) -> int:
        return await self.db.write(lambda raw: topic_jobs.retry_failed(raw, space, now))

    async def due_now(self, now: datetime) -> tuple[int, int, str | None]:
        def read(raw: sqlite3.Connection) -> tuple[int, int, str | None]:
            return (*topic_jobs.due_now(raw, now), topic_jobs.ledger_of(raw))

        return await self.db.read(read)

    async def budget_state(self, space: str | None) -> tuple[int, str | None]:
        def read(raw: sqlite3.Connection) -> tuple[int, str | None]:
            return topic_jobs.historical_waiting(raw, space), topic_jobs.ledger_of(raw)

        return await self.db.read(read)


class SqliteTopicsTransaction:
    """``TopicsTransaction``: the row functions over one transaction's connection."""

    def __init__(self, raw: sqlite3.Connection) -> None:
        self.raw = raw

    def all_spaces(self) -> list[str]:
        return [row[0] for row in self.raw.execute("SELECT namespace FROM namespaces ORDER BY 1")]

    def spaces_to_bootstrap(self) -> list[str]:
        return topic_jobs.spaces_to_bootstrap(self.raw)

    def queue_alone(self) -> None:
        alone(self.raw, topic_jobs.QUEUEING)

    def state_known(self, space: str) -> bool:
        return topic_jobs.state_version(self.raw, space) is not None

    def record_state(self, space: str, frozen: int, now: datetime) -> None:
        topic_jobs.record_state(self.raw, space, frozen, now)

    def retire_old_generation(self, space: str) -> None:
        topic_jobs.retire_old_generation(self.raw, space)

    def unplaced_cards(self, space: str) -> list[EventCard]:
        return event_rows.events_from_rows(self.raw, topic_jobs.unplaced_rows(self.raw, space))

    def unqueued_members(self, topic_id: str) -> list[tuple[str, bool]]:
        return topic_jobs.unqueued_members(self.raw, topic_id)

    def queue_batch(self, space: str, batch: QueuedBatch, now: datetime) -> str:
        historical, topic_id, event_ids = batch
        return topic_jobs.queue_batch(self.raw, space, event_ids, historical, now, topic_id)

    def touched_members(self, space: str) -> list[Member]:
        return [Member(*row) for row in rows.touched_members(self.raw, space)]

    def visible_cards(self, space: str, event_ids: Sequence[str]) -> list[EventCard]:
        return event_rows.visible_cards(self.raw, space, event_ids)

    def mark_for_projection(self, event_ids: Iterable[str]) -> None:
        rows.mark_for_projection(self.raw, event_ids)

    def mark_seen(self, seen: Iterable[tuple[str, str]]) -> None:
        rows.mark_seen(self.raw, seen)

    def clear_language(self, topic_id: str, now: str) -> None:
        rows.clear_language(self.raw, topic_id, now)

    def drop_members(self, topic_id: str, event_ids: Iterable[str]) -> None:
        rows.drop_members(self.raw, topic_id, event_ids)

    def delete_empty_topics(self, space: str) -> int:
        return rows.delete_empty_topics(self.raw, space)

    def load_topics(
        self, space: str, members: bool = False, only: Sequence[str] | None = None
    ) -> list[Topic]:
        return rows.load_topics(self.raw, space, members, only)

    def chapter_window(
        self, space: str, agent_weight: float, window: tuple[int, int]
    ) -> tuple[list[str], int, int]:
        return rows.chapter_window(self.raw, space, agent_weight, window)

    def pending_chapters(self, space: str) -> list[str]:
        return rows.pending_chapters(self.raw, space)

    def get_topic(self, topic_id: str) -> Topic | None:
        return rows.get_topic(self.raw, topic_id)

    def topics_holding(self, event_ids: Sequence[str]) -> dict[str, str]:
        return rows.topics_holding(self.raw, event_ids)

    def batch_of(self, batch_id: str) -> QueuedBatch:
        return QueuedBatch(*topic_jobs.batch_of(self.raw, batch_id))

    def close_batch(self, batch_id: str) -> None:
        topic_jobs.close_batch(self.raw, batch_id)

    def holds(self, job: Job) -> bool:
        return jobs.holds(self.raw, job)

    def finish_job(self, job: Job, status: str, now: datetime, detail: str) -> None:
        jobs.finish(self.raw, job.id, status, now, detail)

    def mark_job(self, job_id: str, derived_by: str, error: str | None) -> None:
        derivation_marks.mark_job(self.raw, job_id, derived_by, error)

    def save_topic(self, topic: Topic) -> None:
        rows.save_topic(self.raw, topic)

    def set_members(self, topic: Topic, cards: Iterable[EventCard], marks: Marks) -> None:
        rows.set_members(self.raw, topic, cards, *marks)

    def member_summary(self, topic_id: str) -> tuple[list[str], bool]:
        return rows.member_summary(self.raw, topic_id)

    def term_stats(self, tokens: Sequence[str]) -> tuple[dict[str, int], int]:
        return topic_reads.term_stats(self.raw, tokens)

    def chapter_titles(self, space: str) -> dict[str, str]:
        return topic_reads.chapter_titles(self.raw, space)

    def shown_texts(
        self,
        space: str,
        agent_weight: float,
        category: str | None = None,
        window: tuple[int, int] | None = None,
    ) -> list[ChapterText]:
        found = topic_reads.shown_texts(self.raw, space, agent_weight, category, window)
        return list(map(ChapterText._make, found))

    def chapter_generation(self, space: str) -> int | None:
        return topic_reads.chapter_generation(self.raw, space)

    def indexed_texts(self, space: str) -> list[tuple[ChapterText, bool]]:
        found = topic_reads.indexed_texts(self.raw, space)
        return [(ChapterText(*row[:5]), bool(row[5])) for row in found]

    def category_firsts(self, space: str, agent_weight: float) -> list[tuple[ChapterText, int]]:
        found = topic_reads.category_firsts(self.raw, space, agent_weight)
        return [(ChapterText(*row), count) for row, count in found]

    def member_counts(self, topic_ids: Sequence[str]) -> dict[str, int]:
        return topic_reads.member_counts(self.raw, topic_ids)

    def fallback_counts(self, space: str, agent_weight: float) -> dict[str, int]:
        return unfiled.fallback_counts(self.raw, space, agent_weight)

    def fallback_rows(
        self, space: str, agent_weight: float, category: str | None, window: tuple[int, int]
    ) -> list[Fallback]:
        found = unfiled.fallback_rows(self.raw, space, agent_weight, category, *window)
        return [(row[0], row[1], row[2]) for row in found]

    def matching_fallbacks(
        self, space: str, agent_weight: float, category: str | None, tokens: Sequence[str]
    ) -> list[Fallback]:
        found = unfiled.matching_fallbacks(self.raw, space, agent_weight, category, tokens)
        return [(row[0], row[1], row[2]) for row in found]

    def topic_jobs(self, space: str, limit: int | None = None) -> list[tuple[Job, list[str]]]:
        return topic_jobs.topic_jobs(self.raw, space, limit)

    def topic_job_counts(self, space: str) -> dict[str, int]:
        return topic_jobs.topic_job_counts(self.raw, space)

    def spare_marked(self) -> bool:
        return unfiled.spare_marked(self.raw)

    def marked_sources(self) -> tuple[list[int], list[SpareSource]]:
        marked, found = unfiled.marked_sources(self.raw)
        return marked, [_source(row) for row in found]

    def refile(self, marked: Sequence[int], entries: Iterable[SpareEntry]) -> None:
        unfiled.refile(self.raw, marked, entries)

    def preferred_language(self) -> str:
        value, _ = profile_rows.read_profile(self.raw).get(PREFERRED_LANGUAGE, ("", 0))
        return value


def _source(row: tuple[Any, ...]) -> SpareSource:
    pk, space, status, pool, criticality, event_type, plain, agent = row
    return SpareSource(pk, space, status, pool, criticality, event_type, bool(plain), bool(agent))
