"""Retrieval use cases of the façade: raw search, the fused ``retrieve()``, automatic recall.

``retrieve()`` and recall parse their query once (``query.Query``) and hand it to every
channel; the rules live in ``fused``, ``raw_channel`` and ``recall``, the reads in
``store``. Retrieval never reinforces; only automatic recall stamps the events it finds.
"""

import sqlite3
from collections.abc import Mapping, Sequence
from dataclasses import replace
from functools import partial
from typing import Any

from ..clock import utc_now
from ..events import history
from ..events.ranking import EventHit, weight_key
from ..events.service import EventsService, supersession_links
from ..graph.search import statement_events
from ..graph.views import NOW
from ..service_base import EngineParts, ServiceBase
from ..store import block_rows, event_rows, graph_reads, raw_search
from ..store import event_search_rows as event_reads
from ..store.retrieval_rows import (
    block_message_texts,
    channel_rows,
    dated_messages,
    latest_message_time,
    ready_block_texts,
)
from ..store.sqlite.graph import search_graph_in
from ..text.search_terms import query_tokens
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
from .query import Query, parse_query
from .raw_channel import RAW_CHANNEL, RawChannelConfig, context_rank
from .recall import (
    DEFAULT_RECALL,
    AutoContext,
    RecallConfig,
    activation_order,
    activation_query,
    matching_tail_messages,
    message_line,
    render_recall,
)

OWN_CHECK_SLICE = 16
GRAPH_RELEVANCE = 12


class RetrievalService(ServiceBase):
    """Raw and fused retrieval over sealed messages, and the automatic memory context;
    its event channel is the events capability's search."""

    def __init__(self, parts: EngineParts, events: EventsService) -> None:
        super().__init__(parts)
        self.events = events

    async def search_raw(
        self, namespace: str, query: str, limit: int = 6, thread_id: str | None = None
    ) -> list[RawHit]:
        """Spec §6.6: sealed L5 messages with their neighbours; ``thread_id`` limits the scope."""
        return await self.db.read(
            lambda raw: raw_search.search_raw(raw, namespace, query, limit, thread_id)
        )

    async def search_raw_ranked(
        self, namespace: str, query: str, limit: int = 6, *, current_thread: str | None = None
    ) -> list[RawHit]:
        """Messages in ``retrieve()``'s order with their neighbours: what the agent's raw
        search shows at namespace scope, so it reads what the benchmark measures."""
        if limit < 1:
            return []
        found = await self.retrieve(namespace, query, limit, current_thread=current_thread)
        scored = [(hit.message_id, hit.score) for hit in found]
        return await self.db.read(lambda raw: raw_search.hits_for(raw, scored))

    async def retrieve(
        self,
        namespace: str,
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
            namespace, query, k, settings, current_thread=current_thread
        )
        return fuse(rankings, settings, k)

    async def channel_rankings(
        self,
        namespace: str,
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
        reference = await self.db.read(lambda raw: latest_message_time(raw, namespace))
        parsed = parse_query(query, reference or utc_now())
        if not parsed.terms:
            return {name: [] for name in CHANNELS}
        hits = await self.events.ranked(
            namespace,
            parsed,
            limit=settings.event_limit,
            agent_weight=settings.agent_weight,
            track_retrieval=False,
        )
        cited = [hit.source_message_ids for hit in hits]
        boost = event_boost(cited, settings.event_boost)
        if parsed.windows:
            created, happened = await self.db.read(
                lambda raw: dated_messages(raw, namespace, parsed.windows)
            )
            boost = window_votes(boost, created, happened, settings)
        ranked = await self.raw_channel(
            namespace, parsed, 2 * k, settings.raw_channel, boost, current_thread=current_thread
        )
        raw_ids = [message_id for message_id, _ in ranked]
        limit = settings.block_limit
        blocks = await self.db.read(lambda raw: block_channel(raw, raw_ids, parsed, limit))
        events = list(dict.fromkeys(m for message_ids in cited for m in message_ids))
        graph: list[str] = []
        if settings.graph_weight > 0:
            graph = await self.db.read(lambda raw: graph_channel(raw, namespace, query, settings))
        return {"raw": raw_ids, "event": events, "block": blocks, "graph": graph}

    async def raw_channel(
        self,
        namespace: str,
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
        terms, weak = query.terms, query.weak  # worked out here, not on the database thread
        docs, stats = await self.db.read(
            lambda raw: channel_rows(
                raw,
                namespace,
                terms,
                config.candidate_cap,
                config.context_reach,
                weak,
                config.category_cap,
                current_thread,
            )
        )
        return context_rank(terms, docs, stats, config, boost or {}, weak)[:k]

    async def auto_context(
        self,
        namespace: str,
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
        tail, others = await self.db.read(
            lambda raw: (
                block_rows.open_tail(raw, namespace, thread_id),
                block_rows.open_tails(raw, namespace, thread_id),
            )
        )
        text = activation_query(latest_user_message, tail, settings.tail_turns)
        relevance = await self.events.ranked(
            namespace,
            parse_query(text),
            limit=settings.relevance_limit,
            agent_weight=settings.agent_weight,
        )
        chosen = await self.db.read(
            lambda raw: activated(raw, namespace, thread_id, relevance, settings)
        )
        events = [hit.card for hit in chosen]
        older = {hit.card.id: hit.history for hit in chosen if hit.history}
        recent = matching_tail_messages(  # the asked words alone: tail chatter matches chatter
            parse_query(latest_user_message).terms, others, settings.tail_message_limit
        )
        lines = [message_line(message, settings.tail_message_chars) for message in recent]
        nodes = await self.db.read(
            lambda raw: graph_recall(raw, namespace, thread_id, text, settings)
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


def graph_recall(
    raw: sqlite3.Connection, namespace: str, thread_id: str, query: str, config: RecallConfig
) -> list[dict[str, Any]]:
    """The recall lines of up to ``node_limit`` graph nodes matching the query (of 12
    searched), leaving out nodes whose evidence all comes from the current thread (already
    in the native history)."""
    hits = search_graph_in(raw, namespace, query, GRAPH_RELEVANCE, NOW)
    cited = [i for hit in hits for i in hit.provenance_event_ids]
    own = event_reads.events_from_thread(raw, cited, thread_id)
    kept = [hit for hit in hits if not set(hit.provenance_event_ids) <= own]
    return [hit.recall_line() for hit in kept[: config.node_limit]]


def graph_channel(
    raw: sqlite3.Connection, namespace: str, query: str, config: FusionConfig
) -> list[str]:
    """The messages cited by the events of the matching nodes' facts and edges that share
    a query term (``search.statement_events``)."""
    hits = search_graph_in(raw, namespace, query, config.graph_nodes, NOW)
    events = statement_events(hits, query_tokens(query), config.graph_events)
    return graph_reads.cited_messages(raw, namespace, events)


def block_channel(
    raw: sqlite3.Connection, found: Sequence[str], query: Query, limit: int
) -> list[str]:
    """The blocks holding the raw channel's hits, ranked by their L0–L2 text; of each, the
    messages that share a query term. Only those blocks are read, whatever the namespace size."""
    if not query.terms or not found:
        return []
    top = top_blocks(query.terms, ready_block_texts(raw, found), limit)
    return [
        message_id
        for block_id in top
        for message_id in matching_messages(query.terms, block_message_texts(raw, block_id))
    ]


def activated(
    raw: sqlite3.Connection,
    namespace: str,
    thread_id: str,
    relevance: Sequence[EventHit],
    config: RecallConfig,
) -> list[EventHit]:
    """Relevance hits and pinned/safety events fused from weight keys alone; cards are read
    only for the events shown. A superseded event takes its newer card's place."""
    turn = event_reads.current_turn(raw, namespace)
    hits = {hit.card.id: hit for hit in relevance}
    keys = {key: weight_key(hit.card, turn) for key, hit in hits.items()}
    for key, weight in event_reads.bypass_weights(raw, namespace, turn).items():
        keys.setdefault(key, weight)
    fused = activation_order(list(hits), keys)
    chosen = _outside_thread(raw, namespace, fused, thread_id, config.event_limit)
    return [hits.get(key) or _with_history(raw, namespace, key) for key in chosen]


def _with_history(raw: sqlite3.Connection, namespace: str, event_id: str) -> EventHit:
    """A card recall adds beside the relevance hits (pinned, safety, or their newer card)."""
    card = event_rows.get_event(raw, event_id)
    read = partial(event_rows.visible_cards, raw, namespace)
    return EventHit(card=card, rank_score=0.0, history=history.history_of(card, read))


def _outside_thread(
    raw: sqlite3.Connection, namespace: str, fused: Sequence[str], thread_id: str, limit: int
) -> list[str]:
    """The first ``limit`` heads (``history.head_of``) not sourced from ``thread_id``, checked
    a slice at a time."""
    chosen: list[str] = []
    for start in range(0, len(fused), OWN_CHECK_SLICE):
        part = fused[start : start + OWN_CHECK_SLICE]
        found = event_rows.visible_rows(raw, namespace, part)
        links = supersession_links(raw, namespace, found, part)
        heads = [
            h for h in dict.fromkeys(history.head_of(k, links) for k in part) if h not in chosen
        ]
        own = event_reads.events_from_thread(raw, heads, thread_id)
        chosen += [key for key in heads if key not in own]
        if len(chosen) >= limit:
            break
    return chosen[:limit]
