"""The overview's use cases on the façade: a space's counts, its jobs and usage receipts by
page, one receipt as stored, and the memory settings a person saves applied at once.

Settings saved from the memory page are written into every space (spec §12.5: the UI's
block size and decay are the same everywhere) and become the engine's configuration, so
the next sealed block, decay and recall use them without a restart.
"""

from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..clock import utc_now
from ..config import MemoryConfig
from ..errors import InvalidInput, NotFound, validation_problems
from ..records import EXTRACTION_JOB, MAX_ATTEMPTS, SUMMARY_JOB, TOPIC_JOB, Job
from ..service_base import ServiceBase
from .rules import AuditEntry, JobFilter, Page, SpaceCounts, Stage, audit_entry, job_status, stages
from .storage import OverviewStorage

STAGES = (("summaries", SUMMARY_JOB), ("extraction", EXTRACTION_JOB))
TOPIC_STAGE = ("topics", TOPIC_JOB)
__all__ = ["MAX_ATTEMPTS", "STAGES", "OverviewService"]
APPLIED = ("block_turn_size", "block_decay_lambda", "agent_memory_weight")


class OverviewService(ServiceBase):
    """What the memory page's status, jobs, audit, raw and settings views ask of the engine."""

    @property
    def store(self) -> OverviewStorage:
        return self.storage.overview

    @property
    def database_path(self) -> Path:
        """The open database's file (the settings page names it): the engine's, not the
        storage contract's, since only a file-backed database has one."""
        return self.db.path

    @property
    def database_shown(self) -> str:
        """What the settings page shows of the open database: its file, or its server's
        URL with the password as ``***``."""
        return self.db.shown

    async def space_counts(self, space: str) -> SpaceCounts:
        """Blocks, events and jobs of the space by state, messages, open-tail turns and
        the receipts that adopted an event: index reads only, cheap to poll."""
        return SpaceCounts(**(await self.store.tallies(space))._asdict())

    def derivation_stages(self, counts: SpaceCounts) -> list[Stage]:
        """Short-term summaries (block summary jobs), then long-term extraction, then topic
        organisation once the space has topic jobs (a space without them shows two)."""
        kinds = (*STAGES, TOPIC_STAGE) if TOPIC_JOB in counts.jobs else STAGES
        return stages(counts, kinds)

    async def job_page(
        self, space: str, state: JobFilter = "all", offset: int = 0, limit: int = 50
    ) -> Page[Job]:
        """The space's jobs in one state (or all), last changed first."""
        status = job_status(state)
        found = await self.store.jobs(space, status, offset, limit + 1)
        return Page.of(found, offset, limit)

    async def retry_failed_jobs_in(self, space: str) -> int:
        """Every failed job of the space queued again, attempts from zero (a topic batch as
        a fresh job under the historical budget, the topics page's rule); how many."""
        return await self.store.retry_failed(space, utc_now())

    async def usage_audit(self, space: str, offset: int = 0, limit: int = 100) -> Page[AuditEntry]:
        """The space's usage receipts with their batch, newest first."""
        found = await self.store.receipts(space, offset, limit + 1)
        entries = [audit_entry(row._asdict(), row.event_ids, row.audit) for row in found]
        return Page.of(entries, offset, limit)

    async def usage_receipt(self, space: str, receipt_id: str) -> dict[str, Any]:
        """One usage receipt of the space as stored, with its batch; unknown → ``NotFound``."""
        found = await self.store.receipt(space, receipt_id)
        if found is None:
            raise NotFound(f"no usage receipt {receipt_id!r} in {space!r}")
        return found

    async def apply_settings(self, **values: Any) -> MemoryConfig:
        """``block_turn_size``, ``block_decay_lambda`` and ``agent_memory_weight`` checked
        as ``MemoryConfig`` does, written into every space, then the engine's config."""
        unknown = set(values) - set(APPLIED)
        if unknown:
            raise InvalidInput(f"not a memory setting: {', '.join(sorted(unknown))}")
        try:
            config = MemoryConfig.model_validate({**self.config.model_dump(), **values})
        except ValidationError as error:
            raise InvalidInput("; ".join(validation_problems(error, show_input=True))) from None
        size, decay = config.block_turn_size, config.block_decay_lambda
        await self.store.set_every_space(size, decay)
        self.config = config
        return config
