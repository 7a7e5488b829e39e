"""Background derivation: the summary job (L0–L2) then the extraction job (event cards).

Each job is claimed in one transaction (leased to this worker, the lease renewed while
the model works), the model is called outside any transaction, and the result is
committed in another that first checks the job is still this claim's: a result is applied
once, never by a worker whose job was taken over. A model failure records a failed
attempt and never touches the sealed block. A block becomes ready only after valid L0–L2
and a successful (or validly skipped) extraction.

A pass runs ``concurrency`` workers (``workers.py``), so that many model calls are in
flight; the commits stay one at a time under the database's write lock. A block's
extraction waits for every earlier block of its thread (``jobs.claim_next``'s thread
order): its timeline then holds their events, as with one worker. Blocks of other threads
run beside it and may miss each other's events (``docs/derivation-throughput.md``).
"""

import asyncio
import logging
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from ..clock import iso, utc_now
from ..errors import StrataGateError
from ..events import cards as event_rules
from ..events.cards import EventCard
from ..events.ranking import EventSearch
from ..events.service import POOLS, search_in
from ..events.source_check import SourceDrops
from ..events.weights import new_card
from ..graph.service import Projector
from ..llm.base import ModelError, StructuredModel, StructuredTask
from ..llm.prompts import load_prompt
from ..llm.tasks import (
    EXTRACT_EVENT_CARDS,
    SUMMARIZE_BLOCK,
    BlockSummary,
    EventCardDraft,
    EventExtraction,
)
from ..records import Block, Job
from ..service_base import ServiceBase
from ..store import (
    Database,
    block_rows,
    event_queries_rows,
    event_rows,
    graph_jobs,
    job_retry,
    jobs,
)
from ..store.health import StorageBusy
from ..store.sealing import EXTRACTION_JOB, SUMMARY_JOB, enqueue_job
from . import payloads, truth
from .input import DERIVE_TEXT_LIMIT, prefix_note
from .lease import DEFAULT_LEASE_S, heartbeat, worker_id
from .workers import Pass, run_all

DERIVATION_JOBS = (SUMMARY_JOB, EXTRACTION_JOB)
LOST = "lost"  # the job was taken over by another worker: nothing of this run is applied
TIMELINE_RELEVANT, TIMELINE_RECENT = 8, 4
NEIGHBOURS = 8  # per pool, the events a committed card is compared with (FTS5's best)
log = logging.getLogger(__name__)


class DerivationFailed(StrataGateError):
    """The model answered, but not with something a block can be derived from."""


@dataclass
class DerivationReport:
    ran: int = 0
    succeeded: int = 0
    skipped: int = 0
    failed: int = 0
    lost: int = 0
    ready_blocks: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    topics: Any = None  # the topic pass that followed (``topics.service.TopicReport``)
    graph_ran: int = 0  # graph projection jobs, counted apart from the block jobs above
    graph_failed: int = 0
    dropped: SourceDrops = field(default_factory=SourceDrops)  # by source validation


class Deriver:
    """Runs due derivation jobs against one model, as one owner of the jobs it claims, with
    up to ``concurrency`` jobs (model calls) under way at once. Graph projection jobs are
    claimed only when no summary or extraction is due (``derive=False``: only them), with
    ``graph_model`` as projector (None: the embedded offline projector)."""

    def __init__(
        self,
        db: Database,
        model: StructuredModel,
        clock: Callable[[], datetime] = utc_now,
        lease: timedelta = timedelta(seconds=DEFAULT_LEASE_S),
        owner: str | None = None,
        concurrency: int = 1,
        graph_model: StructuredModel | None = None,
        derive: bool = True,
        text_limit: int = DERIVE_TEXT_LIMIT,
    ) -> None:
        if concurrency < 1:
            raise ValueError(f"concurrency must be at least 1, not {concurrency}")
        self.db, self.model, self.clock, self.lease = db, model, clock, lease
        self.owner = owner or worker_id()
        self.concurrency = concurrency
        self.projector = Projector(db, graph_model, clock)
        self.derive = derive
        self.text_limit = text_limit

    async def process_pending(
        self, max_jobs: int | None = None, on_job: Callable[[Job], None] | None = None
    ) -> DerivationReport:
        """Run due jobs now until none is due (or ``max_jobs`` ran); ``on_job`` after each."""
        report, run = DerivationReport(), Pass(max_jobs)
        await run_all([self._work(run, report, on_job) for _ in range(self.concurrency)])
        return report

    async def _work(
        self, run: Pass, report: DerivationReport, on_job: Callable[[Job], None] | None
    ) -> None:
        while (job := await run.next_job(self._claim)) is not None:
            try:
                await self._run(job, report)
            finally:
                run.job_done()
            if on_job is not None and job.kind != graph_jobs.GRAPH_JOB:
                on_job(job)

    async def _claim(self) -> Job | None:
        now = self.clock()

        def claim(raw: sqlite3.Connection) -> Job | None:
            found = None
            if self.derive:
                found = jobs.claim_next(
                    raw, now, DERIVATION_JOBS, self.owner, self.lease, EXTRACTION_JOB
                )
            return found or jobs.claim_next(
                raw, now, (graph_jobs.GRAPH_JOB,), self.owner, self.lease,
                order=graph_jobs.CLAIM_ORDER,
            )  # fmt: skip

        return await self.db.write(claim)

    async def _outcome(self, job: Job, report: DerivationReport) -> str:
        if job.kind == SUMMARY_JOB:
            return await self._summarize(job)
        if job.kind == graph_jobs.GRAPH_JOB:
            return await self.projector.run(job)
        return await self._extract(job, report.dropped)

    async def _run(self, job: Job, report: DerivationReport) -> None:
        if job.kind == graph_jobs.GRAPH_JOB:
            report.graph_ran += 1
        else:
            report.ran += 1
        try:
            async with heartbeat(lambda: self._renew(job), self.lease):
                outcome = await self._outcome(job, report)
        except asyncio.CancelledError:
            await self._give_back(job)
            raise
        except StorageBusy:  # contention, not the job's fault: the next pass runs it again
            await self._give_back(job)
            return
        except (ModelError, StrataGateError) as error:
            await self._record_failure(job, f"{type(error).__name__}: {error}", report)
            return
        except Exception as error:  # a bug must not wedge the queue: record it, keep going
            log.exception("derivation job %s crashed", job.id)
            await self._record_failure(job, f"internal error: {error!r}", report)
            return
        _count(job, outcome, report)

    async def _renew(self, job: Job) -> bool:
        until = self.clock() + self.lease
        renewed = await self.db.write(lambda raw: jobs.renew(raw, job, until))
        if not renewed:
            log.warning("derivation job %s was taken over; this run's result is dropped", job.id)
        return renewed

    async def _give_back(self, job: Job) -> None:
        """A cancelled run (shutdown, Ctrl-C) hands its job back for the next worker at once;
        should that write fail too, the lease simply runs out."""
        now = self.clock()
        try:
            await self.db.write(lambda raw: jobs.interrupt(raw, job, now))
        except Exception:
            log.exception("could not give back derivation job %s", job.id)

    async def _record_failure(self, job: Job, message: str, report: DerivationReport) -> None:
        now = self.clock()
        recorded = await self.db.write(lambda raw: jobs.fail(raw, job, message, now))
        if recorded is None:
            _count(job, LOST, report)
            return
        if job.kind == graph_jobs.GRAPH_JOB:
            report.graph_failed += 1
        else:
            report.failed += 1
        report.errors.append(f"{job.kind} {job.target_id}: {message}")

    async def _summarize(self, job: Job) -> str:
        limit = self.text_limit
        block, payload = await self.db.read(lambda raw: _summary_input(raw, job.target_id, limit))
        task = StructuredTask(SUMMARIZE_BLOCK, BlockSummary, load_prompt(SUMMARIZE_BLOCK), payload)
        note = prefix_note(payload["block"]["messages"])
        summary = _clean_summary(await self.model.complete(task), note)
        now = iso(self.clock())

        def commit(raw: sqlite3.Connection) -> str:
            if not jobs.holds(raw, job):
                return LOST
            block_rows.store_summary(
                raw,
                block.id,
                summary.title,
                summary.tags,
                summary.summary,
                summary.keypoints,
                summary.should_extract,
                now,
            )
            jobs.finish(raw, job.id, "succeeded", self.clock())
            enqueue_job(raw, block.namespace, EXTRACTION_JOB, block.id)
            return "succeeded"

        return await self.db.write(commit)

    async def _extract(self, job: Job, dropped: SourceDrops) -> str:
        """The model's cards, accepted, then their sources checked (``source_check``): the
        same validation whichever model answered; what it dropped is counted and noted."""
        limit = self.text_limit
        block, payload = await self.db.read(
            lambda raw: _extraction_input(raw, job.target_id, limit)
        )
        if block.should_extract is False:
            return await self._finish_extraction(job, block, [], "summary pre-screen: nothing")
        task = StructuredTask(
            EXTRACT_EVENT_CARDS, EventExtraction, load_prompt(EXTRACT_EVENT_CARDS), payload
        )
        result = await self.model.complete(task)
        accepted, cards, drops = await asyncio.to_thread(payloads.checked_cards, result, payload)
        if result.should_extract and not accepted:
            raise DerivationFailed("extraction promised events but returned no valid card")
        if drops:
            log.info("extraction of %s: %s", block.id, drops.note())
        dropped.add(drops)
        notes = [drops.note() if drops else "", prefix_note(payload["target"]["messages"])]
        said = "; ".join(filter(None, notes))
        note = f"{len(cards)} events; {said}" if said else ""
        return await self._finish_extraction(job, block, cards, note)

    async def _finish_extraction(
        self, job: Job, block: Block, cards: list[EventCardDraft], note: str
    ) -> str:
        moment = self.clock()
        status = "succeeded" if cards else "skipped"

        def commit(raw: sqlite3.Connection) -> str:
            if not jobs.holds(raw, job):
                return LOST
            formed = block_rows.block_namespace_turn(raw, block.id)
            stored: list[str] = []
            inserted: list[str] = []
            for draft in cards:
                draft = event_rules.resolve_local_refs(draft, stored)
                card = _card_from_draft(raw, draft, block, formed, moment)
                stored.append(_commit_card(raw, card, formed, moment))
                if stored[-1] == card.id:
                    inserted.append(card.id)
            repeats = len(cards) - len(inserted)
            done = f"{len(inserted)} events" + (f", {repeats} restated" if repeats else "")
            jobs.finish(raw, job.id, status, moment, note or done)
            block_rows.mark_ready(raw, block.id, iso(moment))
            graph_jobs.queue_events(
                raw, block.namespace, inserted, graph_jobs.CONVERSATION_PRIORITY, iso(moment)
            )
            return status

        return await self.db.write(commit)


def _commit_card(raw: sqlite3.Connection, card: EventCard, turn: int, moment: datetime) -> str:
    """Insert the card, or count it as a mention of the live event it restates; a change
    card the model left unlinked supersedes what it replaces (``truth``). The id that now
    holds the card's statement."""
    tokens = truth.search_tokens(card)
    found = event_queries_rows.lexical_rows(raw, card.namespace, POOLS, tokens, NEIGHBOURS)
    settled = truth.settle(card, event_rows.events_from_rows(raw, found))
    if settled.repeat_of is not None:
        said = str(card.temporal.get("mentioned_at") or iso(moment))
        event_rows.add_mention(
            raw, settled.repeat_of.id, card.source_message_ids, turn, said, iso(moment)
        )
        return settled.repeat_of.id
    event_rows.insert_event(raw, settled.card)  # an added link names a live event just read
    return card.id


def _count(job: Job, outcome: str, report: DerivationReport) -> None:
    if job.kind == graph_jobs.GRAPH_JOB:
        if outcome == LOST:
            log.warning("graph job %s was taken over by another worker; result dropped", job.id)
        return
    if outcome == LOST:
        log.warning("derivation job %s was taken over by another worker; result dropped", job.id)
        report.lost += 1
    elif outcome == "skipped":
        report.skipped += 1
    else:
        report.succeeded += 1
    if outcome != LOST and job.kind == EXTRACTION_JOB:
        report.ready_blocks.append(job.target_id)


def _clean_summary(summary: BlockSummary, note: str = "") -> BlockSummary:
    """The summary within its limits; ``note`` (a prefix was read) ends L1."""
    text = summary.summary.strip()[: 2000 - (len(note) + 1 if note else 0)]
    return summary.model_copy(
        update={
            "title": summary.title.strip()[:120],
            "tags": event_rules.clean_strings(summary.tags, 12, 60),
            "summary": f"{text} {note}" if note else text,
            "keypoints": event_rules.clean_strings(summary.keypoints, 20, 600),
        }
    )


def _summary_input(raw: sqlite3.Connection, block_id: str, limit: int) -> tuple[Block, Any]:
    block = block_rows.get_block(raw, block_id)
    return block, payloads.summary_payload(block, block_rows.block_messages(raw, block_id), limit)


def _extraction_input(raw: sqlite3.Connection, block_id: str, limit: int) -> tuple[Block, Any]:
    block = block_rows.get_block(raw, block_id)
    messages = block_rows.block_messages(raw, block_id)
    neighbours = block_rows.neighbour_keypoints(raw, block)
    timeline = _timeline(raw, block)
    return block, payloads.extraction_payload(block, messages, limit, neighbours, timeline)


def _timeline(raw: sqlite3.Connection, block: Block) -> list[EventCard]:
    """Up to 8 events relevant to the block's L0–L2 text (event search over both pools, no
    retrieval stamp) plus the 4 most recently formed."""
    tokens = payloads.timeline_tokens(block)
    relevant: list[EventCard] = []
    if tokens:
        request = EventSearch(tokens, limit=TIMELINE_RELEVANT)
        relevant = [hit.card for hit in search_in(raw, block.namespace, request)]
    recent = event_rows.recent_events(raw, block.namespace, TIMELINE_RECENT)
    return list({card.id: card for card in [*relevant, *recent]}.values())


def _card_from_draft(
    raw: sqlite3.Connection,
    draft: EventCardDraft,
    block: Block,
    formed_turn: int,
    moment: datetime,
) -> EventCard:
    temporal = _still_visible_links(raw, dict(draft.temporal or {}))
    temporal["thread_id"] = block.thread_id
    return new_card(
        namespace=block.namespace,
        title=draft.title,
        summary=draft.summary,
        tags=draft.tags[: event_rules.MAX_TAGS],
        quotes=draft.quotes,
        source_block_id=block.id,
        source_message_ids=draft.source_message_ids,
        formed_turn=formed_turn,
        temporal=temporal,
        scope=draft.scope,
        criticality=draft.criticality,
        catalog_hints=draft.catalog_hints,
        created_at=moment,
    )


def _still_visible_links(raw: sqlite3.Connection, temporal: dict[str, Any]) -> dict[str, Any]:
    """Relation targets must still be active or superseded when the card is committed."""
    named = {i for key in event_rules.RELATION_LISTS for i in temporal.get(key, [])}
    if temporal.get("same_event_id"):
        named.add(temporal["same_event_id"])
    if not named:
        return temporal
    visible = event_rows.live_event_ids(raw, named)
    return event_rules.restrict_relations(temporal, visible)


class DerivationService(ServiceBase):
    """Derivation jobs on the ``StrataGate`` façade: run them, list them, retry one."""

    async def process_pending(
        self,
        max_jobs: int | None = None,
        on_job: Callable[[Job], None] | None = None,
        concurrency: int | None = None,
    ) -> DerivationReport:
        """Run every due derivation job now (summaries, then event extraction, then the
        graph projection of the events they formed), up to ``concurrency`` at once
        (default: the config's ``derive_concurrency``); then the topic work the new events
        queued."""
        report = await self._deriver(concurrency).process_pending(max_jobs, on_job)
        await self._after_derivation(report)
        return report

    async def project_pending_graph(self, max_jobs: int | None = None) -> int:
        """Run the due graph projection jobs only (``process_pending`` runs them too, once no
        summary or extraction is due); how many ran."""
        deriver = self._deriver(None, derive=False)
        return (await deriver.process_pending(max_jobs)).graph_ran

    def _deriver(self, concurrency: int | None, derive: bool = True) -> Deriver:
        lease = timedelta(seconds=self.config.job_lease_s)
        workers = self.config.derive_concurrency if concurrency is None else concurrency
        graph_model = self.model if self.config.graph_projector == "model" else None
        return Deriver(
            self.db, self.model, lease=lease, concurrency=workers, graph_model=graph_model,
            derive=derive, text_limit=self.config.derive_text_limit,
        )  # fmt: skip

    async def list_jobs(self, namespace: str | None = None, status: str | None = None) -> list[Job]:
        return await self.db.read(lambda raw: jobs.list_jobs(raw, namespace, status))

    async def due_job_count(self) -> int:
        """How many jobs a pass would run from now: the due ones, plus the extraction each due
        summary queues when it succeeds (a progress bar's total)."""
        now = utc_now()
        due = await self.db.read(lambda raw: jobs.due_counts(raw, now, DERIVATION_JOBS))
        return sum(due.values()) + due.get(SUMMARY_JOB, 0)

    async def jobs_due(self) -> bool:
        """Would a pass find a summary, an extraction or a graph projection to run now? One
        read: an idle worker asks every few seconds for jobs other processes queued."""
        now, kinds = utc_now(), (*DERIVATION_JOBS, graph_jobs.GRAPH_JOB)
        return bool(await self.db.read(lambda raw: jobs.due_counts(raw, now, kinds)))

    async def retry_job(self, job_id: str) -> Job:
        """Manual retry of a failed job: attempts start again and it runs at the next pass
        (a topic batch: queued again as a fresh job, ``job_retry``'s rule)."""
        now = utc_now()
        return await self.db.write(lambda raw: job_retry.retry(raw, job_id, now))

    async def retry_failed_jobs(self) -> int:
        """Every failed job queued again at once (attempts from zero; a topic batch as a
        fresh job, ``job_retry``'s rule); how many there were."""
        now = utc_now()
        return await self.db.write(lambda raw: job_retry.retry_failed(raw, now))
