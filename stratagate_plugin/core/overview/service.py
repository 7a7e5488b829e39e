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
from ..records import EXTRACTION_JOB, SUMMARY_JOB, TOPIC_JOB, Job
from ..service_base import ServiceBase
from ..store import overview_rows as rows
from ..store.jobs import MAX_ATTEMPTS
from .rules import AuditEntry, JobFilter, Page, SpaceCounts, Stage, job_status, stages

STAGES = (("summaries", SUMMARY_JOB), ("extraction", EXTRACTION_JOB))
TOPIC_STAGE = ("topics", TOPIC_JOB)
__all__ = ["MAX_ATTEMPTS", "STAGES", "OverviewService"]
APPLIED = ("block_turn_size", "block_decay_lambda", "agent_memory_weight")


class OverviewService(ServiceBase):
    """What the memory page's status, jobs, audit, raw and settings views ask of the engine."""

    @property
    def database_path(self) -> Path:
        return self.db.path

    async def space_counts(self, namespace: str) -> SpaceCounts:
        """Blocks, events and jobs of the space by state, messages, open-tail turns and
        the receipts that adopted an event: index reads only, cheap to poll."""
        return await self.db.read(lambda raw: rows.space_counts(raw, namespace))

    def derivation_stages(self, counts: SpaceCounts) -> list[Stage]:
        """Short-term summaries (block summary jobs), then long-term extraction, then topic
        organisation once the space has topic jobs (a space without them shows two)."""
        kinds = (*STAGES, TOPIC_STAGE) if TOPIC_JOB in counts.jobs else STAGES
        return stages(counts, kinds)

    async def job_page(
        self, namespace: str, state: JobFilter = "all", offset: int = 0, limit: int = 50
    ) -> Page[Job]:
        """The space's jobs in one state (or all), last changed first."""
        status = job_status(state)
        found = await self.db.read(
            lambda raw: rows.job_page(raw, namespace, status, offset, limit + 1)
        )
        return Page.of(found, offset, limit)

    async def retry_failed_jobs_in(self, namespace: str) -> int:
        """Every failed job of the space queued again, attempts from zero (a topic batch as
        a fresh job under the historical budget, the topics page's rule); how many."""
        now = utc_now()
        return await self.db.write(lambda raw: rows.retry_failed_in(raw, namespace, now))

    async def usage_audit(
        self, namespace: str, offset: int = 0, limit: int = 100
    ) -> Page[AuditEntry]:
        """The space's usage receipts with their batch, newest first."""
        found = await self.db.read(lambda raw: rows.audit_page(raw, namespace, offset, limit + 1))
        return Page.of(found, offset, limit)

    async def usage_receipt(self, namespace: str, receipt_id: str) -> dict[str, Any]:
        """One usage receipt of the space as stored, with its batch; unknown → ``NotFound``."""
        found = await self.db.read(lambda raw: rows.receipt_record(raw, namespace, receipt_id))
        if found is None:
            raise NotFound(f"no usage receipt {receipt_id!r} in {namespace!r}")
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
        await self.db.write(lambda raw: rows.set_every_namespace(raw, size, decay))
        self.config = config
        return config
