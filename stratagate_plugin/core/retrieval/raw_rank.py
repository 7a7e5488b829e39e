"""Raw-message search's ranking (spec §6.6): BM25 over the sealed messages sharing a term.

The store finds the candidates (``RetrievalStorage.sealed_matches``, at scale the best
``candidate_limit`` on the query's rarest terms); here they are scored and ordered. An
answer composed from memory scores ``ECHO_WEIGHT`` of its BM25: it ranks below the
statement it repeats.
"""

from collections.abc import Sequence

from ..clock import parse_iso
from .bm25 import bm25_rank
from .storage import SealedMatch

MAX_CANDIDATES = 5000
ECHO_WEIGHT = 0.5  # an answer composed from memory, against the statement it repeats


def candidate_limit(limit: int) -> int:
    return min(MAX_CANDIDATES, max(100, limit * 20))


def rank_sealed(
    terms: Sequence[str], found: Sequence[SealedMatch], limit: int
) -> list[tuple[str, float]]:
    """The best ``limit`` (message id, score): score desc, then createdAt desc, block
    sequence desc, position desc, id. ``terms`` are encoded as the index's tokens."""
    by_id = {match.id: match for match in found}
    scores = dict(bm25_rank(list(terms), {match.id: match.tokens for match in found}))
    scores = {key: _demoted(score, by_id[key]) for key, score in scores.items()}
    ranked = sorted(scores, key=lambda key: _order_key(scores[key], by_id[key]))
    return [(key, scores[key]) for key in ranked[:limit]]


def _demoted(score: float, match: SealedMatch) -> float:
    """An answer composed from memory ranks below the words it repeats (still found)."""
    return score * ECHO_WEIGHT if match.composed_from_memory else score


def _order_key(score: float, match: SealedMatch) -> tuple[float, float, int, int, str]:
    moment = parse_iso(match.created_at).timestamp()
    return (-score, -moment, -match.block_sequence, -match.position, match.id)
