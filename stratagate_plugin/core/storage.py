"""The storage contract: one ``Protocol`` per capability of the operations it needs.

A database backend implements each (``core/store/sqlite/`` for SQLite) and hands the
engine one object holding them; a service reaches only its own capability's part
(``self.store``) and never sees a connection. ``tests/storage_contract/`` checks any
implementation against these operations.
"""

from typing import Protocol

from .blocks.storage import BlocksStorage
from .curation.storage import CurationStorage
from .derivation.storage import DerivationStorage
from .events.storage import EventsStorage
from .gate.storage import GateStorage
from .graph.storage import GraphStorage
from .importer.storage import ImportsStorage
from .overview.storage import OverviewStorage
from .profile.storage import ProfileStorage
from .purge.storage import PurgeStorage
from .remember.storage import RememberStorage
from .retrieval.storage import RetrievalStorage
from .spaces.storage import SpacesStorage
from .timeline.storage import TimelineStorage
from .topics.storage import TopicsStorage

__all__ = ["Storage"]


class Storage(Protocol):
    """Every capability's storage operations, one attribute per capability."""

    timeline: TimelineStorage
    spaces: SpacesStorage
    blocks: BlocksStorage
    events: EventsStorage
    retrieval: RetrievalStorage
    gate: GateStorage
    profile: ProfileStorage
    graph: GraphStorage
    topics: TopicsStorage
    derivation: DerivationStorage
    remember: RememberStorage
    imports: ImportsStorage
    curation: CurationStorage
    purge: PurgeStorage
    overview: OverviewStorage
