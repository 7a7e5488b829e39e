"""Rules of ``retrieve()``: the votes between channels, the block channel, and their fusion.

Four channels, each mapped to L5 message ids: raw messages (context-voted BM25), event
cards (each hit contributes the messages it cites, in citation order), blocks (BM25
over a block's L0–L2 text; a hit contributes its messages that share a query term) and the
knowledge graph (the events cited by the facts and edges of matching nodes that share a
query term, then their messages; off unless ``graph_weight`` > 0, see
docs/graph-topics-measurements.md). Event
hits and the dates a question names also vote inside the raw channel, which puts that
evidence in context rather than beside it. Channels are fused by weighted reciprocal-rank
fusion; every id records which channels found it. Measurements:
docs/retrieval-experiments.md.
"""

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from pydantic import BaseModel

from ..text.search_terms import tokenize
from .bm25 import bm25_rank, rrf_rank
from .raw_channel import RAW_CHANNEL, RawChannelConfig

CHANNELS = ("raw", "event", "block", "graph")


@dataclass(frozen=True)
class FusionConfig:
    """Channel weights and limits; ``agent_weight`` is the event channel's agent-pool weight."""

    raw_weight: float = 1.0
    event_weight: float = 0.1
    block_weight: float = 0.05
    event_limit: int = 20
    event_boost: float = 0.25
    block_limit: int = 5
    created_boost: float = 0.5
    happened_boost: float = 0.5
    agent_weight: float = 1.0
    raw_channel: RawChannelConfig = RAW_CHANNEL
    graph_weight: float = 0.0
    graph_nodes: int = 8
    graph_events: int = 10


FUSION = FusionConfig()


class Retrieved(BaseModel):
    message_id: str
    score: float
    channels: list[str]


def event_boost(citations: Sequence[Sequence[str]], weight: float) -> dict[str, float]:
    """Each cited message's vote: ``weight / (1 + rank)`` of the best event citing it."""
    boost: dict[str, float] = {}
    for rank, message_ids in enumerate(citations):
        for message_id in message_ids:
            boost[message_id] = max(boost.get(message_id, 0.0), weight / (1 + rank))
    return boost


def window_votes(
    boost: Mapping[str, float],
    created: Collection[str],
    happened: Collection[str],
    config: FusionConfig,
) -> dict[str, float]:
    """``boost`` plus a vote for messages said, or (per their events) happened, in a window."""
    votes = dict(boost)
    for ids, weight in ((created, config.created_boost), (happened, config.happened_boost)):
        for message_id in ids:
            votes[message_id] = votes.get(message_id, 0.0) + weight
    return votes


def top_blocks(terms: Sequence[str], texts: Mapping[str, str], limit: int) -> list[str]:
    """The ``limit`` blocks whose L0–L2 text ranks best for ``terms``."""
    docs = {block_id: tokenize(text) for block_id, text in texts.items()}
    return [block_id for block_id, _ in bm25_rank(terms, docs)[:limit]]


def matching_messages(terms: Sequence[str], messages: Sequence[tuple[str, str]]) -> list[str]:
    """Ids of the (id, content) messages that share a term with the query."""
    wanted = set(terms)
    return [message_id for message_id, content in messages if wanted & set(tokenize(content))]


def fuse(rankings: Mapping[str, Sequence[str]], config: FusionConfig, k: int) -> list[Retrieved]:
    """The channels' rankings by weighted RRF, best ``k``, each with the channels that found it."""
    weights = {
        "raw": config.raw_weight,
        "event": config.event_weight,
        "block": config.block_weight,
        "graph": config.graph_weight,
    }
    fused = rrf_rank([(rankings.get(name, []), weights[name]) for name in CHANNELS])
    found = {name: set(ids) for name, ids in rankings.items()}
    return [
        Retrieved(
            message_id=mid,
            score=score,
            channels=[name for name in CHANNELS if mid in found.get(name, ())],
        )
        for mid, score in fused[:k]
    ]
