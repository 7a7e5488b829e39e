"""``StrataGate``: the one entry point hosts, the CLI and the web app call.

It opens the database and composes one service per capability; each service's methods
are the use cases (pure rules joined with store transactions). No framework code here.
"""

import logging
import sqlite3
from datetime import datetime
from pathlib import Path

from .blocks.service import BlocksService
from .clock import utc_now
from .config import MemoryConfig
from .curation.service import CurationService
from .derivation.lease import dead_local_owners
from .derivation.service import DerivationService
from .events.service import EventsService
from .gate.service import GateService
from .graph.service import GraphService
from .importer.service import ImportService
from .llm.base import StructuredModel
from .llm.offline.model import OfflineModel
from .overview.service import OverviewService
from .profile.service import ProfileService
from .purge.service import PurgeService
from .remember.service import RememberService
from .retrieval.service import RetrievalService
from .store import Database, default_database_path, jobs
from .store.health import StorageError
from .timeline.service import TimelineService
from .topics.service import TopicsService

log = logging.getLogger(__name__)


class StrataGate(
    BlocksService,
    CurationService,
    DerivationService,
    EventsService,
    GateService,
    GraphService,
    ImportService,
    OverviewService,
    ProfileService,
    PurgeService,
    RememberService,
    RetrievalService,
    TimelineService,
    TopicsService,
):
    """The memory engine over one database file: each base is one capability's use cases.

    ``model`` defaults to the embedded offline model; which endpoint to use is decided by
    the wiring code (CLI, plugin runtime), never read from the environment here.
    """

    def __init__(
        self,
        db: Database,
        config: MemoryConfig | None = None,
        model: StructuredModel | None = None,
    ) -> None:
        self.db = db
        self.config = config or MemoryConfig()
        self.model = model or OfflineModel()

    @classmethod
    async def open(
        cls,
        path: Path | str | None = None,
        config: MemoryConfig | None = None,
        model: StructuredModel | None = None,
        busy_timeout_s: float | None = None,
    ) -> "StrataGate":
        """Open (creating or migrating) the file; running jobs whose lease ran out (their
        worker died) are failed, retryable now; a live worker's jobs are left alone; events
        no graph projection batch holds yet are queued for one; spaces not yet under this
        topic projector freeze their events for the topic bootstrap."""
        busy_ms = int(busy_timeout_s * 1000) if busy_timeout_s else None
        db = await Database(path or default_database_path(), busy_timeout_ms=busy_ms).open()
        now = utc_now()
        memory = cls(db, config, model)
        try:
            await _take_back_abandoned_jobs(db, now)
            await memory.backfill_graph()
            await _bootstrap_topics(memory)
            await memory.finish_interrupted_purge()
        except BaseException:
            await db.close()  # else its worker thread keeps the process alive
            raise
        return memory

    async def close(self) -> None:
        """Close the file, and the model's HTTP client if it has one."""
        await self.db.close()
        aclose = getattr(self.model, "aclose", None)
        if aclose is not None:
            await aclose()

    async def __aenter__(self) -> "StrataGate":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


async def _take_back_abandoned_jobs(db: Database, now: datetime) -> None:
    """Jobs whose lease ran out, or whose owner was a process of this machine that is gone
    (killed, crashed), become failed-retryable-now; a live worker's jobs are left alone.
    Asked first without a write lock, so an open does not wait behind another's write."""
    dead = dead_local_owners(await db.read(jobs.lease_holders))
    expired = await db.read(lambda raw: jobs.any_expired(raw, now))
    if dead or expired:

        def take_back(raw: sqlite3.Connection) -> None:
            jobs.release_owners(raw, dead, now)
            jobs.recover_expired(raw, now)

        await db.write(take_back)


async def _bootstrap_topics(memory: "StrataGate") -> None:
    """The topic bootstrap of spaces new to this projector; a file this process may only
    read (``stratagate events`` on a read-only copy) is opened all the same, as before."""
    try:
        await memory.bootstrap_topics()
    except StorageError as error:
        log.debug("StrataGate: topic bootstrap skipped: %s", error)
