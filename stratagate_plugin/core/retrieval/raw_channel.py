"""The raw channel of ``retrieve()``: raw messages ranked by BM25, then voted by context.

Its corpus is the sealed messages plus the open tails of the other sessions (issue #14,
beyond spec §6.6's sealed-only corpus): a fact told in one session is found from every
other one from its next turn on, however short the first session stays. An open tail
counts as a block of its own (``OPEN_TAIL``) for the block votes.

A message gains from its best-matching thread neighbour (an answer usually sits next to
the question that names the topic), from how well its block matches, from the speaker a
query names, and from outside votes (events citing it, dates it falls in); a message whose
neighbourhood matched nothing is never returned. An answer composed from memory keeps
``echo_weight`` of its score: found, but below the statement it repeats.
Measurements: docs/retrieval-experiments.md.
"""

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from .bm25 import bm25_score, idf
from .storage import OPEN_TAIL, CorpusStats

__all__ = ["OPEN_TAIL", "ChannelDoc", "CorpusStats", "RawChannelConfig"]


@dataclass(frozen=True)
class RawChannelConfig:
    """BM25 with short-document settings, the context votes, and the FTS candidate caps."""

    k1: float = 0.9
    b: float = 0.4
    neighbour_weight: float = 0.3
    neighbour_reach: int = 2
    block_weight: float = 0.5
    speaker_weight: float = 0.7
    speaker_min_messages: int = 3
    expansion_weight: float = 0.5
    candidate_cap: int = 200
    context_cap: int = 50  # matches whose neighbours are read (with an impact index)
    category_weight: float = 0.5
    category_cap: int = 100
    echo_weight: float = 0.5  # an answer composed from memory, against what it repeats

    @property
    def context_reach(self) -> int:
        """Positions around a match to load: a successor scored by expansion votes onward."""
        return self.neighbour_reach + 1


RAW_CHANNEL = RawChannelConfig()


class ChannelDoc(NamedTuple):
    """A message (sealed, or in an open tail: ``block_id`` is then ``OPEN_TAIL:<thread>``):
    its tokens and the tokens of its ``Name:`` label (``speaker``). A tuple: ~500 are
    made a query, and a frozen dataclass costs several times as much to build."""

    id: str
    thread_id: str
    block_id: str
    position: int
    block_sequence: int
    tokens: list[str]
    speaker: tuple[str, ...] = ()
    echo: bool = False  # composed from memory: demoted below the statement it repeats
    length: int = -1  # token length when ``tokens`` holds only the query's terms

    @property
    def size(self) -> int:
        """The message's length in tokens."""
        return self.length if self.length >= 0 else len(self.tokens)


def scan_stats(docs: Sequence[ChannelDoc], terms: Sequence[str]) -> CorpusStats:
    """The statistics computed from a complete list of messages (a namespace's, its tails')."""
    block_tokens: dict[str, set[str]] = {}
    lengths: dict[str, int] = {}
    for doc in docs:
        block_tokens.setdefault(doc.block_id, set()).update(doc.tokens)
        lengths[doc.block_id] = lengths.get(doc.block_id, 0) + len(doc.tokens)
    token_sets = [set(doc.tokens) for doc in docs]
    return CorpusStats(
        messages=len(docs),
        message_tokens=sum(lengths.values()),
        blocks=len(lengths),
        message_df={t: sum(1 for s in token_sets if t in s) for t in terms},
        block_df={t: sum(1 for s in block_tokens.values() if t in s) for t in terms},
        block_lengths=lengths,
    )


def added_stats(first: CorpusStats, second: CorpusStats) -> CorpusStats:
    """The statistics of two disjoint corpora together (sealed ones and open tails)."""

    def summed(a: dict[str, int], b: dict[str, int]) -> dict[str, int]:
        return {key: a.get(key, 0) + b.get(key, 0) for key in a.keys() | b.keys()}

    return CorpusStats(
        messages=first.messages + second.messages,
        message_tokens=first.message_tokens + second.message_tokens,
        blocks=first.blocks + second.blocks,
        message_df=summed(first.message_df, second.message_df),
        block_df=summed(first.block_df, second.block_df),
        block_lengths=summed(first.block_lengths, second.block_lengths),
    )


def speaker_label(content: str) -> str:
    """The name before a leading ``Name:`` label (at most three words), else ``""``."""
    label, colon, _ = content.partition(":")
    if not colon or len(label) > 40 or len(label.split()) > 3 or any(c.isdigit() for c in label):
        return ""
    return label.strip()


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
    steps = [step for step in range(-config.neighbour_reach, config.neighbour_reach + 1) if step]
    scored = []
    for doc in docs:
        score = own.get(doc.id, 0.0) + config.neighbour_weight * _best_neighbour(doc, at, steps)
        if score > 0:
            score += config.block_weight * blocks.get(doc.block_id, 0.0) + extra.get(doc.id, 0.0)
            score += config.speaker_weight * _speaker_match(doc, named)
            score *= config.echo_weight if doc.echo else 1.0
            scored.append((doc.id, score, (doc.block_sequence, doc.position)))
    scored.sort(key=lambda item: (-item[1], (-item[2][0], -item[2][1])))
    return [(doc_id, score) for doc_id, score, _ in scored]


def _message_scores(
    factors: Mapping[str, float],
    docs: Sequence[ChannelDoc],
    stats: CorpusStats,
    config: RawChannelConfig,
) -> dict[str, float]:
    """Each message's BM25 with its predecessor's counts at ``expansion_weight`` (a
    message whose expanded counts hold no query term scores nothing and is left out).

    Hot: one pass of plain loops over the loaded messages (~500 a query), the arithmetic
    of ``bm25_score`` term by term in the same order, so every score is the same float."""
    avgdl = (stats.message_tokens / stats.messages if stats.messages else 1.0) or 1.0
    weights = [(t, f * idf(stats.messages, stats.message_df.get(t, 0))) for t, f in factors.items()]
    counted = {(d.thread_id, d.position): (_query_counts(d.tokens, factors), d.size) for d in docs}
    k1, b, saturation = config.k1, config.b, config.k1 + 1
    scores: dict[str, float] = {}
    for doc in docs:
        tf, length = _expanded(counted, (doc.thread_id, doc.position), config.expansion_weight)
        if length and tf:
            norm = k1 * (1 - b + b * length / avgdl)
            score: float = 0  # as ``sum`` starts
            for t, w in weights:
                if t in tf:
                    score += w * tf[t] * saturation / (tf[t] + norm)
            scores[doc.id] = score
    return scores


def _query_counts(tokens: Sequence[str], wanted: Mapping[str, float]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for token in tokens:
        if token in wanted:
            counts[token] = counts.get(token, 0) + 1
    return counts


def _expanded(
    counted: dict[tuple[str, int], tuple[dict[str, int], int]],
    place: tuple[str, int],
    weight: float,
) -> tuple[Mapping[str, float], float]:
    """Query-term counts and length of a message plus its predecessor's at ``weight``."""
    own, length = counted[place]
    before = counted.get((place[0], place[1] - 1))
    if before is None or weight <= 0:
        return own, float(length)
    tf: dict[str, float] = dict(own)
    for token, count in before[0].items():
        tf[token] = tf.get(token, 0.0) + weight * count
    return tf, length + weight * before[1]


def _block_scores(
    factors: Mapping[str, float],
    docs: Sequence[ChannelDoc],
    stats: CorpusStats,
    config: RawChannelConfig,
) -> dict[str, float]:
    counts: dict[str, dict[str, int]] = {}
    for doc in docs:
        block = counts.setdefault(doc.block_id, {})
        for token in doc.tokens:
            if token in factors:
                block[token] = block.get(token, 0) + 1
    avgdl = stats.message_tokens / stats.blocks if stats.blocks else 1.0
    weights = {t: f * idf(stats.blocks, stats.block_df.get(t, 0)) for t, f in factors.items()}
    return {
        block_id: bm25_score(
            tf, stats.block_lengths.get(block_id, 0), weights, avgdl or 1.0, config.k1, config.b
        )
        for block_id, tf in counts.items()
    }


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
    doc: ChannelDoc, at: dict[tuple[str, int], float], steps: Sequence[int]
) -> float:
    """The best own score among the thread's messages ``steps`` positions away."""
    best = 0.0
    for step in steps:
        score = at.get((doc.thread_id, doc.position + step), 0.0)
        if score > best:
            best = score
    return best
