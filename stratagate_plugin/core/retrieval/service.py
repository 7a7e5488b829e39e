"""Retrieval use cases of the façade: raw search, the fused ``retrieve()``, automatic recall.

``retrieve()`` and recall parse their query once (``query.Query``) and hand it to every
channel; the rules live in ``fused``, ``raw_channel`` and ``recall``, the reads in
``store``. Retrieval never reinforces; only automatic recall stamps the events it finds.
"""

from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from functools import partial
from typing import Any

from ..clock import iso, parse_iso, utc_now
from ..events.history import head_of, history_of
from ..events.ranking import EventHit, weight_key
from ..events.search import chain_links
from ..events.service import EventsService
from ..graph.search import GraphHit, candidate_cap, search_nodes, statement_events
from ..graph.views import NOW, assemble
from ..service_base import EngineParts, ServiceBase
from ..text.search_terms import fts_encode, query_tokens, tokenize
from ..text.temporal.resolve import names_a_time
from .fused import (
    CHANNELS,
    FUSION,
    FusionConfig,
    Retrieved,
    event_boost,
    fuse,
    matching_messages,
    top_blocks,
    window_votes,
)
from .hits import RawHit
from .query import Query, Window, parse_query, question_windows
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
        search shows at namespace scope, so it reads what the benchmark measures."""
        if limit < 1:
            return []
        found = await self.retrieve(space, query, limit, current_thread=current_thread)
        scored = [(hit.message_id, hit.score) for hit in found]
        return await self.store.raw_hits(scored)

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
        parsed = parse_query(query)
        if not parsed.terms:
            return {name: [] for name in CHANNELS}
        if names_a_time(query):  # a window is resolved against the memory's "now"
            reference = await self.store.latest_message_time(space)
            parsed = replace(parsed, windows=question_windows(query, reference or utc_now()))
        raw_query = channel_query(parsed, settings.raw_channel, current_thread)
        hits = await self.events.ranked(  # not beside the raw read: both are mostly Python,
            space,  # and two threads under one GIL took ~20% longer than one after the other
            parsed,
            limit=settings.event_limit,
            agent_weight=settings.agent_weight,
            track_retrieval=False,
        )
        docs, stats = await self.channel_docs(space, raw_query)
        cited = [hit.source_message_ids for hit in hits]
        boost = event_boost(cited, settings.event_boost)
        if parsed.windows:
            windows, among = parsed.windows, [doc.id for doc in docs]
            created, happened = await self.store.read(
                lambda reader: dated_messages(reader, space, windows, among)
            )
            boost = window_votes(boost, created, happened, settings)
        rank = settings.raw_channel
        ranked = context_rank(parsed.terms, docs, stats, rank, boost, parsed.weak)[: 2 * k]
        raw_ids = [message_id for message_id, _ in ranked]
        blocks = await self.block_channel(raw_ids, parsed, settings.block_limit)
        events = list(dict.fromkeys(m for message_ids in cited for m in message_ids))
        graph: list[str] = []
        if settings.graph_weight > 0:
            graph = await self.graph_channel(space, query, settings)
        return {"raw": raw_ids, "event": events, "block": blocks, "graph": graph}

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
        docs, stats = await self.channel_docs(space, channel_query(query, config, current_thread))
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
        return await self.store.read(lambda reader: _block_channel(reader, found, query, limit))

    async def graph_channel(self, space: str, query: str, config: FusionConfig) -> list[str]:
        """The messages cited by the events of the matching nodes' facts and edges that
        share a query term (``search.statement_events``)."""
        return await self.store.read(lambda reader: _graph_channel(reader, space, query, config))

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
        tail, others = await self.store.tails(space, thread_id)
        text = activation_query(latest_user_message, tail, settings.tail_turns)
        relevance = await self.events.ranked(
            space,
            parse_query(text),
            limit=settings.relevance_limit,
            agent_weight=settings.agent_weight,
        )
        chosen = await self.store.read(
            lambda reader: _activated(reader, space, thread_id, relevance, settings)
        )
        events = [hit.card for hit in chosen]
        older = {hit.card.id: hit.history for hit in chosen if hit.history}
        recent = matching_tail_messages(  # the asked words alone: tail chatter matches chatter
            parse_query(latest_user_message).terms, others, settings.tail_message_limit
        )
        lines = [message_line(message, settings.tail_message_chars) for message in recent]
        nodes = await self.store.read(
            lambda reader: _graph_recall(
                reader, space, thread_id, (latest_user_message, text), settings
            )
        )
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


def channel_query(
    query: Query, config: RawChannelConfig, current_thread: str | None
) -> ChannelQuery:
    """What the raw channel reads for ``query``: its candidates by ``config``'s caps."""
    return ChannelQuery(
        tuple(query.terms),
        config.candidate_cap,
        config.context_reach,
        tuple(query.weak),
        config.category_cap,
        current_thread,
        context_cap=config.context_cap,
    )


def dated_messages(
    reader: RetrievalReader, space: str, windows: Sequence[Window], among: Sequence[str]
) -> tuple[set[str], set[str]]:
    """Of the messages ``among`` (the raw channel's loaded ones, sealed or in open tails:
    only they are ranked, so only they can take a vote), (those created in a window, those
    cited by a visible event that happened in one). Read per message, so a question naming
    a time costs the same in a space of any size (it read every message and event)."""
    spans = [(iso(w.start), iso(w.end)) for w in windows]
    created = {
        message_id
        for message_id, at in reader.created_at(among).items()
        if any(start <= at <= end for start, end in spans)  # as SQL's BETWEEN on the text
    }
    happened = {
        message_id
        for message_id, start, end in reader.happened_of(space, among)
        if any(w.overlaps(_moment(start or end), _moment(end or start)) for w in windows)
    }
    return created, happened


def _moment(value: str | None) -> datetime:
    return parse_iso(value or "")


def _block_channel(
    reader: RetrievalReader, found: Sequence[str], query: Query, limit: int
) -> list[str]:
    top = top_blocks(query.terms, reader.block_texts(found), limit)
    return [
        message_id
        for block_id in top
        for message_id in matching_messages(query.terms, reader.block_messages(block_id))
    ]


def _graph_search(reader: RetrievalReader, space: str, query: str, limit: int) -> list[GraphHit]:
    """§6.5 over the nodes sharing a term with the query, as they stand now."""
    terms = query_tokens(query)
    found = reader.graph_records(space, terms, candidate_cap(limit))
    return search_nodes(terms, assemble(found, NOW), limit)


def _graph_channel(
    reader: RetrievalReader, space: str, query: str, config: FusionConfig
) -> list[str]:
    hits = _graph_search(reader, space, query, config.graph_nodes)
    events = statement_events(hits, query_tokens(query), config.graph_events)
    return reader.cited_messages(space, events)


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
        hits = _graph_search(reader, space, query, GRAPH_RELEVANCE)
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
