"""Retrieval use cases of the façade: raw search, the fused ``retrieve()``, automatic recall.

``retrieve()`` and recall parse their query once (``query.Query``) and hand it to every
channel; the rules live in ``fused``, ``raw_channel`` and ``recall``, the reads in
``store``. Retrieval never reinforces; only automatic recall stamps the events it finds.
"""

from collections.abc import Mapping, Sequence
from dataclasses import replace
from functools import partial
from typing import Any

from ..clock import utc_now
from ..events.history import head_of, history_of
from ..events.ranking import EventHit, EventSearch, weight_key
from ..events.search import chain_links, search_with_history
from ..events.service import EventsService
from ..graph.search import GraphHit
from ..records import Message
from ..service_base import EngineParts, ServiceBase
from ..text.search_terms import fts_encode, tokenize
from ..text.temporal.resolve import names_a_time
from . import fused_read
from .fused import (
    CHANNELS,
    FUSION,
    FusionConfig,
    Retrieved,
    fuse,
)
from .hits import RawHit
from .query import Query, parse_query, question_windows
from .raw_channel import (
    RAW_CHANNEL,
    ChannelDoc,
    CorpusStats,
    RawChannelConfig,
    context_rank,
)
from .raw_docs import channel_docs
from .raw_rank import candidate_limit, rank_sealed
from .recall import (
    DEFAULT_RECALL,
    AutoContext,
    RecallConfig,
    activation_order,
    activation_query,
    bypass_weights,
    matching_tail_messages,
    message_line,
    render_recall,
)
from .storage import ChannelQuery, RetrievalReader, RetrievalStorage

OWN_CHECK_SLICE = 16
GRAPH_RELEVANCE = 12


class RetrievalService(ServiceBase):
    """Raw and fused retrieval over sealed messages, and the automatic memory context;
    its event channel is the events capability's search."""

    def __init__(self, parts: EngineParts, events: EventsService) -> None:
        super().__init__(parts)
        self.events = events

    @property
    def store(self) -> RetrievalStorage:
        return self.storage.retrieval

    async def search_raw(
        self, space: str, query: str, limit: int = 6, thread_id: str | None = None
    ) -> list[RawHit]:
        """Spec §6.6: sealed L5 messages with their neighbours; ``thread_id`` limits the scope;
        no query token → no hits."""
        tokens = tokenize(query)
        if not tokens or limit < 1:
            return []
        terms = [fts_encode(token) for token in tokens]

        def ranked_hits(reader: RetrievalReader) -> list[RawHit]:  # one snapshot, one trip
            found = reader.sealed_matches(space, tokens, candidate_limit(limit), thread_id)
            scored = rank_sealed(terms, found, limit)
            return reader.raw_hits(scored) if scored else []

        return await self.store.read(ranked_hits)

    async def search_raw_ranked(
        self, space: str, query: str, limit: int = 6, *, current_thread: str | None = None
    ) -> list[RawHit]:
        """Messages in ``retrieve()``'s order with their neighbours: what the agent's raw
        search shows at namespace scope, so it reads what the benchmark measures. The
        channels and the hits are read in one read (``fused_read``)."""
        if limit < 1:
            return []
        parsed = await self._parsed(space, query)
        if not parsed.terms:
            return []

        def ranked_hits(reader: RetrievalReader) -> list[RawHit]:
            rankings = fused_read.channel_rankings(
                reader, space, query, parsed, limit, FUSION, current_thread
            )
            scored = [(hit.message_id, hit.score) for hit in fuse(rankings, FUSION, limit)]
            return reader.raw_hits(scored) if scored else []

        return await self.store.read(ranked_hits)

    async def retrieve(
        self,
        space: str,
        query: str,
        k: int = 20,
        config: FusionConfig | None = None,
        *,
        current_thread: str | None = None,
    ) -> list[Retrieved]:
        """The fused first-step evidence (raw, event, block and, when weighted, graph
        channels) as message ids."""
        settings = config or FUSION
        rankings = await self.channel_rankings(
            space, query, k, settings, current_thread=current_thread
        )
        return fuse(rankings, settings, k)

    async def channel_rankings(
        self,
        space: str,
        query: str,
        k: int = 20,
        config: FusionConfig | None = None,
        *,
        current_thread: str | None = None,
    ) -> dict[str, list[str]]:
        """Each channel's ranked message ids (for fusion, and for per-channel measurement).

        A query without search terms finds nothing in any channel (event search alone would
        list every event for an empty query). The raw channel reads every open tail but
        ``current_thread``'s: the asking session has its own in view.
        """
        settings = config or FUSION
        parsed = await self._parsed(space, query)
        if not parsed.terms:
            return {name: [] for name in CHANNELS}
        return await self.store.read(
            lambda reader: fused_read.channel_rankings(
                reader, space, query, parsed, k, settings, current_thread
            )
        )

    async def _parsed(self, space: str, query: str) -> Query:
        """``query`` parsed; the windows of a time it names resolved against the memory's
        "now" (its newest message), not the clock's."""
        parsed = parse_query(query)
        if parsed.terms and names_a_time(query):
            reference = await self.store.latest_message_time(space)
            parsed = replace(parsed, windows=question_windows(query, reference or utc_now()))
        return parsed

    async def raw_channel(
        self,
        space: str,
        query: Query,
        k: int,
        config: RawChannelConfig = RAW_CHANNEL,
        boost: Mapping[str, float] | None = None,
        *,
        current_thread: str | None = None,
    ) -> list[tuple[str, float]]:
        """The raw channel alone: (message id, score) best first; nothing when no term matches.

        ``boost`` adds to a message's score but never makes a message with no matching
        neighbourhood appear; ``current_thread``'s open tail is left out.
        """
        if not query.terms or k < 1:
            return []
        raw_query = fused_read.channel_query(query, config, current_thread)
        docs, stats = await self.channel_docs(space, raw_query)
        return context_rank(query.terms, docs, stats, config, boost or {}, query.weak)[:k]

    async def channel_docs(
        self, space: str, query: ChannelQuery
    ) -> tuple[list[ChannelDoc], CorpusStats]:
        """The raw channel's loaded messages and their BM25 statistics (``raw_docs``), in
        one consistent read."""
        return await self.store.read(lambda reader: channel_docs(reader, space, query))

    async def block_channel(self, found: Sequence[str], query: Query, limit: int) -> list[str]:
        """The blocks holding the raw channel's hits, ranked by their L0–L2 text; of each,
        the messages that share a query term. Only those blocks are read, whatever the
        namespace size."""
        if not query.terms or not found:
            return []
        return await self.store.read(
            lambda reader: fused_read.block_channel(reader, found, query, limit)
        )

    async def auto_context(
        self,
        space: str,
        thread_id: str,
        latest_user_message: str,
        *,
        config: RecallConfig | None = None,
    ) -> AutoContext:
        """Automatic recall for one model call (spec §9); stamps the events found, no reinforcing.

        Other sessions' open-tail messages that match follow the events (issue #14).
        Without ``config``, the spec's budgets with the façade's agent memory weight.
        """
        settings = config or replace(DEFAULT_RECALL, agent_weight=self.config.agent_memory_weight)
        text, others, relevance, chosen, nodes = await self.store.read(
            lambda reader: _recall_reads(reader, space, thread_id, latest_user_message, settings)
        )
        self.events.note_found(relevance)
        events = [hit.card for hit in chosen]
        older = {hit.card.id: hit.history for hit in chosen if hit.history}
        recent = matching_tail_messages(  # the asked words alone: tail chatter matches chatter
            parse_query(latest_user_message).terms, others, settings.tail_message_limit
        )
        lines = [message_line(message, settings.tail_message_chars) for message in recent]
        rendered, shown, noted, spoken = render_recall(
            events, nodes, settings.token_budget, lines, older
        )
        shown_ids = {card.id for card in events[:shown]}
        history = {key: cards for key, cards in older.items() if key in shown_ids}
        return AutoContext(
            text=rendered,
            query=text,
            events=events[:shown],
            nodes=nodes[:noted],
            messages=recent[:spoken],
            history=history,
        )


def _recall_reads(
    reader: RetrievalReader, space: str, thread_id: str, asked: str, config: RecallConfig
) -> tuple[str, list[Message], list[EventHit], list[EventHit], list[dict[str, Any]]]:
    """Recall's reads in one snapshot (one hop to a reader): the open tails, the activation
    query made of them, its event relevance, the events activated, the graph's lines;
    (query, other sessions' tail messages, relevance hits, chosen hits, node lines)."""
    tail, others = reader.tails(space, thread_id)
    text = activation_query(asked, tail, config.tail_turns)
    request = EventSearch(
        parse_query(text).terms, config.relevance_limit, 0, agent_weight=config.agent_weight
    )
    relevance = search_with_history(reader, space, request)
    chosen = _activated(reader, space, thread_id, relevance, config)
    nodes = _graph_recall(reader, space, thread_id, (asked, text), config)
    return text, others, relevance, chosen, nodes


def _graph_recall(
    reader: RetrievalReader,
    space: str,
    thread_id: str,
    queries: tuple[str, str],
    config: RecallConfig,
) -> list[dict[str, Any]]:
    """The recall lines of up to ``node_limit`` graph nodes matching the question (of 12
    searched; the whole recall query, tail turns and all, only when the question alone
    finds none), leaving out nodes whose evidence all comes from the current thread
    (already in the native history). The question's few terms read a few nodes; the recall
    query's dozens read hundreds."""
    kept: list[GraphHit] = []
    for query in dict.fromkeys(queries):
        hits = fused_read.graph_search(reader, space, query, GRAPH_RELEVANCE)
        kept = _hits_outside_thread(reader, hits, thread_id, config.node_limit)
        if kept:
            break
    return [hit.recall_line() for hit in kept]


def _hits_outside_thread(
    reader: RetrievalReader, hits: Sequence[GraphHit], thread_id: str, limit: int
) -> list[GraphHit]:
    """The first ``limit`` hits not all of whose evidence comes from ``thread_id``, checked
    ``limit`` hits at a time: whether an event is the thread's is read per event (its source
    messages' rows, ~0.1 ms an event at 500k messages), and the first few hits nearly always
    do."""
    kept: list[GraphHit] = []
    for start in range(0, len(hits), limit):
        part = hits[start : start + limit]
        own = reader.from_thread([i for hit in part for i in hit.provenance_event_ids], thread_id)
        kept += [hit for hit in part if not set(hit.provenance_event_ids) <= own]
        if len(kept) >= limit:
            break
    return kept[:limit]


def _activated(
    reader: RetrievalReader,
    space: str,
    thread_id: str,
    relevance: Sequence[EventHit],
    config: RecallConfig,
) -> list[EventHit]:
    """Relevance hits and pinned/safety events fused from weight keys alone; cards are read
    only for the events shown. A superseded event takes its newer card's place."""
    turn, bypass = reader.bypass(space)
    hits = {hit.card.id: hit for hit in relevance}
    keys = {key: weight_key(hit.card, turn) for key, hit in hits.items()}
    for key, weight in bypass_weights(bypass, turn).items():
        keys.setdefault(key, weight)
    fused = activation_order(list(hits), keys)
    chosen = _outside_thread(reader, space, fused, thread_id, config.event_limit)
    return [hits.get(key) or _with_history(reader, space, key) for key in chosen]


def _with_history(reader: RetrievalReader, space: str, event_id: str) -> EventHit:
    """A card recall adds beside the relevance hits (pinned, safety, or their newer card)."""
    card = reader.card(event_id)
    read = partial(reader.visible_cards, space)
    return EventHit(card=card, rank_score=0.0, history=history_of(card, read))


def _outside_thread(
    reader: RetrievalReader, space: str, fused: Sequence[str], thread_id: str, limit: int
) -> list[str]:
    """The first ``limit`` heads (``history.head_of``) not sourced from ``thread_id``,
    checked a slice at a time."""
    chosen: list[str] = []
    for start in range(0, len(fused), OWN_CHECK_SLICE):
        part = fused[start : start + OWN_CHECK_SLICE]
        links = chain_links(reader, space, part)
        heads = [h for h in dict.fromkeys(head_of(k, links) for k in part) if h not in chosen]
        own = reader.from_thread(heads, thread_id)
        chosen += [key for key in heads if key not in own]
        if len(chosen) >= limit:
            break
    return chosen[:limit]
