"""What ``memory_remember`` needs from storage (the contract a database implements): the
live events a new memory is compared with (phase 1, a plain read), and phase 3, one
transaction that re-reads them, asks the service's ``RememberRules`` what to do with that
fresh data and writes it.
"""

from collections.abc import Sequence
from typing import NamedTuple, Protocol

from ..events.cards import EventCard
from ..spaces.storage import SpaceDefaults

__all__ = [
    "Applied",
    "LiveEvent",
    "Plan",
    "RememberAsk",
    "RememberRules",
    "RememberStorage",
    "SpaceDefaults",
]


class LiveEvent(NamedTuple):
    """A visible event (either pool) a new memory is compared with."""

    id: str
    title: str
    summary: str


class RememberAsk(NamedTuple):
    """A memory being committed: its space and thread, the text its live neighbours are
    found by (up to ``limit``), and the ids the decider judged (checked still live)."""

    namespace: str
    thread_id: str
    text: str
    limit: int
    ambiguous: Sequence[str] = ()


class Plan(NamedTuple):
    """What phase 3 writes: ``action`` (``IGNORED``, ``REINFORCED``, ``MERGED``, or another:
    ``card`` inserted) on ``targets``."""

    action: str
    targets: tuple[str, ...]
    card: EventCard | None = None


class Applied(NamedTuple):
    event_id: str | None
    """The event written, merged into or reinforced (None: nothing written, or no live
    event was left to reinforce)."""
    card: EventCard | None
    """That event as it now stands."""
    turn: int
    """The space's current turn."""


class RememberRules(Protocol):
    """The gate's decisions over fresh data, pure (the service's rules)."""

    def plan(self, live: list[LiveEvent], still_live: set[str], turn: int) -> Plan:
        """The outcome given the live events sharing a token with the memory and which of
        the ids asked (``RememberAsk.ambiguous``) are still live."""
        ...

    def merged(self, target: EventCard) -> tuple[str, list[str]]:
        """A merge target's summary and tags with the memory's unioned in."""
        ...


class RememberStorage(Protocol):
    async def live_events(self, space: str, text: str, limit: int) -> list[LiveEvent]:
        """Up to ``limit`` visible events of the space sharing a search token with
        ``text`` (every visible one up to ``limit`` when it has none)."""
        ...

    async def commit(
        self, ask: RememberAsk, rules: RememberRules, defaults: SpaceDefaults, now: str
    ) -> Applied:
        """One transaction: the space created if new (``defaults``); ``live_events`` of
        the ask read again and which of its ambiguous ids are still live;
        ``rules.plan`` applied: targets reinforced (the first live one returned), merged
        (each with ``rules.merged``; queued for graph projection) or a new card inserted
        (queued); the written event waits to cite the user message of the thread's turn
        being run (``pending_citations``)."""
        ...
