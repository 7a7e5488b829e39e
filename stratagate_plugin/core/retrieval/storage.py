"""What raw search, fused retrieval and automatic recall need from storage (the contract
a database implements).

The store hands back candidates, their text and the counts BM25 needs ("messages holding
these terms", "their thread neighbours", "document frequencies of these terms"); tokenising
a message's speaker, scoring and ranking stay in ``raw_channel``, ``fused`` and
``raw_rank`` so an impact index (issue #29) can implement the same operations.
"""

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, NamedTuple, Protocol, TypeVar

import numpy as np
import numpy.typing as npt

from ..events.cards import EventCard, EventStatus
from ..events.storage import EventsReader
from ..graph.shapes import NodeRecords
from ..llm.tasks import Criticality
from ..records import Message
from .hits import RawHit

T = TypeVar("T")

__all__ = [
    "LENGTH_CAP",
    "OPEN_TAIL",
    "BypassRow",
    "ChannelMessage",
    "ChannelQuery",
    "CorpusStats",
    "RetrievalReader",
    "RetrievalStorage",
    "SealedMatch",
    "TermPostings",
]


OPEN_TAIL = "open-tail"
"""Stands for the block of a message still in an open tail (a raw ref's block, too)."""


@dataclass(frozen=True)
class CorpusStats:
    """BM25 statistics of a namespace's searched messages and of their blocks."""

    messages: int
    message_tokens: int
    blocks: int
    message_df: dict[str, int] = field(default_factory=dict)
    block_df: dict[str, int] = field(default_factory=dict)
    block_lengths: dict[str, int] = field(default_factory=dict)


class SealedMatch(NamedTuple):
    """A sealed message sharing a term with the query, with its indexed (encoded) tokens."""

    id: str
    created_at: str
    block_sequence: int
    position: int
    composed_from_memory: bool
    tokens: list[str]


class ChannelMessage(NamedTuple):
    """A message for the raw channel (an open tail's ``block_id`` is ``OPEN_TAIL:<thread>``
    and its ``block_sequence`` newer than every sealed block's). An indexed message read
    beside the impact index has its ``rowid`` and token ``length`` (else 0 and -1)."""

    id: str
    thread_id: str
    block_id: str
    position: int
    block_sequence: int
    content: str
    composed_from_memory: bool
    rowid: int = 0
    length: int = -1


LENGTH_CAP = 65_535
"""The most an impact index's count or length holds (a longer message's is cut there)."""


class TermPostings(NamedTuple):
    """One term's postings in a space's impact index, in rowid order: each message's index
    rowid, the term's count in it and the message's token length (at most ``LENGTH_CAP``).
    Arrays as the index stores them (int32 rowids, uint16 counts and lengths: a common
    word's few hundred thousand are not widened; BM25 widens each as it computes, to the
    same floats), or any wider integer or float type."""

    rowids: npt.NDArray[np.signedinteger[Any]]
    counts: npt.NDArray[np.number[Any]]
    lengths: npt.NDArray[np.number[Any]]


@dataclass(frozen=True)
class ChannelQuery:
    """Up to ``cap`` sealed messages holding a term and up to ``weak_cap`` more holding a
    weak term, fetched apart; their neighbours within ``reach``; every open tail but
    ``current_thread``'s. ``scan`` (or no impact index) reads every sealed message instead."""

    terms: tuple[str, ...]
    cap: int
    reach: int
    weak: tuple[str, ...] = ()
    weak_cap: int = 0
    current_thread: str | None = None
    scan: bool = False
    context_cap: int = 0
    """With an impact index: only the best ``context_cap`` matches get their neighbours
    read (0: every match's)."""


class BypassRow(NamedTuple):
    """What a pinned or safety event's weight is computed from (no card built)."""

    id: str
    last_adopted_turn: int
    mention_count: int
    criticality: Criticality
    pinned: bool
    forced_cap: float | None
    status: EventStatus
    floor_weight: float | None
    updated_at: str


class RetrievalReader(EventsReader, Protocol):
    """Reads inside one consistent read (synchronous, on the database's own thread): the
    raw channel's messages with their statistics, a block channel, graph lines, recall's
    bypass, each decided over one snapshot."""

    def sealed_messages(self, space: str) -> list[ChannelMessage]:
        """Every sealed conversation message of the space (the raw channel without an
        impact index, or as a reference for it)."""
        ...

    def sealed_matches(
        self, space: str, tokens: Sequence[str], cap: int, thread_id: str | None
    ) -> list[SealedMatch]:
        """As ``RetrievalStorage.sealed_matches``, inside this read."""
        ...

    def raw_hits(self, scored: Sequence[tuple[str, float]]) -> list[RawHit]:
        """As ``RetrievalStorage.raw_hits``, inside this read."""
        ...

    def term_postings(self, space: str, terms: Sequence[str]) -> dict[str, TermPostings] | None:
        """Each term's postings in the space's impact index (a term no searchable message
        holds is absent); ``None`` when there is no impact index to read."""
        ...

    def indexed_messages(
        self,
        space: str,
        rowids: Sequence[int],
        reach: int,
        around: int,
        lengths: Mapping[int, int] | None = None,
    ) -> tuple[list[ChannelMessage], list[ChannelMessage]]:
        """(the sealed conversation messages with these index rowids, in the order given;
        the others of the threads of the first ``around`` within ``reach`` positions), each
        with its length; ``lengths`` (by rowid) are known already and not read again."""
        ...

    def tail_messages(self, space: str, current_thread: str | None) -> list[ChannelMessage]:
        """The open-tail messages of every thread but ``current_thread``."""
        ...

    def term_statistics(
        self, space: str, terms: Sequence[str], blocks: Sequence[str]
    ) -> CorpusStats:
        """Index-wide counts of the space's sealed text: messages, tokens, blocks, the
        message and block frequency of each term, the token length of ``blocks``."""
        ...

    def block_lengths(self, blocks: Sequence[str]) -> dict[str, int]:
        """The token length of each of these sealed blocks (as ``term_statistics`` gives)."""
        ...

    def block_texts(self, message_ids: Sequence[str]) -> dict[str, str]:
        """L0–L2 text of the ready blocks holding these messages, by block id."""
        ...

    def block_messages(self, block_id: str) -> list[tuple[str, str]]:
        """(id, content) of the block's messages in position order."""
        ...

    def graph_records(self, space: str, terms: Sequence[str], cap: int) -> NodeRecords:
        """Up to ``cap`` nodes sharing a term (most shared terms, then importance) with their
        records as they stand now (``graph.views.assemble`` makes their views)."""
        ...

    def tails(self, space: str, thread_id: str) -> tuple[list[Message], list[Message]]:
        """As ``RetrievalStorage.tails``, inside this read."""
        ...

    def cited_messages(self, space: str, event_ids: Sequence[str]) -> list[str]:
        """Messages the visible events cite, event by event in the order given, once each."""
        ...

    def from_thread(self, event_ids: Sequence[str], thread_id: str) -> set[str]:
        """Those events whose source block or a source message is in ``thread_id``."""
        ...

    def created_at(self, message_ids: Sequence[str]) -> dict[str, str]:
        """When each of these messages (open tails' too) was created, as stored."""
        ...

    def happened_of(
        self, space: str, message_ids: Sequence[str]
    ) -> list[tuple[str, str | None, str | None]]:
        """(message id, start, end): when each visible event of ``space`` that cites one of
        these messages and gives either bound happened, a row per citation."""
        ...

    def bypass(self, space: str) -> tuple[int, list[BypassRow]]:
        """The space's current turn and its visible pinned or safety events."""
        ...

    def card(self, event_id: str) -> EventCard:
        """The card whatever its status; ``NotFound`` if unknown."""
        ...


class RetrievalStorage(Protocol):
    async def read(self, work: Callable[[RetrievalReader], T]) -> T:
        """``work`` run in one consistent read."""
        ...

    async def sealed_matches(
        self, space: str, tokens: Sequence[str], cap: int, thread_id: str | None
    ) -> list[SealedMatch]:
        """Sealed messages in scope (not an import's source) sharing a token: with an index,
        the best ``cap`` on the rarest terms (newest first when over budget); else all."""
        ...

    async def raw_hits(self, scored: Sequence[tuple[str, float]]) -> list[RawHit]:
        """Hits with thread neighbours for (message id, score), in the order given; unknown
        ids are left out."""
        ...

    async def latest_message_time(self, space: str) -> datetime | None:
        """When the space's newest message was created; ``None`` for an empty space."""
        ...

    async def tails(self, space: str, thread_id: str) -> tuple[list[Message], list[Message]]:
        """(``thread_id``'s open tail, every other thread's) by thread and position."""
        ...
