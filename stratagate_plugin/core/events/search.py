"""Event search over what storage reads: which candidates to ask for, how they are ranked,
folded (``history``) and paged. These run inside one consistent read (``EventsReader``),
whose operations only read.

A plain query (terms, no filter, no scope) is ranked from BM25 documents alone and cards
are built for the page only; any other query ranks the candidates' cards.
"""

from collections.abc import Callable, Sequence
from functools import partial

from . import history
from .cards import EventCard
from .documents import field_document
from .ranking import EventHit, EventSearch, Hit, is_plain, page_of, rank_events, rank_plain
from .storage import Candidate, CandidateQuery, Document, EventsReader, SearchCandidates

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


def search_with_history(reader: EventsReader, space: str, request: EventSearch) -> list[EventHit]:
    """Every superseded card folded under its newer card (``history``): the whole fused
    order is folded first, then paged, so pages agree."""
    found = reader.candidates(space, candidate_query(request))
    order = ranked_order(found, request)
    known = {c.id: c.superseded_by for c in found.candidates}
    links = supersession_links(reader, space, [key for key, _ in order], known)
    page = page_of(history.fold(order, links), request)
    by_id = {card.id: card for card in _cards_of(reader, space, [k for k, _ in page], found)}
    read = partial(reader.visible_cards, space)
    return [
        EventHit(card=by_id[key], rank_score=score, history=history.history_of(by_id[key], read))
        for key, score in page
        if key in by_id
    ]


def supersession_links(
    reader: EventsReader, space: str, ids: Sequence[str], known: dict[str, str | None]
) -> dict[str, str | None]:
    """``superseded_by`` of the ranked cards (``known``) and of every visible card up their
    chains (a superseder that is no longer visible stays out, so the chain ends before it)."""
    links = dict(known)
    asked: set[str] = set()
    missing = history.unknown_links(ids, links)
    for _ in range(history.MAX_CHAIN):
        missing -= asked
        if not missing:
            break
        asked |= missing
        read = reader.links(space, sorted(missing))
        links.update(read)
        missing = history.unknown_links(list(read), links)
    return links


def chain_links(reader: EventsReader, space: str, ids: Sequence[str]) -> dict[str, str | None]:
    """``supersession_links`` of the visible cards among ``ids``."""
    return supersession_links(reader, space, ids, reader.links(space, ids))


def _cards_of(
    reader: EventsReader, space: str, ids: Sequence[str], found: SearchCandidates
) -> list[EventCard]:
    """The cards of ``ids`` in that order, from the candidates or read (a plain query's
    page, a head outside the candidates)."""
    known = {c.id: c.card for c in found.candidates if c.card is not None}
    missing = [key for key in ids if key not in known]
    read = reader.visible_cards(space, missing) if missing else []
    by_id = known | {card.id: card for card in read}
    return [by_id[key] for key in ids if key in by_id]


def relevant_cards(
    reader: EventsReader, space: str, tokens: tuple[str, ...], limit: int
) -> list[EventCard]:
    """The ``limit`` best visible cards for ``tokens`` over both pools, unfolded: what an
    extraction's timeline holds before the most recent cards (derivation hands this to
    its storage, which runs it inside the extraction's read)."""
    request = EventSearch(tokens, limit=limit)
    found = reader.candidates(space, candidate_query(request))
    read = partial(reader.visible_cards, space)
    return [hit.card for hit in page_hits(found, request, read)]


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
        document = candidate.document
        if document is None:
            assert candidate.fields is not None, "a plain query's candidate carries its fields"
            document = field_document(candidate.fields)
        pools.setdefault(candidate.pool, {})[candidate.id] = document
    return pools


def _cards(found: SearchCandidates) -> list[EventCard]:
    return [candidate.card for candidate in found.candidates if candidate.card is not None]


def _stored(found: SearchCandidates, request: EventSearch) -> dict[str, Document]:
    if not request.tokens:
        return {}
    return {c.id: c.document for c in found.candidates if c.document is not None}
