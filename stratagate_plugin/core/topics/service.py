"""Topic use cases on the ``StrataGate`` façade: the background projection and the reads.

A topic pass (after every derivation pass, and ``process_topics``) first syncs each space
in one transaction: stale chapters (an event they hold changed or was hidden) lose their
words and are queued for a rebuild, new events are queued in batches. It then runs the
due batches one by one: claimed under a 5-minute lease (one per space, historical ones
only within the budget), the model called outside any transaction, the answer validated
whole and committed only if the claim and every source are still as they were read.

The reads (the directory, the topic page, one topic) never write and never open evidence
batches: topics are navigation. A chapter whose events changed since it was projected is
shown as pending at once, before the next pass rebuilds it.
"""

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import partial
from typing import Any, TypeVar

from ..clock import utc_now
from ..derivation.fallback import OFFLINE_FALLBACK, error_line
from ..derivation.lease import heartbeat, worker_id
from ..errors import InvalidInput, StorageBusy, StrataGateError
from ..events.cards import EventCard
from ..events.ranking import EventHit
from ..events.service import EventsService
from ..llm.base import ModelError, StructuredModel, StructuredTask
from ..llm.offline.model import OfflineModel
from ..llm.prompts import load_prompt
from ..llm.tasks import PROJECT_MEMORY_TOPICS, TopicProjection
from ..records import Job
from ..service_base import EngineParts, ServiceBase
from . import budget, catalog, sync, unfiled
from .batches.service import LOST, SourceChanged, commit, read_input
from .batching import OUTPUT_TOKENS
from .categories import CATEGORIES
from .chapter_limit import held_to_limit
from .directory import Listing, bounded_topic, render_directory, section_page, topic_page
from .directory_words import directory_language
from .model import FALLBACK_PREFIX
from .storage import TopicsStorage, TopicsTransaction
from .validation import InvalidProjection, validate_projection

TOPIC_LEASE = timedelta(minutes=5)
BACKOFF_UNIT_S = 30.0
TOPIC_SEARCH_DEPTH = 100  # a query within a topic ranks this many events of the space
DIRECTORY_ENTRIES = 30  # more never fit 400 tokens: the directory then shows categories
DEFAULT_LIMIT, MAX_LIMIT, MAX_QUERY = 12, 20, 500
_GROUPER = OfflineModel()  # the embedded grouper: the default projector (§5)
log = logging.getLogger(__name__)
SOURCE_RETRIES = 3
T = TypeVar("T")


@dataclass
class TopicReport:
    ran: int = 0
    succeeded: int = 0
    skipped: int = 0
    failed: int = 0
    lost: int = 0
    errors: list[str] = field(default_factory=list)
    waiting: dict[str, Any] | None = None  # historical batches the budget holds back


class TopicsService(ServiceBase):
    """Building the topic catalog in the background, and reading it."""

    clock: Callable[[], datetime] = staticmethod(utc_now)

    def __init__(self, parts: EngineParts, events: EventsService) -> None:
        super().__init__(parts)
        self.events = events
        self._refiling: asyncio.Future[int] | None = None

    @property
    def store(self) -> TopicsStorage:
        return self.storage.topics

    async def follow_derivation(
        self, report: Any, pause: Callable[[], Awaitable[None]] | None = None
    ) -> None:
        """Wired after each derivation pass: the topic work its new events queued (with the
        pass's ``pause`` between jobs)."""
        report.topics = await self.process(pause=pause)

    async def bootstrap(self) -> list[str]:
        """At a writer's open: each space not yet under this projector version freezes its
        visible events as the historical set (batched, budgeted). The spaces done."""
        if not await self.store.spaces_to_bootstrap():
            return []
        now = self.clock()
        return await self.store.write(lambda tx: sync.bootstrap(tx, now))

    async def process(
        self, max_jobs: int | None = None, pause: Callable[[], Awaitable[None]] | None = None
    ) -> TopicReport:
        """Sync every space, then run due topic jobs until none is due (or ``max_jobs``),
        awaiting ``pause`` after each (a background worker yields to requests there)."""
        await self._sync_spaces(pause)
        report, owner = TopicReport(), worker_id()
        while max_jobs is None or report.ran < max_jobs:
            job = await self._claim_topic_job(owner)
            if job is None:
                break
            await self._run_topic_job(job, report)
            if pause is not None:
                await pause()
        report.waiting = await self.budget_wait(None)
        return report

    async def _sync_spaces(self, pause: Callable[[], Awaitable[None]] | None) -> None:
        """Each space's queue brought in step with its events, one short write per space
        (so requests waiting on the writer are not held behind every space at once)."""
        now = self.clock()
        for index, space in enumerate(await self.store.read(lambda tx: tx.all_spaces())):
            if index and pause is not None:  # between spaces: a pause follows jobs, not syncs
                await pause()
            await self.store.write(partial(sync.sync_if_present, space=space, now=now))

    async def retry(self, space: str) -> int:
        """Every topic batch of the space whose attempts ran out, queued again as a fresh
        job (historical ones still within the budget); how many batches."""
        now = self.clock()
        return await self.store.retry_failed(space, now)

    async def refile_unfiled(self) -> int:
        """The fallback entries of the events a write marked, made again by the topics' rule
        (``unfiled.refile``); how many were marked. The catalog's reads run it first.
        Callers at once share the one in flight: it re-files every mark committed before
        it took the write lock, so each caller's marks too (pages need not queue a write
        each behind the worker's)."""
        if self._refiling is None or self._refiling.done():
            self._refiling = asyncio.ensure_future(self.store.write(unfiled.refile))
        return await asyncio.shield(self._refiling)

    async def _read(self, unit: Callable[[TopicsTransaction], T]) -> T:
        """``unit`` in one read of exact fallback entries: any a write marked are re-filed
        first (one read when none are, the common case)."""

        def exact(tx: TopicsTransaction) -> tuple[T] | None:
            return None if tx.spare_marked() else (unit(tx),)

        found = await self.store.read(exact)
        if found is None:
            await self.refile_unfiled()
            found = await self.store.read(exact)
        if found is None:  # marked after the shared re-filing took the write lock
            await self.store.write(unfiled.refile)
            found = (await self.store.read(unit),)
        return found[0]

    async def directory(self, space: str) -> str:
        """The directory injected into each model call: ≤ 400 estimated tokens, "" when the
        space has no topic and no event; in Chinese when the profile's preferred language
        or else the directory's own titles are."""
        weight = self.config.agent_memory_weight

        def read(tx: TopicsTransaction) -> tuple[Listing, str]:
            listing = catalog.listing(tx, space, weight, None, 0, DIRECTORY_ENTRIES)
            return listing, tx.preferred_language()

        listing, preferred = await self._read(read)
        shown = [*listing.entries, *listing.firsts.values()]
        titles = [entry.title for entry in shown if entry.status == "ready"]
        language = directory_language(preferred, titles)
        return render_directory(listing, language=language)

    async def catalog(
        self,
        space: str,
        query: str | None = None,
        category: str | None = None,
        offset: int = 0,
        limit: int = DEFAULT_LIMIT,
    ) -> dict[str, Any]:
        """``memory_list_topics``: one page of chapters then fallback entries (BM25 over
        title ×4 and description ×2 when ``query``), and every category's count."""
        if not 1 <= limit <= MAX_LIMIT or offset < 0:
            raise InvalidInput(f"limit must be 1–{MAX_LIMIT} and offset ≥ 0")
        if category is not None and category not in CATEGORIES:
            raise InvalidInput(f"unknown category {category!r}; one of {', '.join(CATEGORIES)}")
        words = (query or "").strip()[:MAX_QUERY]
        weight = self.config.agent_memory_weight
        listing = await self._read(
            lambda tx: catalog.listing(tx, space, weight, category, offset, limit, words)
        )
        return topic_page(space, listing, offset, limit, category)

    async def expand(
        self, space: str, topic_id: str, section: int | None = None, offset: int = 0
    ) -> dict[str, Any]:
        """``memory_expand_topic``: one chapter or fallback entry within 2,400 tokens, each
        section with its first page of events; with ``section`` (its number), that
        section's events from ``offset``, a page of 9."""
        weight = self.config.agent_memory_weight
        entry, topic = await self._read(lambda tx: catalog.opened(tx, space, topic_id, weight))
        if section is None:
            return bounded_topic(space, entry, topic)
        return section_page(space, entry, topic, section, offset)

    async def search_events(
        self, space: str, topic_id: str, query: str, limit: int, offset: int = 0
    ) -> list[EventHit]:
        """A topic's events: those matching ``query`` best first (the space's event search
        ranks the ``TOPIC_SEARCH_DEPTH`` best, the topic's are kept), else in member order."""
        cards = await self.events_of(space, topic_id)
        if not query.strip():
            return [EventHit(card=card, rank_score=0.0) for card in cards[offset : offset + limit]]
        members = {card.id for card in cards}
        found = await self.events.search(space, query, limit=TOPIC_SEARCH_DEPTH)
        inside = [hit for hit in found if hit.card.id in members]
        return inside[offset : offset + limit]

    async def events_of(self, space: str, topic_id: str) -> list[EventCard]:
        """The visible events an entry holds, in membership order (a fallback: its event)."""
        weight = self.config.agent_memory_weight

        def read(tx: TopicsTransaction) -> list[EventCard]:
            _, topic = catalog.opened(tx, space, topic_id, weight)
            ids = topic.member_ids if topic else [topic_id.removeprefix(FALLBACK_PREFIX)]
            cards = {card.id: card for card in tx.visible_cards(space, ids)}
            return [cards[i] for i in ids if i in cards]

        return await self._read(read)

    async def book(
        self, space: str, pending_limit: int | None = None, window: tuple[int, int] | None = None
    ) -> dict[str, Any]:
        """Chapters → sections → event ids in their shown order, the batches still pending
        or failed (the oldest ``pending_limit``, ``None``: all; ``pendingCounts`` counts
        them all by state), how many events are fallback entries (the CLI's and web view's),
        and ``waiting``: the historical batches the budget holds back, why and until when.
        ``window`` (offset, count): only those chapters, with the counts of all of them
        (``catalog.book``)."""
        weight = self.config.agent_memory_weight
        book = await self._read(lambda tx: catalog.book(tx, space, weight, pending_limit, window))
        book["waiting"] = await self.budget_wait(space)
        return book

    async def jobs_due(self) -> bool:
        """Would a topic pass claim a job now? An idle worker asks every few seconds,
        beside derivation's ``jobs_due``: a topic job queued or given back by another
        process (a CLI retry, a write lock it lost) otherwise waited for the next turn.
        Historical batches count only while the budget has a slot for one."""
        now = self.clock()
        incremental, historical, ledger = await self.store.due_now(now)
        if incremental:
            return True
        if not historical:
            return False
        return self._topic_projector_is_free() or budget.next_slot(ledger, now) is None

    async def budget_wait(self, space: str | None) -> dict[str, Any] | None:
        """The space's (``None``: every space's) historical batches held back by the
        budget (``budget.waiting``); ``None`` when none are, and always with a free
        projector (the budget bounds model cost)."""
        if self._topic_projector_is_free():
            return None
        now = self.clock()
        count, ledger = await self.store.budget_state(space)
        return budget.waiting(count, ledger, now)

    def _topic_projector(self) -> StructuredModel:
        return self.model if self.config.topic_projector == "model" else _GROUPER

    def _topic_projector_is_free(self) -> bool:
        """The offline grouper, or a model marked ``free`` (``model: {…, free: true}``,
        ``STRATAGATE_FREE=true``): no model cost, so no historical budget."""
        model = self._topic_projector()
        if isinstance(model, OfflineModel):
            return True
        config = getattr(model, "config", None)
        return bool(getattr(model, "free", False) or getattr(config, "free", False))

    async def _claim_topic_job(self, owner: str) -> Job | None:
        now = self.clock()
        free = self._topic_projector_is_free()
        reserve = None if free else lambda ledger: budget.reserve(ledger, now)
        return await self.store.claim(now, owner, TOPIC_LEASE, reserve)

    async def _run_topic_job(self, job: Job, report: TopicReport) -> None:
        report.ran += 1

        async def renew() -> bool:
            until = self.clock() + TOPIC_LEASE
            return await self.store.renew(job, until)

        try:
            async with heartbeat(renew, TOPIC_LEASE):
                outcome = await self._project(job)
        except asyncio.CancelledError:
            await self._give_topic_back(job)
            raise
        except StorageBusy:  # another process's write lock, not the batch's fault: run again
            await self._give_topic_back(job)
            return
        except (ModelError, StrataGateError) as error:
            await self._topic_failure(job, f"{type(error).__name__}: {error}", report)
            return
        except Exception as error:  # a bug must not wedge the queue
            log.exception("topic job %s crashed", job.id)
            await self._topic_failure(job, f"internal error: {error!r}", report)
            return
        if outcome == LOST:
            report.lost += 1
        elif outcome == "skipped":
            report.skipped += 1
        else:
            report.succeeded += 1

    async def _give_topic_back(self, job: Job) -> None:
        """Hand a held job back at once; should the file still be locked, its lease runs out."""
        now = self.clock()
        try:
            await self.store.interrupt(job, now)
        except StorageBusy:
            log.warning("could not give back topic job %s: the file is locked", job.id)

    async def _topic_failure(self, job: Job, message: str, report: TopicReport) -> None:
        now = self.clock()
        failed = await self.store.fail(job, message, now, BACKOFF_UNIT_S)
        if failed is None:
            report.lost += 1
            return
        report.failed += 1
        report.errors.append(f"topic batch {job.target_id}: {message}")

    async def _project(self, job: Job) -> str:
        """The batch projected by the configured projector; when the model fails it (after
        its client's retries, or with an invalid projection) the embedded grouper answers,
        the job marked ``offline-fallback`` with the model's error (``derivation/fallback``)."""
        projector = self._topic_projector()
        try:
            return await self._project_fresh(job, projector)
        except (ModelError, InvalidProjection) as error:
            if projector is _GROUPER or not self.config.offline_fallback:
                raise
            line = error_line(error)
            log.warning("topic batch %s grouped offline: %s", job.target_id, line)
            return await self._project_fresh(job, _GROUPER, line)

    async def _project_fresh(
        self, job: Job, projector: StructuredModel, fell_back: str | None = None
    ) -> str:
        """Projected again from a fresh read when an event or chapter it read changed before
        the commit (another job revised it meanwhile): a stale answer is never applied, and
        a batch that merely raced is not a failure. After ``SOURCE_RETRIES`` it fails."""
        for attempt in range(SOURCE_RETRIES + 1):
            try:
                return await self._project_with(job, projector, fell_back)
            except SourceChanged as changed:
                if attempt == SOURCE_RETRIES:
                    raise
                log.info("topic batch %s read again: %s", job.target_id, changed)
        raise AssertionError("unreachable")

    async def _project_with(
        self, job: Job, projector: StructuredModel, fell_back: str | None = None
    ) -> str:
        grouper = projector is _GROUPER
        given = await self.store.read(lambda tx: read_input(tx, job, grouper))
        if not given.batch_ids:
            now = self.clock()
            return await self.store.write(lambda tx: commit(tx, job, given, None, now))
        task = StructuredTask(
            PROJECT_MEMORY_TOPICS,
            TopicProjection,
            load_prompt(PROJECT_MEMORY_TOPICS),
            given.payload,
            max_output_tokens=OUTPUT_TOKENS,
        )
        answer = await projector.complete(task)
        result = held_to_limit(answer, given.candidates, given.labels)
        validate_projection(
            result, given.batch_ids, given.candidates, given.labels, given.truncated
        )
        now = self.clock()

        def write(tx: TopicsTransaction) -> str:
            outcome = commit(tx, job, given, result, now, grouper)
            if fell_back is not None and outcome != LOST:
                tx.mark_job(job.id, OFFLINE_FALLBACK, fell_back)
            return outcome

        return await self.store.write(write)
