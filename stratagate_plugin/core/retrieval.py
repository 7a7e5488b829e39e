"""Retrieval entry points over an open database; the raw channel of the fused ``retrieve()``.

The raw channel ranks sealed messages by BM25 (function words dropped from the query),
then lets context vote: a message gains from its best-matching thread neighbour (an
answer usually sits next to the question that names the topic) and from how well its
block as a whole matches. Every added score is relative to the best message score, and
a message whose neighbourhood matched nothing is never returned.
"""

from collections.abc import Sequence
from dataclasses import dataclass

from .retrieval_types import RawHit
from .search import bm25_rank
from .store import Database, raw_search
from .tokenize import query_tokens, tokenize


@dataclass(frozen=True)
class RawChannelConfig:
    """BM25 with short-document settings (k1 0.9, b 0.4) plus the two context weights."""

    k1: float = 0.9
    b: float = 0.4
    neighbour_weight: float = 0.5
    block_weight: float = 0.5


@dataclass(frozen=True)
class ChannelDoc:
    id: str
    thread_id: str
    block_id: str
    tokens: list[str]


RAW_CHANNEL = RawChannelConfig()


async def search_raw(
    db: Database, namespace: str, query: str, limit: int = 6, thread_id: str | None = None
) -> list[RawHit]:
    """Spec §6.6 raw search (tool ``memory_search_raw``)."""
    return await db.read(lambda raw: raw_search.search_raw(raw, namespace, query, limit, thread_id))


async def retrieve_raw(
    db: Database, namespace: str, query: str, k: int, config: RawChannelConfig = RAW_CHANNEL
) -> list[tuple[str, float]]:
    """The raw channel: (message id, score) best first; nothing when no query token matches."""
    terms = query_tokens(query)
    if not terms or k < 1:
        return []
    rows = await db.read(lambda raw: raw_search.sealed_messages(raw, namespace))
    docs = [
        ChannelDoc(r["id"], r["thread_id"], r["block_id"], tokenize(r["content"])) for r in rows
    ]
    return context_rank(terms, docs, config)[:k]


def context_rank(
    terms: Sequence[str], docs: Sequence[ChannelDoc], config: RawChannelConfig = RAW_CHANNEL
) -> list[tuple[str, float]]:
    """Own BM25 + neighbour and block votes, ties to the later message; docs in thread order."""
    own = _relative(bm25_rank(terms, {d.id: d.tokens for d in docs}, config.k1, config.b))
    if not own:
        return []
    blocks = _relative(bm25_rank(terms, _block_tokens(docs), config.k1, config.b))
    scored = []
    for index, doc in enumerate(docs):
        score = own.get(doc.id, 0.0) + config.neighbour_weight * _best_neighbour(docs, index, own)
        if score > 0:
            scored.append(
                (doc.id, score + config.block_weight * blocks.get(doc.block_id, 0.0), index)
            )
    scored.sort(key=lambda item: (-item[1], -item[2]))
    return [(doc_id, score) for doc_id, score, _ in scored]


def _relative(ranked: list[tuple[str, float]]) -> dict[str, float]:
    """Scores divided by the best one (BM25 scales differ from query to query)."""
    return {key: score / ranked[0][1] for key, score in ranked} if ranked else {}


def _block_tokens(docs: Sequence[ChannelDoc]) -> dict[str, list[str]]:
    blocks: dict[str, list[str]] = {}
    for doc in docs:
        blocks.setdefault(doc.block_id, []).extend(doc.tokens)
    return blocks


def _best_neighbour(docs: Sequence[ChannelDoc], index: int, own: dict[str, float]) -> float:
    """The better own score of the previous and next message in the same thread."""
    near = [docs[i] for i in (index - 1, index + 1) if 0 <= i < len(docs)]
    return max(
        (own.get(d.id, 0.0) for d in near if d.thread_id == docs[index].thread_id), default=0.0
    )
