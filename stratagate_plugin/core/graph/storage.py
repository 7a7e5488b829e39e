"""What the graph needs from storage (the contract a database implements).

Reads are one consistent read each and return records (nodes with what their views are
made of, cards); the views (``views.assemble``), the ranking, the resolution of a proposed
node and the supersede rules stay in ``graph/``. A projection is applied inside ONE write
transaction that must also read what it changes (a node resolved by a draft is the node
the next draft may resolve to), so ``GraphStorage.project`` runs the graph's own ``apply``
rule with a ``GraphTransaction``: record-level reads and writes valid only inside that
transaction.
"""

from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from typing import NamedTuple, Protocol, TypeVar

from ..events.cards import EventCard
from ..records import Job
from .shapes import Believed, FactValue, GraphNode, Known, NodeRecords, RecordParts

__all__ = [
    "CurrentFact",
    "GraphStorage",
    "GraphTransaction",
    "ProjectionBatch",
    "Stated",
    "Written",
]

T = TypeVar("T")


class CurrentFact(NamedTuple):
    id: str
    value: FactValue
    valid_from: str | None
    stated_at: str | None


class Stated(NamedTuple):
    """How a new fact or edge is held: its confidence, since when it is true in the world,
    when it was said, and when the projection learned it."""

    confidence: float
    valid_from: str | None
    stated_at: str | None
    learned_at: str


class Written(NamedTuple):
    """What a projection wrote, recorded on its batch."""

    node_ids: Sequence[str]
    edge_ids: Sequence[str]
    reason: str


class ProjectionBatch(NamedTuple):
    """A graph batch as its projector is handed it, read in one consistent read."""

    namespace: str
    event_ids: list[str]
    """The batch's events, in the order queued (hidden ones included)."""
    cards: list[EventCard]
    """Its visible events."""
    context: list[GraphNode]
    """Nodes the batch names by participant, then the most recently updated (≤ the cap)."""
    kin: list[tuple[str, str, str]]
    """(person, relation, relative): current kinship edges of the batch's speakers."""


class GraphTransaction(Protocol):
    """Reads and writes of records inside one write transaction (``GraphStorage.project``);
    synchronous: the rule driving them runs in the transaction, never across an await."""

    def holds(self, job: Job) -> bool:
        """Whether ``job`` is still claimed by its owner (else nothing may be written)."""
        ...

    def batch_space(self, batch_id: str) -> str:
        """The batch's space, which the projection then holds alone to its commit: no other
        projection of the space resolves names to nodes beside it (both would make the
        node a name has not yet)."""
        ...

    def event_statuses(self, event_ids: Iterable[str]) -> dict[str, str]:
        """Each known event's status now (unknown ids are left out)."""
        ...

    def known_by_keys(self, space: str, keys: Iterable[str]) -> list[Known]:
        """Nodes whose name key or an alias key is one of ``keys`` (any type)."""
        ...

    def near_candidates(self, space: str, letters: Iterable[str]) -> list[Known]:
        """Nodes whose name key begins with one of ``letters``."""
        ...

    def insert_node(
        self, space: str, name: tuple[str, str], type_: str, tags: Sequence[str], now: str
    ) -> str:
        """A new node named (name, its key); its id."""
        ...

    def node_tags(self, node_id: str) -> list[str]: ...

    def set_tags(self, node_id: str, tags: Sequence[str], now: str) -> None:
        """The node's tags replaced, ``updated_at`` moved to ``now``."""
        ...

    def name_key(self, node_id: str) -> str: ...

    def alias_keys(self, node_id: str) -> list[str]: ...

    def add_alias(self, space: str, node_id: str, alias: tuple[str, str]) -> None:
        """Another spelling (alias, its key) the node answers to."""
        ...

    def list_duplicate(
        self, space: str, node_id: str, other_id: str, reason: str, now: str
    ) -> None:
        """A near match kept apart, listed once per pair."""
        ...

    def add_sources(self, kind: str, record_id: str, event_ids: Iterable[str]) -> None:
        """Events a node, fact or edge cites (idempotent)."""
        ...

    def add_field_sources(
        self, node_id: str, field: str, key: str, event_ids: Iterable[str]
    ) -> None:
        """Events an alias or tag of a node cites (idempotent)."""
        ...

    def add_terms(self, space: str, node_id: str, texts: Sequence[str]) -> None:
        """The texts' search terms, added to the node's (a term once added stays)."""
        ...

    def current_facts(self, node_id: str, key: str) -> list[CurrentFact]:
        """The node's current facts under ``key``."""
        ...

    def current_edges(self, from_id: str, relation: str) -> list[Believed]:
        """Each current edge ``from_id`` –``relation``→, its target the ``to`` node's id."""
        ...

    def insert_fact(self, node_id: str, key: str, value: FactValue, made: Stated) -> str:
        """A new fact; its id."""
        ...

    def insert_edge(self, space: str, ends: tuple[str, str], relation: str, made: Stated) -> str:
        """A new edge (from, to); its id."""
        ...

    def mark_history(self, kind: str, record_id: str, valid_to: str | None, now: str) -> None:
        """A fact or edge stated before the believed one: superseded at once."""
        ...

    def supersede(
        self, kind: str, old_id: str, new_id: str, valid_from: str | None, now: str
    ) -> None:
        """``old_id`` replaced by ``new_id``: valid until the new one holds (never before it
        began)."""
        ...

    def recount(self, node_ids: Sequence[str]) -> None:
        """Each node's importance: how many events it cites."""
        ...

    def write_back(self, event_ids: Sequence[str]) -> None:
        """Each event's ``participant_node_ids``: the nodes citing it now."""
        ...

    def finish(self, job: Job, outcome: tuple[str, str], written: Written, now: datetime) -> None:
        """The batch records what it wrote; the job finishes as (status, detail)."""
        ...

    def mark_job(self, job_id: str, derived_by: str, error: str | None) -> None:
        """Which projector answered the job, and the model's error when it fell back."""
        ...


class GraphStorage(Protocol):
    async def search_records(
        self, space: str, terms: Sequence[str], cap: int, as_of: datetime | None
    ) -> NodeRecords:
        """Up to ``cap`` nodes sharing a term with ``terms`` (most shared terms first, then
        importance) with their records learned by ``as_of`` and their aliases' and tags'
        sources (``views.assemble`` makes the views, visible or not)."""
        ...

    async def node_records(self, node_id: str, as_of: datetime | None, history: int) -> NodeRecords:
        """The node's records learned by ``as_of``, with up to ``history`` replaced
        statements and its fields' sources; no nodes when unknown."""
        ...

    async def top_records(
        self,
        space: str,
        type_: str | None,
        window: tuple[int, int],
        as_of: datetime | None,
        parts: RecordParts = "all",
    ) -> NodeRecords:
        """Nodes by importance (how many events they cite), most first, from ``window``'s
        (offset, limit), with their records and fields' sources (``parts``: or only their
        edges, or only themselves); only nodes not archived, created by ``as_of`` when
        given."""
        ...

    async def visible_cards(self, space: str, event_ids: Sequence[str]) -> list[EventCard]:
        """The visible events among ``event_ids`` (any order; hidden and unknown left out)."""
        ...

    async def duplicates(self, space: str) -> list[tuple[str, str, str]]:
        """(node, other node, reason) of each near match listed, oldest first."""
        ...

    async def backfill_due(self) -> bool:
        """Whether ``backfill`` has events to queue (a read: an open takes no write lock)."""
        ...

    async def backfill(self, now: str) -> int:
        """Visible events in no batch queued, per space, in batches; how many events."""
        ...

    async def batch(
        self, batch_id: str, speaker: str, kin_relations: Iterable[str], context: tuple[int, int]
    ) -> ProjectionBatch:
        """A batch and what its projector is handed: nodes its participants name then
        the ``context`` (recent, most) newest, and the kin edges of its participants and
        ``speaker``."""
        ...

    async def project(self, unit: Callable[[GraphTransaction], T]) -> T:
        """``unit`` run in one write transaction: all it wrote, or nothing."""
        ...
