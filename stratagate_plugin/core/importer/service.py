"""External-memory import on the façade (spec §11.4): preview, analysis, commit, undo, export.

``import_preview`` only parses and persists the job. ``import_advance`` analyses pending
candidates one at a time: reads, then the decider outside any transaction, then one small
write that fills that index's slot only if still empty — so a restart, a second worker or
a replay resumes where the job stood and never decides an index twice. ``import_commit``
writes the whole batch in one transaction (source block, events with their supersede and
conflict links, graph projection queued), and ``import_undo`` takes it all back in one.
The plugin's worker calls ``import_advance_pending`` every round.
"""

import asyncio
import logging
import sqlite3
from collections.abc import Mapping
from typing import Any

from ..clock import iso, utc_now
from ..errors import InvalidInput, NotFound, require_names
from ..events.cards import EventCard
from ..events.service import EventSearchService
from ..profile.service import ProfileService
from ..remember.rules import decider_timeout
from ..retrieval.query import parse_query
from ..store import event_rows, graph_jobs
from ..store import import_batch_rows as batch_rows
from ..store import import_rows as rows
from ..text.clean import valid_text
from ..text.secrets import redact_value
from . import decider
from .cards import export_document, import_card
from .external_format import ExternalCandidate, ExternalDocument
from .jobs import (
    ANALYSING,
    Action,
    CommitPlan,
    Decision,
    ImportBatch,
    ImportJob,
    ImportUndo,
    MatchedEvent,
    batch_from_row,
    job_from_row,
    payload_of,
)
from .sources import recover_offline, recovered_document, recovery_task, to_document

log = logging.getLogger(__name__)
DUPLICATE_SCAN = 2000
EXPORT_LIMIT = 1_000_000


class ImportService(ProfileService, EventSearchService):
    """The import wizard's and the CLI's use cases (``stratagate import``, ``export``);
    it searches events as the search tool does and reads the profile for an export."""

    async def import_preview(self, namespace: str, text: str, fmt: str = "auto") -> ImportJob:
        """Parse ``text`` and persist a job (``processing``; ``extracting`` when the text
        needs recovery; ``ready`` with no candidates). Nothing is analysed yet."""
        require_names(namespace=namespace)
        if isinstance(text, str):
            text = valid_text(text)  # a lone surrogate becomes U+FFFD, as on every entry
        parsed = to_document(text, fmt)
        document = parsed.document
        status = (
            "extracting" if document is None else "processing" if document.candidates else "ready"
        )
        payload = _payload(document, recovered=document is None)
        candidates = [c.to_v2() for c in document.candidates] if document else []
        source = document.source_system if document else "unknown"
        now = iso(utc_now())
        job_id = await self.db.write(
            lambda raw: rows.insert_job(
                raw, namespace, status, parsed.fmt, source, text, payload, candidates, now
            )
        )
        return await self.import_job(job_id)

    async def import_advance(self, job_id: str, max_items: int | None = None) -> ImportJob:
        """Analyse up to ``max_items`` pending candidates (all by default), each decision
        persisted as it is reached; a job past analysis is returned as it is."""
        job = await self.import_job(job_id)
        if job.status == "extracting":
            job = await self._recover(job)
        if job.status == "processing":
            await self._analyse_pending(job, max_items)
            job = await self._finish_analysis(job_id)
        return job

    async def import_advance_pending(self) -> int:
        """Advance every job still extracting or processing; how many items were analysed."""
        analysed = 0
        for job_id in await self.db.read(lambda raw: rows.jobs_in(raw, ANALYSING)):
            before = (await self.import_job(job_id)).processed
            try:
                after = (await self.import_advance(job_id)).processed
            except Exception as error:  # one broken job must not stop the others
                log.warning("StrataGate import %s: %s", job_id, error)
                continue
            analysed += max(0, after - before)
        return analysed

    async def import_job(self, job_id: str) -> ImportJob:
        """The job with its items; ``NotFound`` for an unknown id."""

        def read(raw: sqlite3.Connection) -> ImportJob:
            return job_from_row(rows.job_row(raw, job_id), rows.item_rows(raw, job_id))

        return await self.db.read(read)

    async def import_jobs(self, namespace: str, limit: int = 50) -> list[ImportJob]:
        """The space's newest jobs first."""

        def read(raw: sqlite3.Connection) -> list[ImportJob]:
            found = rows.list_jobs(raw, namespace, max(1, limit))
            return [job_from_row(row, rows.item_rows(raw, row["id"])) for row in found]

        return await self.db.read(read)

    async def import_commit(
        self,
        job_id: str,
        choices: Mapping[int, str] | None = None,
        *,
        take_proposals: bool = False,
    ) -> ImportBatch:
        """Write the batch in one transaction; ``choices`` (index → action) decide the
        items that need confirmation (those left out are IGNORE, or with ``take_proposals``
        their proposed action) or override others."""
        chosen = decider.checked_choices(choices or {})
        now = utc_now()

        def commit(raw: sqlite3.Connection) -> ImportBatch:
            row = rows.job_row(raw, job_id)
            job = job_from_row(row, rows.item_rows(raw, job_id))
            decider.check_committable(job, chosen)
            every = decider.with_proposals(job, chosen, take_proposals)
            return _write_batch(raw, job, every, self._defaults, now)

        return await self.db.write(commit)

    async def import_commit_plan(
        self,
        job_id: str,
        choices: Mapping[int, str] | None = None,
        *,
        take_proposals: bool = False,
    ) -> CommitPlan:
        """What ``import_commit`` with these arguments would write and ignore now, so the
        wizard and the CLI can say how many items will be ignored before committing."""
        chosen = decider.checked_choices(choices or {})

        def plan(raw: sqlite3.Connection) -> CommitPlan:
            job = job_from_row(rows.job_row(raw, job_id), rows.item_rows(raw, job_id))
            every = decider.with_proposals(job, chosen, take_proposals)
            return decider.commit_plan(job, every, _live_targets(raw, job), chosen)

        return await self.db.read(plan)

    async def import_commit_plans(self, job: ImportJob) -> tuple[CommitPlan, CommitPlan]:
        """The plan of a job already read (the wizard's page) as it stands and taking every
        proposal, from one read of which targets are still live."""
        live = await self.db.read(lambda raw: _live_targets(raw, job))
        taking = decider.with_proposals(job, {}, True)
        return decider.commit_plan(job, {}, live, {}), decider.commit_plan(job, taking, live, {})

    async def import_undo(self, batch_id: str) -> ImportUndo:
        """Remove the batch's events and source block, restore what they superseded."""
        now = iso(utc_now())

        def undo(raw: sqlite3.Connection) -> ImportUndo:
            row = rows.batch_job(raw, batch_id)
            if row["status"] != "committed":
                raise InvalidInput(f"import batch {batch_id} was already undone")
            removed = batch_rows.remove_batch(raw, batch_id, now)
            rows.mark_undone(raw, row["id"], now)
            return ImportUndo(
                batch_id=batch_id,
                job_id=row["id"],
                namespace=row["namespace"],
                removed_event_ids=removed.event_ids,
                restored_event_ids=removed.restored_ids,
                removed_graph_node_ids=removed.graph_node_ids,
            )

        return await self.db.write(undo)

    async def import_batch(self, batch_id: str) -> ImportBatch:
        """One batch by its id (its source block's); NotFound for an unknown one."""
        return batch_from_row(await self.db.read(lambda raw: rows.batch_job(raw, batch_id)))

    async def import_batches(self, namespace: str) -> list[ImportBatch]:
        """The space's committed (and undone) batches, newest first."""
        found = await self.db.read(lambda raw: rows.batch_jobs(raw, namespace))
        return [batch_from_row(row) for row in found]

    async def export_space(self, namespace: str, include_profile: bool = False) -> dict[str, Any]:
        """The space's active events (both pools) as a v2 document that round-trips."""
        require_names(namespace=namespace)

        def read(raw: sqlite3.Connection) -> list[Any]:
            if not rows.namespace_exists(raw, namespace):
                raise NotFound(f"no memory space named {namespace!r}")
            return event_rows.list_events(raw, namespace, ("active",), limit=EXPORT_LIMIT)

        cards = await self.db.read(read)
        profile = (await self.get_profile()).values if include_profile else None
        # a file handed to another tool: redacted again, for cards stored before a key shape
        # was known (the web's guard does the same for its pages)
        document: dict[str, Any] = redact_value(export_document(cards, utc_now(), profile))
        return document

    # -- analysis ------------------------------------------------------------------------

    async def _recover(self, job: ImportJob) -> ImportJob:
        """The model's recovery of unparseable text, else the offline reader; no candidate
        recovered → ``failed``."""
        text = await self.db.read(lambda raw: rows.job_text(raw, job.id))
        try:
            document = recovered_document(await self.model.complete(recovery_task(text)))
        except Exception as failure:
            log.debug("StrataGate import recovery by the model failed: %s", failure)
            document = recover_offline(text)
        now = iso(utc_now())
        candidates = [c.to_v2() for c in document.candidates]
        status = "processing" if candidates else "failed"
        problem = None if candidates else "nothing could be recovered from the text"

        def save(raw: sqlite3.Connection) -> None:
            if rows.job_row(raw, job.id)["status"] != "extracting":
                return  # another worker recovered it first
            rows.set_candidates(raw, job.id, candidates, now)
            payload = {**_payload(document, recovered=True), "dropped": document.dropped}
            source = document.source_system
            rows.set_status(
                raw, job.id, status, now, error=problem, payload=payload, source_system=source
            )

        await self.db.write(save)
        return await self.import_job(job.id)

    async def _analyse_pending(self, job: ImportJob, max_items: int | None) -> None:
        limit = len(job.items) if max_items is None else max(0, max_items)
        pending = await self.db.read(lambda raw: rows.pending_indexes(raw, job.id, limit))
        for index in pending:
            await self._save_decision(job.id, index, await self._decide(job, index))

    async def _save_decision(self, job_id: str, index: int, decision: Decision) -> None:
        data, now = decision.model_dump(), iso(utc_now())
        await self.db.write(lambda raw: rows.record_decision(raw, job_id, index, data, now))

    async def _decide(self, job: ImportJob, index: int) -> Decision:
        candidate = job.items[index].candidate
        earlier = [item.candidate for item in job.items[:index]]
        same = decider.duplicate_of_item(candidate, earlier)
        if same is not None:
            return decider.exact_duplicate(decider.DUPLICATE_ITEM.format(index=same))
        key = decider.fingerprint(candidate.title, candidate.summary)
        twin = await self.db.read(lambda raw: _duplicate_event(raw, job.namespace, candidate, key))
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

    async def _top_matches(
        self, namespace: str, candidate: ExternalCandidate
    ) -> list[MatchedEvent]:
        """Top-K local events by §6.4 search of title, summary and tags, not tracked."""
        query = " ".join([candidate.title, candidate.summary, *candidate.tags])
        try:
            hits = await self.ranked_events(
                namespace,
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
        now = iso(utc_now())

        def finish(raw: sqlite3.Connection) -> None:
            job = job_from_row(rows.job_row(raw, job_id), rows.item_rows(raw, job_id))
            if job.status == "processing" and all(item.analysed for item in job.items):
                status = "awaiting_confirmation" if job.needs_confirmation else "ready"
                rows.set_status(raw, job_id, status, now)

        await self.db.write(finish)
        return await self.import_job(job_id)


# -- helpers over rows ----------------------------------------------------------------------


def _payload(document: ExternalDocument | None, *, recovered: bool) -> dict[str, Any]:
    if document is None:
        return {"recovered": recovered, "dropped": 0}
    meta = document.model_dump(
        by_alias=True,
        exclude_none=True,
        include={"coverage", "coverage_note", "uncertain_items", "exported_at"},
    )
    return {**meta, "recovered": recovered, "dropped": document.dropped}


def _duplicate_event(
    raw: sqlite3.Connection, namespace: str, candidate: ExternalCandidate, key: str
) -> MatchedEvent | None:
    """A live event (either pool) with the candidate's normalised title and summary."""
    text = f"{candidate.title} {candidate.summary}"
    for row in event_rows.sharing_a_token(raw, namespace, text, DUPLICATE_SCAN, every=True):
        if decider.fingerprint(row["title"], row["summary"]) == key:
            return MatchedEvent(
                id=row["id"], title=row["title"], summary=row["summary"], status=row["status"]
            )
    return None


def _merged_from(raw: sqlite3.Connection, final: decider.Final) -> list[EventCard]:
    """A MERGE's live targets, whose words, quotes and sources its card keeps whoever
    chose the merge (``cards.import_card``); none for another action."""
    if final.action != "MERGE":
        return []
    return [event_rows.get_event(raw, target) for target in final.target_ids]


def _live_targets(raw: sqlite3.Connection, job: ImportJob) -> set[str]:
    """The job's targets and matched events still live (a commit links only those)."""
    targets = [t for item in job.items for t in [*item.target_ids, *(m.id for m in item.matches)]]
    return event_rows.live_event_ids(raw, targets)


def _finals(
    raw: sqlite3.Connection, job: ImportJob, chosen: Mapping[int, Action]
) -> list[decider.Final]:
    """Per item what a commit does now (a target no longer live makes it IGNORE)."""
    return decider.final_actions(job.items, chosen, _live_targets(raw, job))


def _write_batch(
    raw: sqlite3.Connection,
    job: ImportJob,
    chosen: Mapping[int, Action],
    defaults: Any,
    now: Any,
) -> ImportBatch:
    finals = _finals(raw, job, chosen)
    text = rows.job_text(raw, job.id)
    stamp = iso(now)
    source = batch_rows.insert_source_block(raw, job.namespace, text, defaults, stamp)
    written = []
    for final in finals:
        if final.action == "IGNORE":
            continue
        item = job.items[final.index]
        card = import_card(
            item.candidate,
            final,
            merged_from=_merged_from(raw, final),
            proposed=item.merged_summary,
            namespace=job.namespace,
            block_id=source.block_id,
            message_id=source.message_id,
            turn=source.namespace_turn,
            now=now,
        )
        event_rows.insert_event(raw, card)
        written.append(card.id)
    graph_jobs.queue_events(raw, job.namespace, written, graph_jobs.AGENT_PRIORITY, stamp)
    rows.set_choices(raw, job.id, dict(chosen))
    payload = {
        **payload_of(rows.job_row(raw, job.id)),
        "event_ids": written,
        "imported": len(written),
        "ignored": len(finals) - len(written),
        "final": [final.model_dump() for final in finals],
    }
    rows.mark_committed(raw, job.id, source.block_id, payload, stamp)
    return batch_from_row(rows.job_row(raw, job.id))
