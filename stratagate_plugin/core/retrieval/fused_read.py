"""``retrieve()``'s channels inside one consistent read: events, raw, block and graph.

Every channel of a fused retrieval reads in one ``RetrievalStorage.read`` (one snapshot,
one hop to a reader thread): the event channel's ranking, the raw channel's documents, the
dates a question names, the blocks holding the raw hits, and the graph when weighted. Each
hop to a reader and back waits for both threads to be scheduled, which is cheap on an idle
machine and costs milliseconds when many server processes share the cores (issue #29).
"""

from collections.abc import Sequence
from datetime import datetime

from ..clock import iso, parse_iso
from ..events.ranking import EventSearch
from ..events.search import search_with_history
from ..graph.search import GraphHit, candidate_cap, search_nodes, statement_events
from ..graph.views import NOW, assemble
from ..text.search_terms import query_tokens
from .fused import FusionConfig, event_boost, matching_messages, top_blocks, window_votes
from .query import Query, Window
from .raw_channel import RawChannelConfig, context_rank
from .raw_docs import channel_docs
from .storage import ChannelQuery, RetrievalReader


def channel_rankings(
    reader: RetrievalReader,
    space: str,
    question: str,
    query: Query,
    k: int,
    settings: FusionConfig,
    current_thread: str | None,
) -> dict[str, list[str]]:
    """Each channel's ranked message ids for ``query`` (parsed from ``question``, with
    its time windows resolved); the raw channel leaves ``current_thread``'s open tail out."""
    request = EventSearch(query.terms, settings.event_limit, agent_weight=settings.agent_weight)
    hits = search_with_history(reader, space, request)
    docs, stats = channel_docs(
        reader, space, channel_query(query, settings.raw_channel, current_thread)
    )
    cited = [hit.source_message_ids for hit in hits]
    boost = event_boost(cited, settings.event_boost)
    if query.windows:
        among = [doc.id for doc in docs]
        created, happened = dated_messages(reader, space, query.windows, among)
        boost = window_votes(boost, created, happened, settings)
    rank = settings.raw_channel
    ranked = context_rank(query.terms, docs, stats, rank, boost, query.weak)[: 2 * k]
    raw_ids = [message_id for message_id, _ in ranked]
    blocks = block_channel(reader, raw_ids, query, settings.block_limit) if raw_ids else []
    events = list(dict.fromkeys(m for message_ids in cited for m in message_ids))
    graph: list[str] = []
    if settings.graph_weight > 0:
        graph = graph_channel(reader, space, question, settings)
    return {"raw": raw_ids, "event": events, "block": blocks, "graph": graph}


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


def block_channel(
    reader: RetrievalReader, found: Sequence[str], query: Query, limit: int
) -> list[str]:
    """The blocks holding the raw channel's hits, ranked by their L0–L2 text; of each,
    the messages that share a query term. Only those blocks are read, whatever the
    namespace size."""
    top = top_blocks(query.terms, reader.block_texts(found), limit)
    return [
        message_id
        for block_id in top
        for message_id in matching_messages(query.terms, reader.block_messages(block_id))
    ]


def graph_search(reader: RetrievalReader, space: str, query: str, limit: int) -> list[GraphHit]:
    """§6.5 over the nodes sharing a term with the query, as they stand now."""
    terms = query_tokens(query)
    found = reader.graph_records(space, terms, candidate_cap(limit))
    return search_nodes(terms, assemble(found, NOW), limit)


def graph_channel(
    reader: RetrievalReader, space: str, query: str, config: FusionConfig
) -> list[str]:
    """The messages cited by the events of the matching nodes' facts and edges that
    share a query term (``search.statement_events``)."""
    hits = graph_search(reader, space, query, config.graph_nodes)
    events = statement_events(hits, query_tokens(query), config.graph_events)
    return reader.cited_messages(space, events)
