"""Analysing an import job (spec §11.4): one candidate at a time, resumable, linear.

``import_advance`` reads the job once, then per pending candidate: the decider outside
any transaction, then one small write that fills that index's slot only if still empty —
so a restart, a second worker or a replay resumes where the job stood and never decides
an index twice. The process analysing a job owns it (``owner`` in its payload, the job's
``updated_at`` its heartbeat); a job whose owner is gone (killed) is ``abandoned``: it is
resumed, never discarded, by the next ``import`` of the same text, by ``import --commit
--job``, or by a running worker (the plugin's calls ``import_advance_pending`` every round).
"""

import asyncio
import logging
import os
from collections.abc import Callable, Mapping
from datetime import timedelta
from typing import Any

from ...clock import iso, utc_now
from ...derivation.lease import dead_local_owners, worker_id
from ...errors import NotFound
from ...events.service import EventsService
from ...profile.service import ProfileService
from ...remember.rules import decider_timeout
from ...retrieval.query import parse_query
from ...service_base import EngineParts, ServiceBase
from .. import decider
from ..external_format import ExternalCandidate, ExternalDocument
from ..jobs import ANALYSING, Decision, ImportJob, MatchedEvent
from ..sources import recover_offline, recovered_document, recovery_task
from ..storage import ImportsStorage, Recovery
from ..template_text import template_ignore, template_reason

log = logging.getLogger(__name__)
DUPLICATE_SCAN = 2000
ABANDONED_AFTER = timedelta(minutes=10)
"""A job analysed by nobody for this long is abandoned even if its owner may live (another
machine, a stalled process); a model call is bounded far below it."""

Progress = Callable[[int, int], None]
"""Told ``(processed, total)`` after each decision saved."""


class ImportAnalysis(ServiceBase):
    """Reading and analysing import jobs; it searches events as the search tool does and
    reads the profile it may change."""

    def __init__(self, parts: EngineParts, events: EventsService, profile: ProfileService) -> None:
        super().__init__(parts)
        self.events = events
        self.profile = profile

    @property
    def store(self) -> ImportsStorage:
        return self.storage.imports

    async def advance(
        self, job_id: str, max_items: int | None = None, progress: Progress | None = None
    ) -> ImportJob:
        """Analyse up to ``max_items`` pending candidates (all by default), each decision
        persisted as it is reached (and told to ``progress``); a job past analysis is
        returned as it is."""
        job = await self.job(job_id)
        if job.status in ANALYSING:
            await self._claim(job_id)
        if job.status == "extracting":
            job = await self._recover(job)
            await self._claim(job_id)
        if job.status == "processing":
            await self._analyse_pending(job, max_items, progress)
            job = await self._finish_analysis(job_id)
        return job

    async def advance_pending(self) -> int:
        """Advance every job still extracting or processing (abandoned ones too); how many
        items were analysed."""
        analysed = 0
        for job_id in await self.store.job_ids_in(ANALYSING):
            before = (await self.job(job_id)).processed
            try:
                after = (await self.advance(job_id)).processed
            except Exception as error:  # one broken job must not stop the others
                log.warning("StrataGate import %s: %s", job_id, error)
                continue
            analysed += max(0, after - before)
        return analysed

    async def job(self, job_id: str) -> ImportJob:
        """The job with its items; ``NotFound`` for an unknown id."""
        return with_liveness(await self.store.job(job_id))

    async def jobs(self, space: str, limit: int = 50) -> list[ImportJob]:
        """The space's newest jobs first."""
        return [with_liveness(job) for job in await self.store.jobs(space, max(1, limit))]

    async def _claim(self, job_id: str) -> None:
        owner, now = process_owner(), iso(utc_now())
        await self.store.claim(job_id, owner, now)

    async def _recover(self, job: ImportJob) -> ImportJob:
        """The model's recovery of unparseable text, else the offline reader; no candidate
        recovered → ``failed``."""
        text = await self.store.job_text(job.id)
        try:
            document = recovered_document(await self.model.complete(recovery_task(text)))
        except Exception as failure:
            log.debug("StrataGate import recovery by the model failed: %s", failure)
            document = recover_offline(text)
        now = iso(utc_now())
        candidates = [c.to_v2() for c in document.candidates]
        status = "processing" if candidates else "failed"
        problem = None if candidates else "nothing could be recovered from the text"
        payload = {**job_payload(document, recovered=True), "dropped": document.dropped}
        named = job.source_system != "unknown"  # the user named it at preview
        source = job.source_system if named else document.source_system
        recovery = Recovery(candidates, status, problem, payload, source, now)
        await self.store.save_recovery(job.id, recovery)  # False: another worker was first
        return await self.job(job.id)

    async def _analyse_pending(
        self, job: ImportJob, max_items: int | None, progress: Progress | None
    ) -> None:
        """Decide the pending items in order, each saved as reached. The job's items are
        read once per call and an item's earlier twin is looked up by its text's
        fingerprint, so analysis grows linearly with the items."""
        limit = len(job.items) if max_items is None else max(0, max_items)
        pending = await self.store.pending_indexes(job.id, limit)
        first = decider.first_of_each_text(item.candidate for item in job.items)
        for index in pending:
            done = await self._save_decision(job.id, index, await self._decide(job, index, first))
            if progress is not None and done is not None:
                progress(done, job.total)

    async def _save_decision(self, job_id: str, index: int, decision: Decision) -> int | None:
        """The decision saved, and this process the job's owner again: the last one to
        decide an item is the one whose death makes the job abandoned."""
        data, now, owner = decision.model_dump(), iso(utc_now()), process_owner()
        return await self.store.record_decision(job_id, index, data, owner, now)

    async def _decide(self, job: ImportJob, index: int, first: Mapping[str, int]) -> Decision:
        candidate = job.items[index].candidate
        if template := template_reason(candidate.summary, job.source_system):
            return template_ignore(template)
        key = decider.fingerprint(candidate.title, candidate.summary)
        same = first.get(key, index)
        if same < index:
            return decider.exact_duplicate(decider.DUPLICATE_ITEM.format(index=same))
        twin = await self._duplicate_event(job.namespace, candidate, key)
        if twin is not None:
            reason = decider.DUPLICATE_EVENT.format(event_id=twin.id)
            return decider.exact_duplicate(reason, [twin.id], [twin])
        matches = await self._top_matches(job.namespace, candidate)
        agent = decider.as_agent_candidate(candidate, utc_now())
        overlapping = decider.ambiguous(decider.score_matches(agent, matches))
        if not overlapping:
            return decider.clear_new(matches, job.recovered)
        timeout = decider_timeout(self.config.structured_task_timeout_s)
        try:
            task = decider.decision_task(agent, overlapping)
            answer = await asyncio.wait_for(self.model.complete(task), timeout)
        except Exception as error:
            fallback = decider.offline_decision(agent, overlapping)
            reason = f"model failed ({str(error)[:120] or type(error).__name__}); offline rule: "
            answer = fallback.model_copy(update={"reason": reason + fallback.reason})
            return decider.settle(
                answer,
                overlapping,
                matches,
                forced=True,
                gate="decider-error",
                summary=candidate.summary,
            )
        return decider.settle(
            answer, overlapping, matches, forced=job.recovered, summary=candidate.summary
        )

    async def _top_matches(self, space: str, candidate: ExternalCandidate) -> list[MatchedEvent]:
        """Top-K local events by §6.4 search of title, summary and tags, not tracked."""
        query = " ".join([candidate.title, candidate.summary, *candidate.tags])
        try:
            hits = await self.events.ranked(
                space,
                parse_query(query),
                limit=decider.TOP_K,
                agent_weight=self.config.agent_memory_weight,
                track_retrieval=False,
            )
        except NotFound:
            return []
        return [
            MatchedEvent(
                id=h.card.id, title=h.card.title, summary=h.card.summary, status=h.card.status
            )
            for h in hits
        ]

    async def _finish_analysis(self, job_id: str) -> ImportJob:
        job = await self.store.job(job_id)
        if job.status == "processing" and all(item.analysed for item in job.items):
            status = "awaiting_confirmation" if job.needs_confirmation else "ready"
            await self.store.finish_analysis(job_id, status, iso(utc_now()))
        return await self.job(job_id)

    async def _duplicate_event(
        self, space: str, candidate: ExternalCandidate, key: str
    ) -> MatchedEvent | None:
        """A live event (either pool) with the candidate's normalised title and summary."""
        text = f"{candidate.title} {candidate.summary}"
        for event in await self.store.events_sharing_words(space, text, DUPLICATE_SCAN):
            if decider.fingerprint(event.title, event.summary) == key:
                return event
        return None


_OWNERS: dict[int, str] = {}


def process_owner() -> str:
    """This process as a job's owner (``host:pid:random``, as derivation leases name it),
    made again in a forked child."""
    pid = os.getpid()
    if pid not in _OWNERS:
        _OWNERS[pid] = worker_id()
    return _OWNERS[pid]


def with_liveness(job: ImportJob) -> ImportJob:
    """``job`` marked abandoned when it is still being analysed by an owner that is gone."""
    if job.status not in ANALYSING:
        return job
    silent = utc_now() - job.updated_at > ABANDONED_AFTER
    gone = (
        job.owner is not None
        and job.owner != process_owner()
        and bool(dead_local_owners([job.owner]))
    )
    return job.model_copy(update={"abandoned": True}) if silent or gone else job


def job_payload(document: ExternalDocument | None, *, recovered: bool) -> dict[str, Any]:
    if document is None:
        return {"recovered": recovered, "dropped": 0}
    meta = document.model_dump(
        by_alias=True,
        exclude_none=True,
        include={"coverage", "coverage_note", "uncertain_items", "exported_at"},
    )
    return {**meta, "recovered": recovered, "dropped": document.dropped}
