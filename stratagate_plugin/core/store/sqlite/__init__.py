"""The storage contract (``core/storage.py``) implemented on SQLite, one module per
capability; each runs its reads and writes through ``Database`` (one connection's thread,
``BEGIN IMMEDIATE`` units)."""

from ...blocks.storage import BlocksStorage
from ...curation.storage import CurationStorage
from ...derivation.storage import DerivationStorage
from ...events.storage import EventRules, EventsStorage
from ...gate.storage import GateStorage
from ...graph.storage import GraphStorage
from ...importer.storage import ImportsStorage
from ...overview.storage import OverviewStorage
from ...profile.storage import ProfileStorage
from ...purge.storage import PurgeStorage
from ...remember.storage import RememberStorage
from ...retrieval.storage import RetrievalStorage
from ...spaces.storage import SpacesStorage
from ...timeline.storage import TimelineStorage
from ...topics.storage import TopicsStorage
from ..event_documents import ParsedDocuments
from ..units import UnitDatabase
from .blocks import SqliteBlocksStorage
from .curation import SqliteCurationStorage
from .derivation import SqliteDerivationStorage
from .events import SqliteEventsStorage
from .gate import SqliteGateStorage
from .graph import SqliteGraphStorage
from .imports import SqliteImportsStorage
from .overview import SqliteOverviewStorage
from .profile import SqliteProfileStorage
from .purge import SqlitePurgeStorage
from .remember import SqliteRememberStorage
from .retrieval import SqliteRetrievalStorage
from .spaces import SqliteSpacesStorage
from .timeline import SqliteTimelineStorage
from .topics import SqliteTopicsStorage

__all__ = ["SqliteStorage"]


class SqliteStorage:
    """Every capability's storage over one open SQLite ``Database``; the storages that write
    or read events' stored search documents get the events capability's ``EventRules``."""

    def __init__(self, db: UnitDatabase, events: EventRules) -> None:
        self.db = db
        self.timeline: TimelineStorage = SqliteTimelineStorage(db)
        self.spaces: SpacesStorage = SqliteSpacesStorage(db)
        self.blocks: BlocksStorage = SqliteBlocksStorage(db)
        documents = ParsedDocuments()  # one per database: searches fill it, purges empty it
        self.events: EventsStorage = SqliteEventsStorage(db, events, documents)
        self.retrieval: RetrievalStorage = SqliteRetrievalStorage(db, events)
        self.gate: GateStorage = SqliteGateStorage(db)
        self.profile: ProfileStorage = SqliteProfileStorage(db)
        self.graph: GraphStorage = SqliteGraphStorage(db)
        self.topics: TopicsStorage = SqliteTopicsStorage(db)
        self.derivation: DerivationStorage = SqliteDerivationStorage(db, events)
        self.remember: RememberStorage = SqliteRememberStorage(db, events)
        self.imports: ImportsStorage = SqliteImportsStorage(db, events)
        self.curation: CurationStorage = SqliteCurationStorage(db, events)
        self.purge: PurgeStorage = SqlitePurgeStorage(db, events, documents)
        if getattr(db, "backend", "sqlite") == "postgresql":  # its files are the server's
            from ..postgres.purge import PostgresPurgeStorage  # psycopg only when asked for

            self.purge = PostgresPurgeStorage(db, events, documents)
        self.overview: OverviewStorage = SqliteOverviewStorage(db)
