"""What the topic catalog needs from storage (the contract a database implements).

The catalog's rules (a chapter is stale when an event's fingerprint changed; events are
batched by size and subject; a projection is merged, worded again and categorised) read
and write in the same transaction: a sync marks what it found stale before queuing the
rebuild, a commit re-reads the members it just placed. So ``TopicsStorage.read`` and
``write`` run the catalog's own rule with a ``TopicsTransaction``: record-level reads and
writes valid only inside that one transaction. Job leases and the budget's ledger are
plain operations.
"""

from collections.abc import Callable, Iterable, Sequence
from datetime import datetime, timedelta
from typing import NamedTuple, Protocol, TypeVar

from ..events.cards import EventCard
from ..records import Job
from .model import Topic

__all__ = [
    "ChapterText",
    "Member",
    "QueuedBatch",
    "SpareEntry",
    "SpareSource",
    "TopicsStorage",
    "TopicsTransaction",
]

T = TypeVar("T")
Reserve = Callable[[str | None], tuple[bool, str]] | None  # the budget's grant, given a ledger
Marks = tuple[dict[str, str], dict[str, str]]  # (fingerprints, categories) by event id
Fallback = tuple[str, str, str]  # (event id, title, category) of an event in no chapter


class ChapterText(NamedTuple):
    """What the directory shows of a chapter: its light row (no sections, overview, members)."""

    id: str
    title: str
    description: str
    category: str
    status: str


class Member(NamedTuple):
    """A chapter member whose event may have changed since it was projected."""

    topic_id: str
    event_id: str
    fingerprint: str | None
    """``None``: awaiting projection."""
    status: str | None
    """Its event's status now (``None``: the event is gone)."""


class SpareSource(NamedTuple):
    """A marked event as the fallback index's rule reads it (``unfiled.entry``)."""

    pk: int
    namespace: str
    status: str
    pool: str
    criticality: str
    event_type: object
    """Its ``temporal.event_type`` as stored (``None`` when absent)."""
    in_plain_chapter: bool
    """Held by a chapter without agent events."""
    in_agent_chapter: bool
    """Held by a chapter with agent events."""


class SpareEntry(NamedTuple):
    """A fallback entry as stored: the event (by its row key), its space, category, pool and
    whether an agent chapter holds it."""

    pk: int
    namespace: str
    category: str
    pool: str
    agent_chapter: bool


class QueuedBatch(NamedTuple):
    historical: bool
    topic_id: str | None
    """The chapter it rebuilds, if any."""
    event_ids: list[str]
    """Its queued events in order."""


class TopicsTransaction(Protocol):
    """Reads and writes of records inside one transaction (``TopicsStorage.read`` /
    ``write``); synchronous: the rule driving them never awaits inside it. In a read, the
    write methods must not be called."""

    def all_spaces(self) -> list[str]: ...

    def spaces_to_bootstrap(self) -> list[str]:
        """Spaces not yet bootstrapped under the current projector version."""
        ...

    def queue_alone(self) -> None:
        """The topic queue held by this transaction alone to its end (SQLite's one writer;
        an advisory lock on PostgreSQL): a sync or bootstrap reads what no batch holds yet,
        then queues it; two at once would queue those events twice. The database's, not a
        space's: a purge syncs several spaces in one transaction, re-filing between them,
        and locks taken space by space around the re-filing's would deadlock."""
        ...

    def state_known(self, space: str) -> bool:
        """Whether the space has a bootstrap state (any projector version)."""
        ...

    def record_state(self, space: str, frozen: int, now: datetime) -> None: ...

    def retire_old_generation(self, space: str) -> None:
        """Chapters of another projector version deleted with their members."""
        ...

    def unplaced_cards(self, space: str) -> list[EventCard]:
        """Visible events in no chapter and no batch, by the turn they were formed at."""
        ...

    def unqueued_members(self, topic_id: str) -> list[tuple[str, bool]]:
        """A chapter's members waiting for no batch: (event id, changed?), in order."""
        ...

    def queue_batch(self, space: str, batch: QueuedBatch, now: datetime) -> str:
        """A batch queued with its projection job; the batch id."""
        ...

    def touched_members(self, space: str) -> list[Member]:
        """Members whose event is gone, hidden, updated since projection or awaiting it."""
        ...

    def visible_cards(self, space: str, event_ids: Sequence[str]) -> list[EventCard]:
        """The visible events among ``event_ids`` (any order)."""
        ...

    def mark_for_projection(self, event_ids: Iterable[str]) -> None: ...

    def mark_seen(self, seen: Iterable[tuple[str, str]]) -> None:
        """(event id, updated_at) of members touched without changing."""
        ...

    def clear_language(self, topic_id: str, now: str) -> None:
        """A ready chapter's words cleared (pending), the first invalidation kept."""
        ...

    def drop_members(self, topic_id: str, event_ids: Iterable[str]) -> None: ...

    def delete_empty_topics(self, space: str) -> int: ...

    def load_topics(
        self, space: str, members: bool = False, only: Sequence[str] | None = None
    ) -> list[Topic]:
        """Every chapter of the space in chapter order, without members (``members``: with
        them in order, read for the whole space at once); ``only``: just those chapters."""
        ...

    def chapter_window(
        self, space: str, agent_weight: float, window: tuple[int, int]
    ) -> tuple[list[str], int, int]:
        """The ids of the ``window`` (offset, count) of the space's chapters in chapter
        order, how many chapters it has and how many are shown at ``agent_weight``."""
        ...

    def pending_chapters(self, space: str) -> list[str]:
        """The ids of the space's chapters waiting for a rebuild, in chapter order."""
        ...

    def get_topic(self, topic_id: str) -> Topic | None:
        """The chapter with its members in order."""
        ...

    def topics_holding(self, event_ids: Sequence[str]) -> dict[str, str]:
        """event id → the chapter holding it."""
        ...

    def batch_of(self, batch_id: str) -> QueuedBatch: ...

    def close_batch(self, batch_id: str) -> None:
        """The batch's events leave the queue."""
        ...

    def holds(self, job: Job) -> bool: ...

    def finish_job(self, job: Job, status: str, now: datetime, detail: str) -> None: ...

    def mark_job(self, job_id: str, derived_by: str, error: str | None) -> None: ...

    def save_topic(self, topic: Topic) -> None:
        """The chapter's row inserted or updated (members are written apart)."""
        ...

    def set_members(self, topic: Topic, cards: Iterable[EventCard], marks: Marks) -> None:
        """``cards`` placed in ``topic`` at their place in its member list (taken from any
        other chapter), with their (fingerprints, categories) by event id."""
        ...

    def member_summary(self, topic_id: str) -> tuple[list[str], bool]:
        """The categories of a chapter's members and whether any is agent-recorded."""
        ...

    def term_stats(self, tokens: Sequence[str]) -> tuple[dict[str, int], int]:
        """How many events hold each token, and how many events there are ({}, 0 when the
        backend has no word index)."""
        ...

    def chapter_titles(self, space: str) -> dict[str, str]:
        """Every chapter title of the space → its id."""
        ...

    def shown_texts(
        self,
        space: str,
        agent_weight: float,
        category: str | None = None,
        window: tuple[int, int] | None = None,
    ) -> list[ChapterText]:
        """The chapters shown at ``agent_weight`` (agent chapters hidden at 0), in chapter
        order, optionally of one category; with ``window`` (offset, limit) only those."""
        ...

    def chapter_generation(self, space: str) -> int | None:
        """A token drawn anew whenever any chapter row of the space is written (``None``:
        none ever was): what was derived from the chapters at one token holds while the
        token is the same, in any process on the database."""
        ...

    def indexed_texts(self, space: str) -> list[tuple[ChapterText, bool]]:
        """Every chapter of the space in chapter order, with whether it holds agent events."""
        ...

    def category_firsts(self, space: str, agent_weight: float) -> list[tuple[ChapterText, int]]:
        """Each category's first shown chapter and how many it has, in chapter order: a
        page's totals and firsts without reading every chapter."""
        ...

    def member_counts(self, topic_ids: Sequence[str]) -> dict[str, int]:
        """How many events each of those chapters holds (absent: none)."""
        ...

    def fallback_counts(self, space: str, agent_weight: float) -> dict[str, int]:
        """category → how many visible events no shown chapter holds."""
        ...

    def fallback_rows(
        self, space: str, agent_weight: float, category: str | None, window: tuple[int, int]
    ) -> list[Fallback]:
        """Events no shown chapter holds in table order, from ``window``'s (limit, offset)
        (limit -1: all)."""
        ...

    def matching_fallbacks(
        self, space: str, agent_weight: float, category: str | None, tokens: Sequence[str]
    ) -> list[Fallback]:
        """Up to 100 events no shown chapter holds sharing a token with a query."""
        ...

    def topic_jobs(self, space: str, limit: int | None = None) -> list[tuple[Job, list[str]]]:
        """The space's unfinished topic jobs with their events, oldest first; at most
        ``limit`` (``None``: all)."""
        ...

    def topic_job_counts(self, space: str) -> dict[str, int]:
        """How many of the space's unfinished topic jobs are in each state."""
        ...

    def spare_marked(self) -> bool:
        """Whether a write marked an event whose fallback entry may have changed (every
        write of an event, a member or a chapter marks the events it touched, in its own
        transaction, whichever code wrote it)."""
        ...

    def marked_sources(self) -> tuple[list[int], list[SpareSource]]:
        """The marked events' row keys, and what the rule reads of those still stored."""
        ...

    def refile(self, marked: Sequence[int], entries: Iterable[SpareEntry]) -> None:
        """The fallback entries of ``marked`` replaced by ``entries`` (the counts kept with
        them), their marks cleared."""
        ...

    def preferred_language(self) -> str:
        """The profile's preferred language ("" when unset)."""
        ...


class TopicsStorage(Protocol):
    async def read(self, unit: Callable[[TopicsTransaction], T]) -> T:
        """``unit`` run in one consistent read."""
        ...

    async def write(self, unit: Callable[[TopicsTransaction], T]) -> T:
        """``unit`` run in one write transaction: all it wrote, or nothing."""
        ...

    async def spaces_to_bootstrap(self) -> list[str]:
        """Spaces not yet bootstrapped under the current projector version (a read: an
        open with nothing to do takes no write lock)."""
        ...

    async def claim(
        self, now: datetime, owner: str, lease: timedelta, reserve: Reserve
    ) -> Job | None:
        """The next due topic job of a space with none running (incremental first; a
        historical one only when ``reserve(ledger)`` grants it, the ledger stored either
        way; ``None`` reserve: no budget)."""
        ...

    async def renew(self, job: Job, until: datetime) -> bool:
        """The lease of a job still held extended; False once it was taken back."""
        ...

    async def interrupt(self, job: Job, now: datetime) -> bool:
        """A held job given back, retryable at once."""
        ...

    async def fail(self, job: Job, message: str, now: datetime, backoff_s: float) -> Job | None:
        """A failed attempt of a held job recorded (``None``: no longer held)."""
        ...

    async def retry_failed(self, space: str, now: datetime) -> int:
        """Each exhausted batch of the space queued again as a fresh job; how many."""
        ...

    async def due_now(self, now: datetime) -> tuple[int, int, str | None]:
        """(incremental, historical) topic jobs a claim could take at ``now``, and the
        budget's ledger: one read, asked by an idle worker every few seconds."""
        ...

    async def budget_state(self, space: str | None) -> tuple[int, str | None]:
        """(historical batches not yet run of the space or every space, the ledger)."""
        ...
