"""What event search, expansion and listing need from storage (the contract a database
implements).

A search runs as one consistent read over ``EventsReader``, whose operations stay at the
level an index can answer — "candidates for these terms", "the
stored counts of these terms", "the visible cards among these ids" — so a faster index
(issue #29) can implement them; ranking, folding and paging are the service's
(``events.search``, ``events.history``, ``events.ranking``).
"""

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol, TypeVar

from ..records import Message
from .cards import EventCard

T = TypeVar("T")
Document = tuple[Mapping[str, int], int]
"""An event's BM25 document: token counts and length (the ranking's, stored or tokenised)."""
FieldCheck = Callable[[str, str, list[str], Mapping[str, Any]], bool]
"""A structured filter over an event's title, summary, tags and temporal fields."""

__all__ = [
    "BlockCounts",
    "Candidate",
    "CandidateQuery",
    "Document",
    "DocumentFields",
    "EventRules",
    "EventsReader",
    "EventsStorage",
    "FieldCheck",
    "SearchCandidates",
]


class DocumentFields(NamedTuple):
    """The searchable text of an event, for tokenising when no stored document is current."""

    title: str
    summary: str
    tags: list[str]
    quotes: list[str]
    temporal: Mapping[str, Any]


@dataclass(frozen=True)
class EventRules:
    """The events capability's rules that a write of an event applies in its own
    transaction, handed to storage when the engine is wired (``events.documents``): the
    stored BM25 document of an event's searchable fields, the version stamped on it (a
    reader trusts a stored document only under the current version), and the weight cap a
    superseding card sets on the card it supersedes."""

    document_version: int
    document: Callable[[DocumentFields], Document]
    superseded_cap: float


class Candidate(NamedTuple):
    """A visible event found for a query, before (or with) its card."""

    id: str
    pool: str
    status: str
    superseded_by: str | None
    """The id that superseded it, only while its status is ``superseded``."""
    fields: DocumentFields | None
    """The searchable fields, read only when a plain query has no stored document for it
    (the fallback the ranking tokenises); ``None`` otherwise."""
    document: Document | None
    """The stored BM25 counts of the query's terms only; ``None`` when stale or missing."""
    card: EventCard | None
    """Built only when the query asked for cards (``CandidateQuery.with_cards``)."""


@dataclass(frozen=True)
class CandidateQuery:
    """Which visible events to consider: the given ids, or those sharing a term (per pool
    the best ``cap`` by the index's own rank) together with those ``keep`` accepts, or,
    with neither terms nor ``keep``, every visible event of the pools."""

    pools: tuple[str, ...]
    tokens: tuple[str, ...]
    cap: int
    event_ids: Collection[str] | None = None
    keep: FieldCheck | None = None
    with_cards: bool = False


class SearchCandidates(NamedTuple):
    candidates: list[Candidate]
    """Unique by id, in the order found (ids, lexical per pool, then structured)."""
    current_turn: int
    """The space's current turn, read only for a query that asks for cards (the card
    ranking weighs cards by it); 0 for a plain query, whose ranking needs none."""


class BlockCounts(NamedTuple):
    """Why an agent's block listing may be empty: the counts behind ``empty_reason``."""

    namespace_block_count: int
    namespace_thread_ids: list[str]
    """Threads that have blocks, in the order their first block was sealed."""
    open_tail_count: int


class EventsReader(Protocol):
    """Reads inside one consistent read (synchronous: the unit runs on the database's own
    thread), so a search ranks, folds and pages what one snapshot holds."""

    def candidates(self, space: str, query: CandidateQuery) -> SearchCandidates:
        """The candidates of ``query``, with the space's current turn when it asks for
        cards."""
        ...

    def links(self, space: str, event_ids: Sequence[str]) -> dict[str, str | None]:
        """For the visible events among ``event_ids``: the id that superseded each (only
        when its status is ``superseded``), else ``None``; unknown or hidden ids are absent."""
        ...

    def visible_cards(self, space: str, event_ids: Sequence[str]) -> list[EventCard]:
        """The active or superseded cards among ``event_ids``, by id ascending."""
        ...


class EventsStorage(Protocol):
    async def read(self, work: Callable[[EventsReader], T]) -> T:
        """``work`` run in one consistent read."""
        ...

    async def stamp_retrieved(self, stamps: Mapping[str, str]) -> None:
        """Sets each visible event's ``last_retrieved_at`` to its time in ``stamps``, in one
        write (observability only: no counter, no ``updated_at``; a forgotten event keeps
        none)."""
        ...

    async def card(self, event_id: str) -> EventCard:
        """The card whatever its status; ``NotFound`` if unknown."""
        ...

    async def expansion(self, event_id: str) -> tuple[EventCard, list[Message]]:
        """The card (``NotFound`` if unknown) and its source messages in citation order."""
        ...

    async def cards(
        self,
        space: str | None,
        statuses: tuple[str, ...],
        block_id: str | None,
        limit: int,
        offset: int,
    ) -> list[EventCard]:
        """Cards of these statuses (of a space, of a block) in insertion order."""
        ...

    async def block_counts(self, space: str, thread_id: str | None) -> BlockCounts:
        """Blocks and threads of the space; unsealed messages of ``thread_id`` (or all)."""
        ...
