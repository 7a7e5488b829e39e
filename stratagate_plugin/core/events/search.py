"""Event search over the candidates storage found: which candidates to ask for, and how
they are ranked and paged (the rules; ``EventsStorage.candidates`` only reads).

A plain query (terms, no filter, no scope) is ranked from BM25 documents alone and cards
are built for the page only; any other query ranks the candidates' cards.
"""

from collections.abc import Callable, Sequence

from ..retrieval.bm25 import weighted_tokens
from .cards import EventCard
from .ranking import (
    Document,
    EventHit,
    EventSearch,
    Hit,
    counted_document,
    event_fields,
    is_plain,
    rank_events,
    rank_plain,
)
from .storage import Candidate, CandidateQuery, SearchCandidates

POOLS: tuple[str, ...] = ("conversation", "agent")
MIN_CANDIDATES, MAX_CANDIDATES, CANDIDATES_PER_RESULT = 100, 2000, 10
CardReader = Callable[[Sequence[str]], Sequence[EventCard]]


def candidate_query(request: EventSearch) -> CandidateQuery:
    """Scope ids, or lexical ∪ structured matches (the lexical ones capped by the page
    asked), or (no query, no filter) whole pools; the agent pool only when weighted."""
    filters = request.filters
    checks = filters.checks()
    cap = min(MAX_CANDIDATES, max(MIN_CANDIDATES, request.lane * CANDIDATES_PER_RESULT))
    return CandidateQuery(
        pools=POOLS if request.agent_lane_weight > 0 else POOLS[:1],
        tokens=request.tokens,
        cap=cap,
        event_ids=filters.event_ids,
        keep=filters.any_check() if checks else None,
        with_cards=not is_plain(request),
    )


def ranked_order(found: SearchCandidates, request: EventSearch) -> list[Hit]:
    """Every fused (id, score), unpaged."""
    if is_plain(request):
        return rank_plain(plain_documents(found.candidates), request, paged=False)
    hits = rank_events(
        _cards(found), request, found.current_turn, _stored(found, request), paged=False
    )
    return [(hit.card.id, hit.rank_score) for hit in hits]


def page_hits(found: SearchCandidates, request: EventSearch, read: CardReader) -> list[EventHit]:
    """One page of hits without history folding (what derivation compares a block with);
    ``read`` gives the visible cards among some ids (a plain page's cards)."""
    if not is_plain(request):
        return rank_events(_cards(found), request, found.current_turn, _stored(found, request))
    page = rank_plain(plain_documents(found.candidates), request)
    by_id = {card.id: card for card in read([key for key, _ in page])}
    return [EventHit(card=by_id[key], rank_score=score) for key, score in page]


def plain_documents(found: Sequence[Candidate]) -> dict[str, dict[str, Document]]:
    """Each pool's BM25 documents: stored ones, else tokenised from the event's fields."""
    pools: dict[str, dict[str, Document]] = {}
    for candidate in found:
        document = candidate.document or field_document(candidate)
        pools.setdefault(candidate.pool, {})[candidate.id] = document
    return pools


def field_document(candidate: Candidate) -> Document:
    """The weighted BM25 document (token counts, length) of a candidate's fields."""
    return counted_document(weighted_tokens(event_fields(*candidate.fields)))


def _cards(found: SearchCandidates) -> list[EventCard]:
    return [candidate.card for candidate in found.candidates if candidate.card is not None]


def _stored(found: SearchCandidates, request: EventSearch) -> dict[str, Document]:
    if not request.tokens:
        return {}
    return {c.id: c.document for c in found.candidates if c.document is not None}
