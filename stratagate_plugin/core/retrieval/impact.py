"""Ranking over an impact index: BM25 of every message holding a query term, in bulk.

The raw channel's candidates are the messages with the best BM25 (``BM25_K1``/``BM25_B``,
the parameters FTS5's ``rank`` used before) over the space's own statistics; a term's
postings are scored as arrays, so a common word costs one vector operation, not a
Python loop. Ties go to the later message (the higher rowid), as the raw channel's own
order does.

Exact, though not every posting is scored: when a question's words are common (a few
hundred thousand postings), the rarer terms are scored in full and the common ones only
where they can still change the best ``cap`` (MaxScore, ``_pruned``); the rowids kept are
then scored exactly as the full sum scores them, so the same rowids come back in the same
order. Measured on the 500k-message benchmark: "what did we say about the" ~22 → ~4 ms.
"""

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple, cast

import numpy as np
import numpy.typing as npt

from .bm25 import BM25_B, BM25_K1, idf
from .storage import LENGTH_CAP, CorpusStats, TermPostings

__all__ = ["best_rowids", "posted_lengths", "term_counts"]

Rowids = npt.NDArray[np.signedinteger[Any]]
_DENSE_SPAN = 4  # score into a dense array when rowids span under 4× the postings
PRUNE_FROM = 20_000  # postings in all below which every one is scored
PRUNE_MARGIN = 1e-9  # relative slack on bounds and floors against rounding


def best_rowids(
    postings: Mapping[str, TermPostings],
    terms: Sequence[str],
    stats: CorpusStats,
    cap: int,
    leave_out: Sequence[int] = (),
) -> list[int]:
    """The ``cap`` best-scoring rowids holding any of ``terms``, best first."""
    present = [t for t in dict.fromkeys(terms) if t in postings and len(postings[t].rowids)]
    if not present or cap < 1:
        return []
    avgdl = (stats.message_tokens / stats.messages if stats.messages else 1.0) or 1.0
    scoring = _Scoring(postings, {t: _weight(stats, t) for t in present}, avgdl)
    excluded = np.asarray(leave_out, dtype=np.int64)
    found = _pruned(scoring, present, cap, excluded)
    if found is None:
        found = _every(scoring, present, excluded)
    return _best(*found, cap)


class _Scoring(NamedTuple):
    """The query's postings with each term's idf and the average length: what scores."""

    postings: Mapping[str, TermPostings]
    weights: Mapping[str, float]
    avgdl: float

    def scores(self, term: str) -> npt.NDArray[np.float64]:
        return _scores(self.postings[term], self.weights[term], self.avgdl)

    def bound(self, term: str) -> float:
        """No message's score for ``term`` exceeds this: the score of its highest count
        at its shortest length (BM25 grows with the count, falls with the length)."""
        found = self.postings[term]
        top = TermPostings(
            found.rowids[:1], found.counts.max(keepdims=True), found.lengths.min(keepdims=True)
        )
        return float(_scores(top, self.weights[term], self.avgdl)[0])

    def at(
        self, term: str, rowids: Rowids
    ) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.float64]]:
        """(which of ``rowids`` hold ``term``, the term's score in each that does)."""
        found = self.postings[term]
        hit, at = _held(found, rowids)
        at = at[hit]
        held = TermPostings(found.rowids[at], found.counts[at], found.lengths[at])
        return hit, _scores(held, self.weights[term], self.avgdl)


Scored = tuple[Rowids, npt.NDArray[np.float64]]


def _every(scoring: _Scoring, present: Sequence[str], excluded: Rowids) -> Scored:
    """Every rowid holding a term, with its score."""
    rowids, scores = _summed([(scoring.postings[t].rowids, scoring.scores(t)) for t in present])
    if len(excluded):
        keep = ~np.isin(rowids, excluded)
        rowids, scores = rowids[keep], scores[keep]
    return rowids, scores


def _best(rowids: Rowids, scores: npt.NDArray[np.float64], cap: int) -> list[int]:
    """The ``cap`` best, score then rowid descending."""
    if len(rowids) > cap:  # every score tied with the cap-th kept, so ties break by rowid
        floor = -np.partition(-scores, cap - 1)[cap - 1]
        keep = scores >= floor
        rowids, scores = rowids[keep], scores[keep]
    order = np.lexsort((-rowids, -scores))[:cap]
    return [int(r) for r in rowids[order]]


def _pruned(scoring: _Scoring, present: Sequence[str], cap: int, excluded: Rowids) -> Scored | None:
    """The rowids that can rank in the best ``cap``, exactly scored, when the common terms
    can be left out (``None``: they cannot, or the postings are too few to try).

    MaxScore: the terms with the highest bounds are scored in full until the ``cap``-th best
    of those partial scores exceeds every other term's bound together; a message holding
    only the other terms then cannot rank. The others are looked up for the remaining
    candidates only, the candidates narrowed after each. A bound is compared with
    ``PRUNE_MARGIN`` to spare, so rounding never drops a message that ties; the kept
    rowids are then scored as ``_every`` scores them (the terms added in query order)."""
    if sum(len(scoring.postings[t].rowids) for t in present) < PRUNE_FROM:
        return None
    bounds = {t: scoring.bound(t) for t in present}
    ordered = sorted(present, key=lambda t: -bounds[t])
    for n in range(1, len(ordered)):
        essential, rest = ordered[:n], ordered[n:]
        reach = _reach(bounds, rest)
        if reach >= sum(bounds[t] for t in essential):
            continue  # the partial scores cannot beat ``reach``
        rowids, partial = _every(scoring, essential, excluded)
        if len(rowids) >= cap and reach < _floor(partial, cap):
            kept = _narrowed(scoring, bounds, rest, cap, (rowids, partial))
            return kept, _rescored(scoring, present, kept)
    return None


def _narrowed(
    scoring: _Scoring, bounds: Mapping[str, float], rest: Sequence[str], cap: int, found: Scored
) -> Rowids:
    """The candidates whose partial score plus the remaining terms' bounds can still reach
    the ``cap``-th best partial score, a term added at a time."""
    rowids, partial = found
    theta = _floor(partial, cap)
    for n, term in enumerate(rest):
        keep = partial + _reach(bounds, rest[n:]) >= theta
        rowids, partial = rowids[keep], partial[keep]
        hit, scores = scoring.at(term, rowids)
        partial[hit] += scores
        theta = max(theta, _floor(partial, cap))
    return rowids[partial >= theta]


def _rescored(scoring: _Scoring, present: Sequence[str], rowids: Rowids) -> npt.NDArray[np.float64]:
    """The rowids' scores summed in query order, as ``_summed`` sums them (the same floats)."""
    scores = np.zeros(len(rowids))
    for term in present:
        hit, found = scoring.at(term, rowids)
        scores[hit] += found
    return scores


def _reach(bounds: Mapping[str, float], terms: Sequence[str]) -> float:
    return sum(bounds[t] for t in terms) * (1 + PRUNE_MARGIN)


def _floor(scores: npt.NDArray[np.float64], cap: int) -> float:
    """The ``cap``-th best score, less ``PRUNE_MARGIN`` (0 when fewer are scored)."""
    if len(scores) < cap:
        return 0.0
    return float(-np.partition(-scores, cap - 1)[cap - 1]) * (1 - PRUNE_MARGIN)


def _weight(stats: CorpusStats, term: str) -> float:
    return idf(stats.messages, stats.message_df.get(term, 0))


def _scores(found: TermPostings, weight: float, avgdl: float) -> npt.NDArray[np.float64]:
    """BM25 of each posting; stored uint16 counts and lengths widen to float64 in the first
    operation on them, so the floats are those of float64 arrays."""
    tf, length = found.counts, found.lengths
    norm = BM25_K1 * (1 - BM25_B + BM25_B * length / avgdl)
    return cast(npt.NDArray[np.float64], weight * tf * (BM25_K1 + 1) / (tf + norm))


def _summed(
    parts: Sequence[tuple[Rowids, npt.NDArray[np.float64]]],
) -> tuple[Rowids, npt.NDArray[np.float64]]:
    """(distinct rowids, their summed scores); each term holds a rowid at most once."""
    if len(parts) == 1:
        return parts[0]
    low = min(int(r[0]) for r, _ in parts)
    high = max(int(r[-1]) for r, _ in parts)
    total = sum(len(r) for r, _ in parts)
    if high - low + 1 <= _DENSE_SPAN * total:
        dense = np.zeros(high - low + 1)
        for rowids, scores in parts:
            dense[rowids - low] += scores
        hit = np.flatnonzero(dense)
        return hit.astype(np.int64) + low, dense[hit].astype(np.float64)
    every = np.concatenate([r for r, _ in parts])
    distinct, where = np.unique(every, return_inverse=True)
    summed = np.bincount(where, weights=np.concatenate([s for _, s in parts]))
    return distinct.astype(np.int64), summed.astype(np.float64)


def term_counts(
    postings: Mapping[str, TermPostings], rowids: Sequence[int]
) -> dict[int, dict[str, int]]:
    """Each rowid's count of each term it holds (only terms with postings)."""
    wanted = np.asarray(sorted(set(rowids)), dtype=np.int64)
    found: dict[int, dict[str, int]] = {}
    for term, entry in postings.items():
        hit, at = _held(entry, wanted)
        for rowid, count in zip(wanted[hit].tolist(), entry.counts[at[hit]].tolist(), strict=True):
            found.setdefault(rowid, {})[term] = int(count)
    return found


def posted_lengths(postings: Mapping[str, TermPostings], rowids: Sequence[int]) -> dict[int, int]:
    """The token length of each of these rowids that some term's postings hold, so the
    store need not count it again; a length at ``LENGTH_CAP`` may be cut and is left out."""
    wanted = np.asarray(sorted(set(rowids)), dtype=np.int64)
    found: dict[int, int] = {}
    for entry in postings.values():
        hit, at = _held(entry, wanted)
        for rowid, length in zip(
            wanted[hit].tolist(), entry.lengths[at[hit]].tolist(), strict=True
        ):
            if length < LENGTH_CAP:
                found[rowid] = int(length)
    return found


def _held(
    entry: TermPostings, wanted: Rowids
) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.intp]]:
    """(which of ``wanted`` the postings hold, where each would sit in them)."""
    at = np.searchsorted(entry.rowids, wanted.astype(entry.rowids.dtype, copy=False))
    hit = np.zeros(len(wanted), dtype=bool)
    if len(entry.rowids):
        inside = at < len(entry.rowids)
        hit[inside] = entry.rowids[at[inside]] == wanted[inside]
    return hit, at
