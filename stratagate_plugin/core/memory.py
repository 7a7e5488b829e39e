"""``StrataGate``: the one entry point hosts, the CLI and the web app call.

It opens the database and composes one object per capability, the way Starlette's
``applications.py`` composes its parts: each object's methods are that capability's use
cases (pure rules joined with store transactions). No framework code here.
"""

import logging
from pathlib import Path

from .blocks.service import BlocksService
from .config import MemoryConfig
from .curation.service import CurationService
from .derivation.service import DerivationService
from .errors import StorageError
from .events.documents import EVENT_RULES
from .events.service import EventsService
from .gate.service import GateService
from .graph.service import GraphService
from .importer.service import ImportService
from .llm.base import StructuredModel
from .llm.offline.model import OfflineModel
from .overview.service import OverviewService
from .profile.service import ProfileService
from .purge.service import PurgeService
from .rebuilds import RebuildReport, default_report
from .remember.service import RememberService
from .retrieval.service import RetrievalService
from .service_base import EngineParts, SharedParts
from .spaces.service import SpacesService
from .store import Database, default_database_path
from .store.sqlite import SqliteStorage
from .store.units import UnitDatabase, is_database_url
from .timeline.service import TimelineService
from .topics.service import TopicsService

log = logging.getLogger(__name__)


class StrataGate(SharedParts):
    """The memory engine over one database: one object per capability, each with its own
    small API (``memory.events.search(…)``, ``memory.blocks.expand(…)``,
    ``memory.imports.preview(…)``, ``memory.graph.node(…)``), all sharing one database,
    settings and model.

    ``model`` defaults to the embedded offline model; which endpoint to use is decided by
    the wiring code (CLI, plugin runtime), never read from the environment here. A
    capability that needs another is handed it here; the derivation pass is followed by
    the topic pass through ``derivation.after_pass``. The storage gets the events
    capability's rules (``EVENT_RULES``: an event's stored search document, the supersede
    cap) for every write of an event, whichever capability writes it.
    """

    def __init__(
        self,
        db: UnitDatabase,
        config: MemoryConfig | None = None,
        model: StructuredModel | None = None,
    ) -> None:
        storage = SqliteStorage(db, EVENT_RULES)
        self._parts = parts = EngineParts(
            db, storage, config or MemoryConfig(), model or OfflineModel()
        )
        self.spaces = SpacesService(parts)
        self.blocks = BlocksService(parts)
        self.events = EventsService(parts, self.blocks)
        self.profile = ProfileService(parts)
        self.retrieval = RetrievalService(parts, self.events)
        self.gate = GateService(parts)
        self.graph = GraphService(parts)
        self.topics = TopicsService(parts, self.events)
        self.derivation = DerivationService(parts, after_pass=[self.topics.follow_derivation])
        self.remember = RememberService(parts)
        self.imports = ImportService(parts, self.events, self.profile)
        self.curation = CurationService(parts)
        self.purge = PurgeService(parts)
        self.timeline = TimelineService(parts)
        self.overview = OverviewService(parts)

    @classmethod
    async def open(
        cls,
        path: Path | str | None = None,
        config: MemoryConfig | None = None,
        model: StructuredModel | None = None,
        busy_timeout_s: float | None = None,
        on_rebuild: RebuildReport | None = None,
    ) -> "StrataGate":
        """Open (creating or migrating) the file, or the PostgreSQL database a
        ``postgresql://…`` URL names; running jobs whose lease ran out (their
        worker died) are failed, retryable now; a live worker's jobs are left alone; events
        no graph projection batch holds yet are queued for one; spaces not yet under this
        topic projector freeze their events for the topic bootstrap. ``on_rebuild`` is told
        when an index is rebuilt on the way (minutes at 500k messages; default: the
        process's, ``rebuilds.default_report``)."""
        where = path or default_database_path()
        db = await _open_database(where, busy_timeout_s, on_rebuild or default_report())
        memory = cls(db, config, model)
        try:
            await memory.derivation.take_back_abandoned()
            await memory.graph.backfill()
            await _bootstrap_topics(memory)
            await memory.purge.finish_interrupted()
        except BaseException:
            await db.close()  # else its worker thread keeps the process alive
            raise
        return memory

    async def close(self) -> None:
        """Write the retrieval stamps still pending, close the file, and the model's HTTP
        client if it has one."""
        try:
            await self.events.stamps.flush()
        finally:
            await self.db.close()
        aclose = getattr(self.model, "aclose", None)
        if aclose is not None:
            await aclose()

    async def __aenter__(self) -> "StrataGate":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


async def _open_database(
    where: Path | str, busy_timeout_s: float | None, report: RebuildReport
) -> UnitDatabase:
    """A URL selects PostgreSQL (its storage is the same row modules, translated); a
    path keeps SQLite's file."""
    if is_database_url(where):
        from .store.postgres.engine_db import EngineDatabase  # psycopg only when asked for

        return await EngineDatabase(str(where), events=EVENT_RULES, on_rebuild=report).open()
    busy_ms = int(busy_timeout_s * 1000) if busy_timeout_s else None
    opening = Database(where, busy_timeout_ms=busy_ms, events=EVENT_RULES, on_rebuild=report)
    return await opening.open()


async def _bootstrap_topics(memory: "StrataGate") -> None:
    """The topic bootstrap of spaces new to this projector; a file this process may only
    read (``stratagate events`` on a read-only copy) is opened all the same, as before."""
    try:
        await memory.topics.bootstrap()
    except StorageError as error:
        log.debug("StrataGate: topic bootstrap skipped: %s", error)
