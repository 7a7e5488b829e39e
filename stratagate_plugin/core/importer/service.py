"""External-memory import on the façade (spec §11.4): preview, commit, undo, export.

``import_preview`` only parses and persists the job; ``analysis/service.py`` analyses it (and
finds the job that a new preview of the same text would only repeat). ``import_commit``
writes the whole batch in one transaction (source block, events with their supersede and
conflict links, graph projection queued), and ``import_undo`` takes it all back in one.
"""

import sqlite3
from collections.abc import Mapping
from typing import Any

from ..clock import iso, utc_now
from ..errors import InvalidInput, NotFound, require_names
from ..events.cards import EventCard
from ..store import event_rows, graph_jobs
from ..store import import_batch_rows as batch_rows
from ..store import import_rows as rows
from ..text.clean import valid_text
from ..text.secrets import redact_value
from . import decider
from .analysis.service import ImportAnalysis, job_payload, process_owner
from .cards import export_document, import_card
from .jobs import (
    ANALYSING,
    COMMITTABLE,
    Action,
    CommitPlan,
    ImportBatch,
    ImportJob,
    ImportUndo,
    batch_from_row,
    job_from_row,
    payload_of,
)
from .sources import to_document

EXPORT_LIMIT = 1_000_000
SOURCE_NAME_LIMIT = 80


class ImportService(ImportAnalysis):
    """The import wizard's and the CLI's use cases (``stratagate import``, ``export``);
    analysis is ``analysis/service.py``'s, and an export reads the profile."""

    async def preview(
        self, namespace: str, text: str, fmt: str = "auto", source: str | None = None
    ) -> ImportJob:
        """Parse ``text`` and persist a job (``processing``; ``extracting`` when the text
        needs recovery; ``ready`` with no candidates). Nothing is analysed yet. ``source``
        names where the text came from when the text cannot (a pasted list is ``unknown``)."""
        require_names(namespace=namespace)
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
        job_id = await self.db.write(
            lambda raw: rows.insert_job(
                raw, namespace, status, parsed.fmt, source, text, payload, candidates, now
            )
        )
        return await self.job(job_id)

    async def resumable(self, namespace: str, text: str, fmt: str = "auto") -> ImportJob | None:
        """The space's job for exactly this text (and format) that a new preview would only
        repeat: analysed and not committed, or abandoned mid-analysis; None if there is none.
        A job another live process is still analysing is left to it."""
        text = valid_text(text)
        found = await self.db.read(
            lambda raw: rows.jobs_with_text(raw, namespace, text, (*COMMITTABLE, *ANALYSING))
        )
        for row in found:
            job = await self.job(row["id"])
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

        def commit(raw: sqlite3.Connection) -> ImportBatch:
            row = rows.job_row(raw, job_id)
            job = job_from_row(row, rows.item_rows(raw, job_id))
            decider.check_committable(job, chosen)
            every = decider.with_proposals(job, chosen, take_proposals)
            return _write_batch(raw, job, every, self._defaults, now)

        return await self.db.write(commit)

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

        def plan(raw: sqlite3.Connection) -> CommitPlan:
            job = job_from_row(rows.job_row(raw, job_id), rows.item_rows(raw, job_id))
            every = decider.with_proposals(job, chosen, take_proposals)
            return decider.commit_plan(job, every, _live_targets(raw, job), chosen)

        return await self.db.read(plan)

    async def commit_plans(self, job: ImportJob) -> tuple[CommitPlan, CommitPlan]:
        """The plan of a job already read (the wizard's page) as it stands and taking every
        proposal, from one read of which targets are still live."""
        live = await self.db.read(lambda raw: _live_targets(raw, job))
        taking = decider.with_proposals(job, {}, True)
        return decider.commit_plan(job, {}, live, {}), decider.commit_plan(job, taking, live, {})

    async def undo(self, batch_id: str) -> ImportUndo:
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

    async def batch(self, batch_id: str) -> ImportBatch:
        """One batch by its id (its source block's); NotFound for an unknown one."""
        return batch_from_row(await self.db.read(lambda raw: rows.batch_job(raw, batch_id)))

    async def batches(self, namespace: str) -> list[ImportBatch]:
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


# -- helpers over rows ----------------------------------------------------------------------


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
