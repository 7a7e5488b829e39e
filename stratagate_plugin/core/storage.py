"""The storage contract: one ``Protocol`` per capability of the operations it needs.

A database backend implements each (``core/store/sqlite/`` for SQLite) and hands the
engine one object holding them; a service reaches only its own capability's part
(``self.store``) and never sees a connection. ``tests/storage_contract/`` checks any
implementation against these operations.
"""

from typing import Protocol

from .events.storage import EventsStorage
from .gate.storage import GateStorage
from .retrieval.storage import RetrievalStorage
from .timeline.storage import TimelineStorage

__all__ = ["Storage"]


class Storage(Protocol):
    """Every capability's storage operations, one attribute per capability."""

    @property
    def timeline(self) -> TimelineStorage: ...

    @property
    def events(self) -> EventsStorage: ...

    @property
    def retrieval(self) -> RetrievalStorage: ...

    @property
    def gate(self) -> GateStorage: ...
