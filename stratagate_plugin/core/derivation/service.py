"""Derivation on the ``StrataGate`` façade: a pass over the due jobs (K workers, each job
claimed under a lease), the jobs listed and retried, and the blocks the offline model
derived because the model failed, listed and run on the model again.

A pass runs ``concurrency`` workers (``workers.py``), so that many model calls are in
flight; the commits stay one at a time under the database's write lock. What each job
does is ``blocks/service.py`` (summary, extraction) and the graph's ``Projector``. A
block's extraction waits for every earlier block of its space, whatever the thread
(``DerivationStorage.claim``'s space order): its timeline, restatements and supersede links are
then those of one worker, whatever order the answers come in, so two runs over the same
conversation derive the same memory. Summaries, graph projections and other spaces run
side by side (``docs/derivation-throughput.md``).
A model failure without a fallback records a failed attempt and never touches the block.
Every read and write goes through ``DerivationStorage`` (``self.store``).
"""

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Protocol

from ..clock import utc_now
from ..errors import StorageBusy, StrataGateError
from ..events.source_check import SourceDrops
from ..graph.service import Projector
from ..llm.base import ModelError, StructuredModel
from ..llm.tasks import EventCardDraft
from ..records import EXTRACTION_JOB, GRAPH_JOB, SUMMARY_JOB, TOPIC_JOB, Block, Job
from ..service_base import EngineParts, ServiceBase
from .blocks.service import LOST, BlockJobs
from .fallback import DerivationFailed, fallback_for
from .input import DERIVE_TEXT_LIMIT
from .lease import DEFAULT_LEASE_S, dead_local_owners, heartbeat, worker_id
from .rederive.service import Rederiver, RederiveReport
from .storage import DerivationStorage
from .workers import Pass, run_all

__all__ = ["EXTRACTION_JOB", "LOST", "SUMMARY_JOB", "DerivationFailed", "RederiveReport"]

DERIVATION_JOBS = (SUMMARY_JOB, EXTRACTION_JOB)
REQUEUED_ON_RETRY = (TOPIC_JOB,)
"""Kinds a manual retry queues again as a fresh job (a topic batch, under the historical
budget, spec §5.3) instead of resetting in place — wherever the retry is asked for."""
log = logging.getLogger(__name__)
Pause = Callable[[], Awaitable[None]]


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
    # jobs the offline model answered because the model failed: "kind target: error"
    fallbacks: list[str] = field(default_factory=list)


class GraphRunner(Protocol):
    """Runs one claimed graph projection job (the graph capability's ``Projector``)."""

    async def run(self, job: Job) -> tuple[str, str | None]: ...


class Deriver:
    """Runs due derivation jobs against one model, as one owner of the jobs it claims, with
    up to ``concurrency`` jobs (model calls) under way at once. Graph projection jobs are
    claimed only when no summary or extraction is due (``derive=False``: only them) and run
    by ``graph`` (the graph capability's ``Projector``, wired by the service). ``fallback``
    answers a task the model failed (None: the job fails instead)."""

    def __init__(
        self,
        store: DerivationStorage,
        model: StructuredModel,
        graph: GraphRunner,
        clock: Callable[[], datetime] = utc_now,
        lease: timedelta = timedelta(seconds=DEFAULT_LEASE_S),
        owner: str | None = None,
        concurrency: int = 1,
        derive: bool = True,
        text_limit: int = DERIVE_TEXT_LIMIT,
        fallback: StructuredModel | None = None,
    ) -> None:
        if concurrency < 1:
            raise ValueError(f"concurrency must be at least 1, not {concurrency}")
        self.store, self.model, self.clock, self.lease = store, model, clock, lease
        self.owner = owner or worker_id()
        self.concurrency = concurrency
        self.projector = graph
        self.derive = derive
        self.blocks = BlockJobs(store, model, clock, text_limit, fallback)

    async def process_pending(
        self,
        max_jobs: int | None = None,
        on_job: Callable[[Job], None] | None = None,
        pause: Pause | None = None,
    ) -> DerivationReport:
        """Run due jobs now until none is due (or ``max_jobs`` ran); ``on_job`` after each,
        then ``pause`` before the next claim."""
        report, run = DerivationReport(), Pass(max_jobs)
        workers = [self._work(run, report, on_job, pause) for _ in range(self.concurrency)]
        await run_all(workers)
        return report

    async def _work(
        self,
        run: Pass,
        report: DerivationReport,
        on_job: Callable[[Job], None] | None,
        pause: Pause | None,
    ) -> None:
        while (job := await run.next_job(self._claim)) is not None:
            try:
                await self._run(job, report)
            finally:
                run.job_done()
            if on_job is not None and job.kind != GRAPH_JOB:
                on_job(job)
            if pause is not None:
                await pause()

    async def _claim(self) -> Job | None:
        """The next due job (a summary or extraction first, then a graph projection)."""
        return await self.store.claim(self.clock(), self.owner, self.lease, self.derive)

    async def _outcome(self, job: Job, report: DerivationReport) -> tuple[str, str | None]:
        """The job's outcome, and the model's error when the offline model answered."""
        if job.kind == SUMMARY_JOB:
            return await self.blocks.summarize(job)
        if job.kind == GRAPH_JOB:
            return await self.projector.run(job)
        return await self.blocks.extract(job, report.dropped)

    async def _run(self, job: Job, report: DerivationReport) -> None:
        if job.kind == GRAPH_JOB:
            report.graph_ran += 1
        else:
            report.ran += 1
        try:
            async with heartbeat(lambda: self._renew(job), self.lease):
                outcome, fell_back = await self._outcome(job, report)
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
        if fell_back is not None and outcome != LOST:
            log.warning("%s %s derived offline: %s", job.kind, job.target_id, fell_back)
            report.fallbacks.append(f"{job.kind} {job.target_id}: {fell_back}")
        _count(job, outcome, report)

    async def _renew(self, job: Job) -> bool:
        until = self.clock() + self.lease
        renewed = await self.store.renew(job, until)
        if not renewed:
            log.warning("derivation job %s was taken over; this run's result is dropped", job.id)
        return renewed

    async def _give_back(self, job: Job) -> None:
        """A cancelled run (shutdown, Ctrl-C) hands its job back for the next worker at once;
        should that write fail too, the lease simply runs out."""
        now = self.clock()
        try:
            await self.store.give_back(job, now)
        except Exception:
            log.exception("could not give back derivation job %s", job.id)

    async def _record_failure(self, job: Job, message: str, report: DerivationReport) -> None:
        now = self.clock()
        recorded = await self.store.fail(job, message, now)
        if recorded is None:
            _count(job, LOST, report)
            return
        if job.kind == GRAPH_JOB:
            report.graph_failed += 1
        else:
            report.failed += 1
        report.errors.append(f"{job.kind} {job.target_id}: {message}")

    async def _finish_extraction(
        self, job: Job, block: Block, cards: list[EventCardDraft], note: str
    ) -> str:
        """Commit ``cards`` as the model's under the job's claim (``BlockJobs``)."""
        return await self.blocks.finish_extraction(job, block, cards, note)


def _count(job: Job, outcome: str, report: DerivationReport) -> None:
    if job.kind == GRAPH_JOB:
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


@dataclass(frozen=True)
class OfflineDerived:
    """What the offline model derived because the model failed: blocks (with the model's
    error on each) and the finished jobs, graph and topic batches included."""

    blocks: list[Block]
    jobs: list[Job]


AfterPass = Callable[[DerivationReport, Pause | None], Awaitable[None]]
"""Work wired to follow every derivation pass (the topic pass), given the pass's report and
its ``pause`` between jobs."""


class DerivationService(ServiceBase):
    """Derivation jobs: run them, list them, retry one."""

    def __init__(self, parts: EngineParts, after_pass: Sequence[AfterPass] = ()) -> None:
        super().__init__(parts)
        self.after_pass = list(after_pass)

    @property
    def store(self) -> DerivationStorage:
        return self.storage.derivation

    async def process_pending(
        self,
        max_jobs: int | None = None,
        on_job: Callable[[Job], None] | None = None,
        concurrency: int | None = None,
        pause: Pause | None = None,
    ) -> DerivationReport:
        """Run every due derivation job now (summaries, then event extraction, then the
        graph projection of the events they formed), up to ``concurrency`` at once
        (default: the config's ``derive_concurrency``); then the topic work the new events
        queued. ``pause``: awaited by each worker between jobs (a background worker yields
        to foreground requests there, ``core/foreground.py``)."""
        report = await self._deriver(concurrency).process_pending(max_jobs, on_job, pause)
        for follow in self.after_pass:
            await follow(report, pause)
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
        fallback = fallback_for(self.model, self.config.offline_fallback)
        return Deriver(
            self.store, self.model, self.projector(graph_model, utc_now, fallback), lease=lease,
            concurrency=workers, derive=derive, text_limit=self.config.derive_text_limit,
            fallback=fallback,
        )  # fmt: skip

    def projector(
        self,
        graph_model: StructuredModel | None = None,
        clock: Callable[[], datetime] = utc_now,
        fallback: StructuredModel | None = None,
    ) -> Projector:
        """The graph capability's runner of graph jobs (``graph_model`` None: the embedded
        offline projector), for a ``Deriver``."""
        return Projector(self.storage.graph, graph_model, clock, fallback)

    async def list_jobs(self, space: str | None = None, status: str | None = None) -> list[Job]:
        return await self.store.list_jobs(space, status)

    async def take_back_abandoned(self) -> None:
        """Jobs whose lease ran out, or whose owner was a process of this machine that is
        gone (killed, crashed), become failed-retryable-now; a live worker's jobs are left
        alone. Asked first without a write lock, so an open does not wait behind a write."""
        now = utc_now()
        dead = dead_local_owners(await self.store.lease_holders())
        if dead or await self.store.any_expired(now):
            await self.store.take_back(dead, now)

    async def due_job_count(self) -> int:
        """How many jobs a pass would run from now: the due ones, plus the extraction each due
        summary queues when it succeeds (a progress bar's total)."""
        now = utc_now()
        due = await self.store.due_counts(now, DERIVATION_JOBS)
        return sum(due.values()) + due.get(SUMMARY_JOB, 0)

    async def jobs_due(self) -> bool:
        """Would a pass find a summary, an extraction or a graph projection to run now? One
        read: an idle worker asks every few seconds for jobs other processes queued."""
        kinds = (*DERIVATION_JOBS, GRAPH_JOB)
        return bool(await self.store.due_counts(utc_now(), kinds))

    async def retry_job(self, job_id: str) -> Job:
        """Manual retry of a failed job: attempts start again and it runs at the next pass
        (a topic batch: queued again as a fresh job, ``REQUEUED_ON_RETRY``)."""
        [job] = await self.store.retry([job_id], utc_now(), REQUEUED_ON_RETRY)
        return job

    async def retry_failed_jobs(self, space: str | None = None) -> int:
        """Every failed job (of ``namespace``, or of every space) queued again at once
        (attempts from zero; a topic batch as a fresh job, ``REQUEUED_ON_RETRY``); how
        many there were."""
        return await self.store.retry_failed(utc_now(), space, REQUEUED_ON_RETRY)

    async def offline_derived(self, space: str | None = None) -> OfflineDerived:
        """The blocks and jobs the offline model answered for a failing model."""
        found = await self.store.offline_derived(space)
        return OfflineDerived(found.blocks, found.jobs)

    async def rederive_offline(
        self, space: str | None = None, block_ids: list[str] | None = None
    ) -> RederiveReport:
        """Run the blocks derived offline on the model again (``rederive.py``); the model's
        result replaces the offline one, or the offline one stays. Then the graph and topic
        work the new cards queued."""
        rederiver = Rederiver(self.store, self.model, utc_now, self.config.derive_text_limit)
        report = await rederiver.run(space, block_ids)
        if report.replaced:
            await self.process_pending()
        return report
