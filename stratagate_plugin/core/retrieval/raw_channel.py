"""Retrieval entry points over an open database; the raw channel of the fused ``retrieve()``.

The raw channel ranks sealed messages by BM25 (function words dropped from the query),
then lets context vote: a message gains from its best-matching thread neighbour within two
positions (an answer usually sits next to the question that names the topic), from how
well its block as a whole matches, and from any event that cites it. Every added score is
relative to the best score, and a message whose neighbourhood matched nothing is never
returned. Candidates come from the FTS5 index, so a query never loads the whole namespace.

Measured on LoCoMo (fused recall@10, EN / ZH), what helps beyond that:

- speaker votes: a query term that is a speaker's ``Name:`` label (one that starts at least
  ``speaker_min_messages`` of the loaded messages, so "Note: …" is no speaker) is not a topic term
  (it no longer rewards messages that merely address the person); messages said by the
  named speaker gain ``speaker_weight`` instead (+0.036 / +0.029 at 0.5, +0.001 / +0.009
  more at 0.7);
- document expansion: a message's BM25 document includes its predecessor's terms at
  half weight, so "Yes, last week!" carries the question's topic (+0.006 / +0.011, with the
  neighbour vote lowered from 0.5 to 0.3);
- category members: a question naming a closed category ("European countries", "cities",
  "martial arts"; ``core.word_categories``) adds the members as weak terms at
  ``category_weight`` of their idf, fetched apart from the question's own candidates
  (+0.005 / +0.004; the open class "activities" lost 0.001 and is not listed).

Tried without gain: a thread (session) vote, the successor's terms as expansion too,
favouring only the first named speaker, b 0.25 or 0.6, k1 1.2; and (each within ±0.003 EN
and ZH, or worse) a Snowball stemmer, a session-opener prior, a penalty on messages that are
questions, down-weighting generic question nouns ("activities", "things"), capping hits per
session, a bonus for adjacent query terms (proximity), multiplicative speaker votes, a prior
for messages an event cites, a smaller speaker vote for messages without a first-person
word, a place gazetteer for "where" questions, WordNet hypernyms as document
expansion (0.791) or hyponyms of two-word category nouns as query terms (+0.003 EN; the
curated closed categories above do better), and all-MiniLM-L6-v2 embeddings
(alone 0.505; fused at a small weight with the lexical ranking +0.001 to +0.003 EN, while
recall@1 fell from 0.448 to 0.34-0.40; English only, and torch-sized). The weights were
chosen on the three dev conversations; ``benchmarks/locomo_heldout.py`` picks them on two
and scores the third.
"""

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..store import Database, raw_search
from ..store.retrieval_rows import ChannelDoc, CorpusStats, channel_rows
from ..text.search_terms import query_tokens
from ..text.word_categories import category_terms
from .bm25 import idf
from .hits import RawHit


@dataclass(frozen=True)
class RawChannelConfig:
    """BM25 with short-document settings (k1 0.9, b 0.4), the context votes, the FTS cap.

    The cap bounds the candidates FTS5 hands over (best first by its own BM25); with their
    neighbours they are tokenized per query. 200 leaves LoCoMo recall as it was at 3,000
    (EN identical, ZH +0.003) and takes a query at 500,000 messages from ~1.4 s to ~0.15 s.
    """

    k1: float = 0.9
    b: float = 0.4
    neighbour_weight: float = 0.3
    neighbour_reach: int = 2
    block_weight: float = 0.5
    speaker_weight: float = 0.7
    speaker_min_messages: int = 3
    expansion_weight: float = 0.5
    candidate_cap: int = 200
    category_weight: float = 0.5
    category_cap: int = 100

    @property
    def context_reach(self) -> int:
        """Positions around a match to load: a successor scored by expansion votes onward."""
        return self.neighbour_reach + 1


RAW_CHANNEL = RawChannelConfig()


async def search_raw(
    db: Database, namespace: str, query: str, limit: int = 6, thread_id: str | None = None
) -> list[RawHit]:
    """Spec §6.6 raw search (tool ``memory_search_raw``)."""
    return await db.read(lambda raw: raw_search.search_raw(raw, namespace, query, limit, thread_id))


async def retrieve_raw(
    db: Database,
    namespace: str,
    query: str,
    k: int,
    config: RawChannelConfig = RAW_CHANNEL,
    boost: Mapping[str, float] | None = None,
) -> list[tuple[str, float]]:
    """The raw channel: (message id, score) best first; nothing when no query token matches.

    ``boost`` adds to a message's score (e.g. relative event scores of the events citing
    it) but never makes a message with no matching neighbourhood appear.
    """
    terms = query_tokens(query)
    if not terms or k < 1:
        return []
    weak = [term for term in category_terms(query) if term not in terms]
    docs, stats = await db.read(
        lambda raw: channel_rows(
            raw,
            namespace,
            terms,
            config.candidate_cap,
            config.context_reach,
            weak,
            config.category_cap,
        )
    )
    return context_rank(terms, docs, stats, config, boost or {}, weak)[:k]


def context_rank(
    terms: Sequence[str],
    docs: Sequence[ChannelDoc],
    stats: CorpusStats,
    config: RawChannelConfig = RAW_CHANNEL,
    boost: Mapping[str, float] | None = None,
    weak: Sequence[str] = (),
) -> list[tuple[str, float]]:
    """Own BM25 + neighbour, block and boost votes; ties to the later message.

    ``weak`` terms (a named category's members) count at ``category_weight`` of their idf.
    """
    unique = list(dict.fromkeys(terms))
    named = _speaker_terms(unique, docs, config.speaker_min_messages)
    topical = [t for t in unique if t not in named] or unique
    factors = {t: 1.0 for t in topical} | {
        t: config.category_weight for t in weak if t not in unique
    }
    own = _relative(_message_scores(factors, docs, stats, config))
    if not own:
        return []
    blocks = _relative(_block_scores(factors, docs, stats, config))
    at = {(d.thread_id, d.position): own.get(d.id, 0.0) for d in docs}
    extra = boost or {}
    scored = []
    for doc in docs:
        score = own.get(doc.id, 0.0) + config.neighbour_weight * _best_neighbour(doc, at, config)
        if score > 0:
            score += config.block_weight * blocks.get(doc.block_id, 0.0) + extra.get(doc.id, 0.0)
            score += config.speaker_weight * _speaker_match(doc, named)
            scored.append((doc.id, score, (doc.block_sequence, doc.position)))
    scored.sort(key=lambda item: (-item[1], (-item[2][0], -item[2][1])))
    return [(doc_id, score) for doc_id, score, _ in scored]


def _message_scores(
    factors: Mapping[str, float],
    docs: Sequence[ChannelDoc],
    stats: CorpusStats,
    config: RawChannelConfig,
) -> dict[str, float]:
    avgdl = stats.message_tokens / stats.messages if stats.messages else 1.0
    weights = {t: f * idf(stats.messages, stats.message_df.get(t, 0)) for t, f in factors.items()}
    counted = {  # each message counted once: as itself and as its successor's expansion
        (d.thread_id, d.position): (Counter(t for t in d.tokens if t in weights), len(d.tokens))
        for d in docs
    }
    scores = {}
    for doc in docs:
        tf, length = _expanded(counted, (doc.thread_id, doc.position), config.expansion_weight)
        if length:
            scores[doc.id] = _bm25(tf, length, weights, avgdl or 1.0, config)
    return scores


def _expanded(
    counted: dict[tuple[str, int], tuple[Counter[str], int]],
    place: tuple[str, int],
    weight: float,
) -> tuple[dict[str, float], float]:
    """Query-term counts and length of a message plus its predecessor's at ``weight``."""
    own, length = counted[place]
    tf: dict[str, float] = dict(own)
    before = counted.get((place[0], place[1] - 1))
    if before is None or weight <= 0:
        return tf, float(length)
    for token, count in before[0].items():
        tf[token] = tf.get(token, 0.0) + weight * count
    return tf, length + weight * before[1]


def _block_scores(
    factors: Mapping[str, float],
    docs: Sequence[ChannelDoc],
    stats: CorpusStats,
    config: RawChannelConfig,
) -> dict[str, float]:
    counts: dict[str, Counter[str]] = {}
    for doc in docs:
        counts.setdefault(doc.block_id, Counter()).update(t for t in doc.tokens if t in factors)
    avgdl = stats.message_tokens / stats.blocks if stats.blocks else 1.0
    weights = {t: f * idf(stats.blocks, stats.block_df.get(t, 0)) for t, f in factors.items()}
    return {
        block_id: _bm25(tf, stats.block_lengths.get(block_id, 0), weights, avgdl or 1.0, config)
        for block_id, tf in counts.items()
    }


def _bm25(
    tf: Mapping[str, float],
    length: float,
    weights: dict[str, float],
    avgdl: float,
    c: RawChannelConfig,
) -> float:
    norm = c.k1 * (1 - c.b + c.b * length / avgdl)
    return sum(w * tf[t] * (c.k1 + 1) / (tf[t] + norm) for t, w in weights.items() if t in tf)


def _relative(scores: dict[str, float]) -> dict[str, float]:
    """Positive scores divided by the best one (BM25 scales differ from query to query)."""
    best = max(scores.values(), default=0.0)
    return {key: score / best for key, score in scores.items() if score > 0} if best > 0 else {}


def _speaker_terms(terms: list[str], docs: Sequence[ChannelDoc], least: int) -> set[str]:
    """Query terms naming a speaker: a ``Name:`` label that starts ``least`` loaded messages.

    A one-off label ("Note: …", "Update: …") is the message's topic, not who said it.
    """
    wanted = set(terms)
    counts = Counter(t for doc in docs for t in set(doc.speaker) if t in wanted)
    return {term for term, count in counts.items() if count >= least}


def _speaker_match(doc: ChannelDoc, named: set[str]) -> float:
    """The share of the message's speaker-label tokens that the query names."""
    return len(named.intersection(doc.speaker)) / len(doc.speaker) if doc.speaker else 0.0


def _best_neighbour(
    doc: ChannelDoc, at: dict[tuple[str, int], float], config: RawChannelConfig
) -> float:
    """The best own score among the thread's messages within ``neighbour_reach`` positions."""
    steps = range(-config.neighbour_reach, config.neighbour_reach + 1)
    return max((at.get((doc.thread_id, doc.position + s), 0.0) for s in steps if s), default=0.0)


__all__ = ["ChannelDoc", "CorpusStats", "RawChannelConfig", "context_rank", "retrieve_raw"]
