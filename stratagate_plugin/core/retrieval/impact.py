"""Ranking over an impact index: BM25 of every message holding a query term, in bulk.

The raw channel's candidates are the messages with the best BM25 (``BM25_K1``/``BM25_B``,
the parameters FTS5's ``rank`` used before) over the space's own statistics; a term's
postings are scored as arrays, so a common word costs one vector operation, not a
Python loop. Exact: every posting is scored, nothing is pruned. Ties go to the later
message (the higher rowid), as the raw channel's own order does.
"""

from collections.abc import Mapping, Sequence

import numpy as np
import numpy.typing as npt

from .bm25 import BM25_B, BM25_K1, idf
from .storage import LENGTH_CAP, CorpusStats, TermPostings

__all__ = ["best_rowids", "posted_lengths", "term_counts"]

_DENSE_SPAN = 4  # score into a dense array when rowids span under 4× the postings


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
    parts = [(postings[t].rowids, _scores(postings[t], _weight(stats, t), avgdl)) for t in present]
    rowids, scores = _summed(parts)
    if len(leave_out):
        keep = ~np.isin(rowids, np.asarray(leave_out, dtype=np.int64))
        rowids, scores = rowids[keep], scores[keep]
    if len(rowids) > cap:  # every score tied with the cap-th kept, so ties break by rowid
        floor = -np.partition(-scores, cap - 1)[cap - 1]
        keep = scores >= floor
        rowids, scores = rowids[keep], scores[keep]
    order = np.lexsort((-rowids, -scores))[:cap]
    return [int(r) for r in rowids[order]]


def _weight(stats: CorpusStats, term: str) -> float:
    return idf(stats.messages, stats.message_df.get(term, 0))


def _scores(found: TermPostings, weight: float, avgdl: float) -> npt.NDArray[np.float64]:
    tf, length = found.counts, found.lengths
    norm = BM25_K1 * (1 - BM25_B + BM25_B * length / avgdl)
    return weight * tf * (BM25_K1 + 1) / (tf + norm)


def _summed(
    parts: Sequence[tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]],
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]:
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
    entry: TermPostings, wanted: npt.NDArray[np.int64]
) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.intp]]:
    """(which of ``wanted`` the postings hold, where each would sit in them)."""
    at = np.searchsorted(entry.rowids, wanted)
    hit = np.zeros(len(wanted), dtype=bool)
    if len(entry.rowids):
        inside = at < len(entry.rowids)
        hit[inside] = entry.rowids[at[inside]] == wanted[inside]
    return hit, at
