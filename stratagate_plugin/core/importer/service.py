"""External-memory import on the façade (spec §11.4): preview, commit, undo, export.

``import_preview`` only parses and persists the job; ``analysis/service.py`` analyses it (and
finds the job that a new preview of the same text would only repeat). ``import_commit``
decides the batch on one read of the job (``ImportsStorage.commit_view``) and writes it
whole in one transaction (source block, events with their supersede and conflict links,
graph projection queued) — decided again if the job, its text, its targets or the turn
changed in between — and ``import_undo`` takes it all back in one.
"""

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from ..clock import iso, utc_now
from ..errors import InvalidInput, require_names
from ..events.cards import EventCard
from ..text.clean import valid_text
from ..text.secrets import redact_value
from . import decider
from .analysis.service import ImportAnalysis, job_payload, process_owner, with_liveness
from .cards import export_document, import_card
from .jobs import ANALYSING, COMMITTABLE, Action, CommitPlan, ImportBatch, ImportJob, ImportUndo
from .source_block import source_block
from .sources import to_document
from .storage import BatchWrite, CommitView, NewJob, SourceBlock, StaleCommit

EXPORT_LIMIT = 1_000_000
SOURCE_NAME_LIMIT = 80
COMMIT_ATTEMPTS = 5  # a commit decided again when what it was decided on changed


class ImportService(ImportAnalysis):
    """The import wizard's and the CLI's use cases (``stratagate import``, ``export``);
    analysis is ``analysis/service.py``'s, and an export reads the profile."""

    async def preview(
        self, space: str, text: str, fmt: str = "auto", source: str | None = None
    ) -> ImportJob:
        """Parse ``text`` and persist a job (``processing``; ``extracting`` when the text
        needs recovery; ``ready`` with no candidates). Nothing is analysed yet. ``source``
        names where the text came from when the text cannot (a pasted list is ``unknown``)."""
        require_names(namespace=space)
        named = source_name(source)
        if isinstance(text, str):
            text = valid_text(text)  # a lone surrogate becomes U+FFFD, as on every entry
        parsed = to_document(text, fmt)
        document = parsed.document
        status = (
            "extracting" if document is None else "processing" if document.candidates else "ready"
        )
        payload = {**job_payload(document, recovered=document is None), "owner": process_owner()}
        candidates = [c.to_v2() for c in document.candidates] if document else []
        source = named or (document.source_system if document else "unknown")
        now = iso(utc_now())
        job = NewJob(space, status, parsed.fmt, source, text, payload, candidates, now)
        return await self.job(await self.store.insert_job(job))

    async def resumable(self, space: str, text: str, fmt: str = "auto") -> ImportJob | None:
        """The space's job for exactly this text (and format) that a new preview would only
        repeat: analysed and not committed, or abandoned mid-analysis; None if there is none.
        A job another live process is still analysing is left to it."""
        text = valid_text(text)
        found = await self.store.jobs_with_text(space, text, (*COMMITTABLE, *ANALYSING))
        for stored in found:
            job = with_liveness(stored)
            if fmt in ("auto", job.format) and (job.status in COMMITTABLE or job.abandoned):
                return job
        return None

    async def commit(
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
        for _ in range(COMMIT_ATTEMPTS):
            view = await self.store.commit_view(job_id)
            decider.check_committable(view.job, chosen)
            every = decider.with_proposals(view.job, chosen, take_proposals)
            try:
                return await self.store.write_batch(await self._batch(view, every, now), view)
            except StaleCommit:
                continue  # analysed, undone or purged meanwhile: decide again on what is
        raise InvalidInput(f"import {job_id} kept changing while it was committed; try again")

    async def _batch(
        self, view: CommitView, chosen: Mapping[int, Action], now: datetime
    ) -> BatchWrite:
        """What a commit writes: per item what it does now (a target no longer live makes
        it IGNORE), the source block, the cards."""
        job = view.job
        finals = decider.final_actions(job.items, chosen, view.live)
        merging = [t for final in finals if final.action == "MERGE" for t in final.target_ids]
        targets = await self.store.event_cards(merging) if merging else {}
        source = source_block(await self.store.job_text(job.id))
        cards = [
            _card(job, final, targets, source, view.turn, now)
            for final in finals
            if final.action != "IGNORE"
        ]
        payload = {
            "event_ids": [card.id for card in cards],
            "imported": len(cards),
            "ignored": len(finals) - len(cards),
            "final": [final.model_dump() for final in finals],
        }
        defaults = (self.config.block_turn_size, self.config.block_decay_lambda)
        merged_from = list(targets.values())
        return BatchWrite(
            job.id, job.namespace, source, cards, merged_from, dict(chosen), payload, defaults,
            iso(now),
        )  # fmt: skip

    async def commit_plan(
        self,
        job_id: str,
        choices: Mapping[int, str] | None = None,
        *,
        take_proposals: bool = False,
    ) -> CommitPlan:
        """What ``import_commit`` with these arguments would write and ignore now, so the
        wizard and the CLI can say how many items will be ignored before committing."""
        chosen = decider.checked_choices(choices or {})
        view = await self.store.commit_view(job_id)
        every = decider.with_proposals(view.job, chosen, take_proposals)
        return decider.commit_plan(view.job, every, view.live, chosen)

    async def commit_plans(self, job: ImportJob) -> tuple[CommitPlan, CommitPlan]:
        """The plan of a job already read (the wizard's page) as it stands and taking every
        proposal, from one read of which targets are still live."""
        live = await self.store.live_events(job.named_event_ids)
        taking = decider.with_proposals(job, {}, True)
        return decider.commit_plan(job, {}, live, {}), decider.commit_plan(job, taking, live, {})

    async def undo(self, batch_id: str) -> ImportUndo:
        """Remove the batch's events and source block, restore what they superseded."""
        removed = await self.store.remove_batch(batch_id, iso(utc_now()))
        if removed is None:
            raise InvalidInput(f"import batch {batch_id} was already undone")
        return ImportUndo(
            batch_id=batch_id,
            job_id=removed.job_id,
            namespace=removed.namespace,
            removed_event_ids=removed.event_ids,
            restored_event_ids=removed.restored_ids,
            removed_graph_node_ids=removed.graph_node_ids,
        )

    async def batch(self, batch_id: str) -> ImportBatch:
        """One batch by its id (its source block's); NotFound for an unknown one."""
        return await self.store.batch(batch_id)

    async def batches(self, space: str) -> list[ImportBatch]:
        """The space's committed (and undone) batches, newest first."""
        return await self.store.batches(space)

    async def export_space(self, space: str, include_profile: bool = False) -> dict[str, Any]:
        """The space's active events (both pools) as a v2 document that round-trips."""
        require_names(namespace=space)
        cards = await self.store.active_cards(space, EXPORT_LIMIT)
        profile = (await self.profile.get()).values if include_profile else None
        # a file handed to another tool: redacted again, for cards stored before a key shape
        # was known (the web's guard does the same for its pages)
        document: dict[str, Any] = redact_value(export_document(cards, utc_now(), profile))
        return document


def source_name(source: str | None) -> str | None:
    """The user's name for an import's source: one line, at most 80 characters; blank is
    none (the document's own ``sourceSystem`` then, or ``unknown``)."""
    if source is None:
        return None
    named = " ".join(valid_text(source).split())
    if len(named) > SOURCE_NAME_LIMIT:
        raise InvalidInput(f"the source name is longer than {SOURCE_NAME_LIMIT} characters")
    return named or None


def _card(
    job: ImportJob,
    final: decider.Final,
    targets: Mapping[str, EventCard],
    source: SourceBlock,
    turn: int,
    now: datetime,
) -> EventCard:
    """An item's new card; a MERGE's keeps what its live targets said (``import_card``)."""
    item = job.items[final.index]
    return import_card(
        item.candidate,
        final,
        merged_from=[targets[t] for t in final.target_ids] if final.action == "MERGE" else [],
        proposed=item.merged_summary,
        space=job.namespace,
        block_id=source.block_id,
        message_id=source.message_id,
        turn=turn,
        now=now,
    )
