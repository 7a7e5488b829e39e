"""Façade facet: derivation jobs and reading event cards."""

from collections.abc import Callable

from ..clock import utc_now
from ..events.cards import EventCard
from ..records import Job
from ..service_base import ServiceBase
from ..store import event_rows, jobs
from .service import DerivationReport, Deriver


class DerivationFacet(ServiceBase):
    async def process_pending(
        self, max_jobs: int | None = None, on_job: Callable[[Job], None] | None = None
    ) -> DerivationReport:
        """Run every due derivation job now (summaries, then event extraction)."""
        return await Deriver(self.db, self.model).process_pending(max_jobs, on_job)

    async def list_jobs(self, namespace: str | None = None, status: str | None = None) -> list[Job]:
        return await self.db.read(lambda raw: jobs.list_jobs(raw, namespace, status))

    async def retry_job(self, job_id: str) -> Job:
        """Manual retry of a failed job: attempts start again and it runs at the next pass."""
        now = utc_now()
        return await self.db.write(lambda raw: jobs.retry(raw, job_id, now))

    async def list_events(
        self,
        namespace: str | None = None,
        *,
        block_id: str | None = None,
        include_hidden: bool = False,
        limit: int = 1000,
        offset: int = 0,
    ) -> list[EventCard]:
        statuses = event_rows.VISIBLE + (("forgotten", "archived") if include_hidden else ())
        return await self.db.read(
            lambda raw: event_rows.list_events(raw, namespace, statuses, block_id, limit, offset)
        )

    async def get_event(self, event_id: str) -> EventCard:
        return await self.db.read(lambda raw: event_rows.get_event(raw, event_id))
