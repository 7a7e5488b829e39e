"""Ranking rules (spec §6.1–6.3): field weighting, BM25, reciprocal-rank fusion, fuzzy match.

Pure functions over token lists and id lists; the store decides what the documents are.
"""

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import TypeVar

from ..text.search_terms import normalize, tokenize

K = TypeVar("K", str, int)

BM25_K1 = 1.2
BM25_B = 0.75
RRF_K = 60


def weighted_tokens(fields: Sequence[tuple[str, float]]) -> list[str]:
    """Each field's tokens repeated ``max(1, floor(weight))`` times (BM25 field boosting)."""
    tokens: list[str] = []
    for text, weight in fields:
        tokens.extend(tokenize(text) * max(1, math.floor(weight)))
    return tokens


def idf(total: int, df: int) -> float:
    """BM25 inverse document frequency; always positive."""
    return math.log(1 + (total - df + 0.5) / (df + 0.5))


def bm25_rank(
    query_tokens: Sequence[str],
    docs: Mapping[K, Sequence[str]],
    k1: float = BM25_K1,
    b: float = BM25_B,
) -> list[tuple[K, float]]:
    """Documents with a positive BM25 score, best first, ties by id."""
    counted = {doc_id: (Counter(tokens), len(tokens)) for doc_id, tokens in docs.items()}
    return bm25_rank_counted(query_tokens, counted, k1, b)


def bm25_rank_counted(
    query_tokens: Sequence[str],
    docs: Mapping[K, tuple[Mapping[str, int], int]],
    k1: float = BM25_K1,
    b: float = BM25_B,
) -> list[tuple[K, float]]:
    """``bm25_rank`` over precounted documents: (token counts, length) per id.

    Document frequencies are counted from each document's own terms, and a document is
    scored over the query terms it holds, in the query's order: the same sums in the same
    order as walking every query term for every document (a recall query's ~44 terms
    against documents that hold a few of them), so the same floats.
    """
    terms = list(dict.fromkeys(query_tokens))
    if not terms or not docs:
        return []
    avgdl = sum(length for _, length in docs.values()) / len(docs) or 1.0
    df = dict.fromkeys(terms, 0)
    held_any = []  # a document holding no query term scores 0: never scored
    for doc_id, (counts, _) in docs.items():
        found = False
        for term in counts:
            if term in df:
                df[term] += 1
                found = True
        if found:
            held_any.append(doc_id)
    weights = {t: idf(len(docs), df[t]) for t in terms}
    place = {term: n for n, term in enumerate(terms)}
    scored = []
    for doc_id in held_any:
        tf, length = docs[doc_id]
        held = weights
        if len(tf) < len(weights):
            held = {
                t: weights[t] for t in sorted((t for t in tf if t in place), key=place.__getitem__)
            }
        score = bm25_score(tf, length, held, avgdl, k1, b)
        if score > 0:
            scored.append((doc_id, score))
    return sorted(scored, key=lambda item: (-item[1], item[0]))


def bm25_score(
    tf: Mapping[str, float],
    length: float,
    weights: Mapping[str, float],
    avgdl: float,
    k1: float = BM25_K1,
    b: float = BM25_B,
) -> float:
    """One document's BM25: each weighted term's saturated count, length-normalised."""
    norm = k1 * (1 - b + b * length / avgdl)
    return sum(w * tf[t] * (k1 + 1) / (tf[t] + norm) for t, w in weights.items() if t in tf)


def rrf_rank(
    rankings: Sequence[tuple[Sequence[K], float]], k: int = RRF_K
) -> list[tuple[K, float]]:
    """Weighted reciprocal-rank fusion; ties by best rank, then id."""
    scores: dict[K, float] = {}
    best: dict[K, int] = {}
    for ranked, weight in rankings:
        if weight <= 0:
            continue
        for rank, item in enumerate(ranked):
            scores[item] = scores.get(item, 0.0) + weight / (k + rank + 1)
            best[item] = min(best.get(item, rank), rank)
    return sorted(scores.items(), key=lambda item: (-item[1], best[item[0]], item[0]))


def fuzzy_match(a: str, b: str) -> bool:
    """Normalised equality or containment either way; an empty side never matches."""
    left, right = normalize(a), normalize(b)
    if not left or not right:
        return False
    return left in right or right in left
