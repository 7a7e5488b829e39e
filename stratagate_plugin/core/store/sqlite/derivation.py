"""Derivation's storage contract (``core/derivation/storage.py``) on SQLite: the job queue
(``jobs``), the marks of who derived what (``derivation_marks``) and the commit of a job's
result, each operation one ``Database`` read or write unit.

The relevant events of an extraction's timeline are found by the search the service hands
in (``TimelineAsk.find``, the events capability's) over an ``EventsReader`` of the same
read; cards are written with the events rules given at wiring (``EventRules``).
"""

import sqlite3
from collections.abc import Collection, Sequence
from datetime import datetime, timedelta
from typing import get_args

from ...clock import iso
from ...derivation.storage import (
    Author,
    CardRules,
    Cards,
    ExtractionInput,
    OfflineRows,
    Replaced,
    TimelineAsk,
)
from ...errors import InvalidInput
from ...events.cards import EventCard, Pool
from ...events.storage import EventRules
from ...llm.tasks import BlockSummary
from ...records import EXTRACTION_JOB, GRAPH_JOB, SUMMARY_JOB, Block, Job, Message
from .. import (
    block_rows,
    derivation_marks,
    event_rows,
    event_search_rows,
    graph_jobs,
    jobs,
    rederive_rows,
    topic_jobs,
)
from ..import_batch_rows import remove_events
from ..sealing import enqueue_job
from ..units import UnitDatabase
from .events import SqliteEventsReader

DERIVATION_JOBS = (SUMMARY_JOB, EXTRACTION_JOB)
NEIGHBOURS = 8  # per pool, the live events a committed card is compared with (FTS5's best)
POOLS: tuple[str, ...] = get_args(Pool)  # both: a card may restate one of either pool


class SqliteDerivationStorage:
    def __init__(self, db: UnitDatabase, events: EventRules) -> None:
        self.db = db
        self.events = events

    async def claim(self, now: datetime, owner: str, lease: timedelta, derive: bool) -> Job | None:
        return await self.db.write(lambda raw: _claim(raw, now, owner, lease, derive))

    async def lease_holders(self) -> set[str]:
        return await self.db.read(jobs.lease_holders)

    async def any_expired(self, now: datetime) -> bool:
        return await self.db.read(lambda raw: jobs.any_expired(raw, now))

    async def take_back(self, dead_owners: Collection[str], now: datetime) -> None:
        def take_back(raw: sqlite3.Connection) -> None:
            jobs.release_owners(raw, list(dead_owners), now)
            jobs.recover_expired(raw, now)

        await self.db.write(take_back)

    async def renew(self, job: Job, until: datetime) -> bool:
        return await self.db.write(lambda raw: jobs.renew(raw, job, until))

    async def give_back(self, job: Job, now: datetime) -> bool:
        return await self.db.write(lambda raw: jobs.interrupt(raw, job, now))

    async def fail(self, job: Job, error: str, now: datetime) -> Job | None:
        return await self.db.write(lambda raw: jobs.fail(raw, job, error, now))

    async def job(self, job_id: str) -> Job:
        return await self.db.read(lambda raw: jobs.get_job(raw, job_id))

    async def list_jobs(self, space: str | None, status: str | None) -> list[Job]:
        return await self.db.read(lambda raw: jobs.list_jobs(raw, space, status))

    async def due_counts(self, now: datetime, kinds: tuple[str, ...]) -> dict[str, int]:
        return await self.db.read(lambda raw: jobs.due_counts(raw, now, kinds))

    async def retry(
        self, job_ids: Sequence[str], now: datetime, requeued: Sequence[str]
    ) -> list[Job]:
        ids = list(job_ids)
        return await self.db.write(lambda raw: [_retry(raw, i, now, requeued) for i in ids])

    async def failed_jobs(self, space: str | None) -> list[Job]:
        return await self.db.read(lambda raw: jobs.list_jobs(raw, space, "failed"))

    async def retry_failed(self, now: datetime, space: str | None, requeued: Sequence[str]) -> int:
        return await self.db.write(lambda raw: retry_failed_rows(raw, now, space, requeued))

    async def summary_input(self, block_id: str) -> tuple[Block, list[Message]]:
        def read(raw: sqlite3.Connection) -> tuple[Block, list[Message]]:
            return block_rows.get_block(raw, block_id), block_rows.block_messages(raw, block_id)

        return await self.db.read(read)

    async def extraction_input(
        self, block_id: str, block: Block | None, timeline: TimelineAsk
    ) -> ExtractionInput:
        def read(raw: sqlite3.Connection) -> ExtractionInput:
            reader = SqliteEventsReader(raw, self.events)
            return _extraction_input(reader, block_id, block, timeline)

        return await self.db.read(read)

    async def commit_summary(
        self, job: Job, block: Block, summary: BlockSummary, author: Author, now: datetime
    ) -> bool:
        def commit(raw: sqlite3.Connection) -> bool:
            if not jobs.holds(raw, job):
                return False
            _write_summary(raw, block.id, summary, iso(now))
            derivation_marks.mark_block(raw, block.id, *author)
            jobs.finish(raw, job.id, "succeeded", now)
            derivation_marks.mark_job(raw, job.id, *author)
            enqueue_job(raw, block.namespace, EXTRACTION_JOB, block.id)
            return True

        return await self.db.write(commit)

    async def commit_extraction(self, job: Job, block: Block, cards: Cards) -> list[str] | None:
        def commit(raw: sqlite3.Connection) -> list[str] | None:
            if not jobs.holds(raw, job):
                return None
            inserted = _write_cards(raw, block, cards, self.events)
            status = "succeeded" if cards.drafts else "skipped"
            restated = len(cards.drafts) - len(inserted)
            jobs.finish(raw, job.id, status, cards.moment, cards.note(len(inserted), restated))
            derivation_marks.mark_job(raw, job.id, *cards.author)
            derivation_marks.note_block(raw, block.id, *cards.author)
            block_rows.mark_ready(raw, block.id, iso(cards.moment))
            return inserted

        return await self.db.write(commit)

    async def offline_blocks(self, space: str | None) -> list[Block]:
        return await self.db.read(lambda raw: derivation_marks.offline_blocks(raw, space))

    async def offline_derived(self, space: str | None) -> OfflineRows:
        def read(raw: sqlite3.Connection) -> OfflineRows:
            blocks = derivation_marks.offline_blocks(raw, space)
            return OfflineRows(blocks, derivation_marks.fallback_jobs(raw, space))

        return await self.db.read(read)

    async def mark_block(self, block_id: str, author: Author) -> None:
        await self.db.write(lambda raw: derivation_marks.mark_block(raw, block_id, *author))

    async def replace_offline(
        self, block: Block, summary: BlockSummary, cards: Cards
    ) -> Replaced | None:
        return await self.db.write(lambda raw: _replace(raw, block, summary, cards, self.events))


EXTRACTIONS_FIRST = f"kind != '{EXTRACTION_JOB}', created_at, id"
"""A claimable extraction goes before older summaries: extractions of a space form a chain
(space order), so starting each link as soon as it may shortens the pass; its result is
the same whenever it runs, since it waits for what it reads and nothing later commits."""


def _claim(
    raw: sqlite3.Connection, now: datetime, owner: str, lease: timedelta, derive: bool
) -> Job | None:
    found = None
    if derive:
        found = jobs.claim_next(
            raw, now, DERIVATION_JOBS, owner, lease,
            in_space_order=EXTRACTION_JOB, order=EXTRACTIONS_FIRST,
        )  # fmt: skip
    return found or jobs.claim_next(
        raw, now, (GRAPH_JOB,), owner, lease, order=graph_jobs.CLAIM_ORDER, one_per_space=True
    )


def _retry(raw: sqlite3.Connection, job_id: str, now: datetime, requeued: Sequence[str]) -> Job:
    job = jobs.get_job(raw, job_id)
    if job.kind not in requeued:
        return jobs.retry(raw, job_id, now)
    if job.status != "failed":
        raise InvalidInput(f"job {job_id} is {job.status}; only failed jobs can be retried")
    return topic_jobs.requeue(raw, job, now)


def retry_failed_rows(
    raw: sqlite3.Connection, now: datetime, space: str | None, requeued: Sequence[str]
) -> int:
    """Every failed job (of ``namespace``, or of every space), oldest first, retried:
    reset in place, or queued again as a fresh job for a kind in ``requeued``; how many."""
    failed = jobs.list_jobs(raw, space, "failed")
    for job in failed:
        _retry(raw, job.id, now, requeued)
    return len(failed)


def _extraction_input(
    reader: SqliteEventsReader, block_id: str, block: Block | None, ask: TimelineAsk
) -> ExtractionInput:
    raw = reader.raw
    block = block or block_rows.get_block(raw, block_id)
    messages = block_rows.block_messages(raw, block_id)
    neighbours = block_rows.neighbour_keypoints(raw, block)
    found: list[EventCard] = []
    if words := ask.tokens(block):
        found = ask.find(reader, block.namespace, words, ask.relevant)
    latest = event_rows.recent_events(raw, block.namespace, ask.recent)
    timeline = {card.id: card for card in [*found, *latest]}.values()
    mine = [card for card in timeline if card.source_block_id != block.id]
    return ExtractionInput(block, messages, neighbours, mine)


def _write_summary(raw: sqlite3.Connection, block_id: str, summary: BlockSummary, now: str) -> None:
    block_rows.store_summary(
        raw, block_id, summary.title, summary.tags, summary.summary, summary.keypoints,
        summary.should_extract, now,
    )  # fmt: skip


def _write_cards(
    raw: sqlite3.Connection, block: Block, cards: Cards, events: EventRules
) -> list[str]:
    """Commit the drafts in order; the ids of the cards inserted (the rest restated live
    events), marked with their author and queued for graph projection."""
    formed = block_rows.block_space_turn(raw, block.id)
    rules, moment = cards.rules, cards.moment
    stored: list[str] = []
    inserted: list[str] = []
    for draft in cards.drafts:
        draft = rules.resolve(draft, stored)
        named = rules.linked_ids(draft)
        visible = event_rows.live_event_ids(raw, named) if named else set()
        card = rules.card(draft, visible, block, formed, moment)
        stored.append(_commit_card(raw, card, rules, events, formed, moment))
        if stored[-1] == card.id:
            inserted.append(card.id)
    derivation_marks.mark_events(raw, inserted, *cards.author)
    graph_jobs.queue_events(
        raw, block.namespace, inserted, graph_jobs.CONVERSATION_PRIORITY, iso(moment)
    )
    return inserted


def _commit_card(
    raw: sqlite3.Connection,
    card: EventCard,
    rules: CardRules,
    events: EventRules,
    turn: int,
    moment: datetime,
) -> str:
    """Insert the card, or count it as a mention of the live event it restates; the id that
    now holds the card's statement."""
    tokens = rules.search_tokens(card)
    found = event_search_rows.lexical_rows(raw, card.namespace, POOLS, tokens, NEIGHBOURS)
    settled = rules.settle(card, event_rows.events_from_rows(raw, found))
    if settled.repeat_of is not None:
        said = str(card.temporal.get("mentioned_at") or iso(moment))
        event_rows.add_mention(
            raw, settled.repeat_of.id, card.source_message_ids, turn, said, iso(moment)
        )
        return settled.repeat_of.id
    event_rows.insert_event(raw, settled.card, events)  # a link names a live event just read
    return card.id


def _replace(
    raw: sqlite3.Connection, block: Block, summary: BlockSummary, cards: Cards, events: EventRules
) -> Replaced | None:
    if not rederive_rows.unchanged(raw, block):
        return None
    now, by = iso(cards.moment), cards.author[0]
    _write_summary(raw, block.id, summary, now)
    derivation_marks.mark_block(raw, block.id, *cards.author)
    rederive_rows.mark_summary_job(raw, block.id, by, now)
    free, kept = rederive_rows.fallback_cards(raw, block.id)
    remove_events(raw, free, now)
    inserted = _write_cards(raw, block, cards, events)
    rederive_rows.finish_extraction(raw, block.id, by, cards.note(len(inserted), len(kept)), now)
    return Replaced(free, kept, inserted)
