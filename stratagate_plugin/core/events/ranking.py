"""Event search rules (spec §6.4): field-weighted BM25, structured rankings, two fused pools.

Pure functions over ``EventCard`` candidates. The BM25 corpus of a pool is its candidates
that share a token with the query, so an FTS pre-filter and a full scan rank alike.
Structured filters (participants, event type, happened window) add their own rankings;
the conversation and agent-recorded pools are ranked apart and fused by weighted RRF.
"""

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import lru_cache
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from ..clock import iso, parse_iso
from ..retrieval.bm25 import bm25_rank_counted, fuzzy_match, rrf_rank, weighted_tokens
from .cards import EventCard, chronology_key, normalize_event_type
from .history import history_line
from .storage import Document, FieldCheck
from .weights import card_weight

TemporalIntent = Literal["first", "latest"]
Hit = tuple[str, float]
WeightKey = tuple[float, datetime]
NO_DOCUMENTS: Mapping[str, Document] = {}
POOL_ORDER = ("conversation", "agent")
DEFAULT_LIMIT, MAX_LIMIT = 6, 20
MAX_AGENT_WEIGHT = 5.0
DOCUMENT_CACHE = 4096
SCORE_MEANING = "Ranking-only BM25/RRF score; not confidence, probability, or factual accuracy."
FIELD_WEIGHTS = {
    "title": 4,
    "summary": 3,
    "tags": 2,
    "quotes": 2,
    "participants": 5,
    "event_type": 5,
    "original_text": 4,
    "happened": 4,
}


@dataclass(frozen=True)
class EventFilters:
    """Structured filters; ``event_ids`` is a hard scope (topic browsing), not a ranking."""

    participants: tuple[str, ...] = ()
    event_type: str | None = None
    happened_from: datetime | None = None
    happened_to: datetime | None = None
    temporal_intent: TemporalIntent | None = None
    event_ids: frozenset[str] | None = None

    @property
    def has_window(self) -> bool:
        return self.happened_from is not None or self.happened_to is not None

    def checks(self) -> list[FieldCheck]:
        """One predicate per structured filter actually given, over an event's fields."""
        checks: list[FieldCheck] = []
        if self.participants:
            wanted = self.participants
            checks.append(lambda _t, _s, _g, temporal: participants_match(temporal, wanted))
        if self.event_type and self.event_type.strip():
            kind = self.event_type
            checks.append(lambda t, s, g, temporal: event_type_match(t, s, g, temporal, kind))
        if self.has_window:
            low, high = self.happened_from, self.happened_to
            checks.append(lambda _t, _s, _g, temporal: window_match(temporal, low, high))
        return checks

    def any_check(self) -> FieldCheck:
        """True when at least one given filter matches (the structured candidate set)."""
        checks = self.checks()
        return lambda *fields: any(check(*fields) for check in checks)


@dataclass(frozen=True)
class EventSearch:
    """One search request; ``limit`` is clamped to 1–20 and ``agent_weight`` to 0–5."""

    tokens: tuple[str, ...]
    limit: int = DEFAULT_LIMIT
    offset: int = 0
    filters: EventFilters = field(default_factory=EventFilters)
    agent_weight: float = 1.0

    @property
    def page(self) -> int:
        return max(1, min(MAX_LIMIT, self.limit))

    @property
    def lane(self) -> int:
        """Each pool is ranked over ``offset + limit`` items before fusion."""
        return max(0, self.offset) + self.page

    @property
    def agent_lane_weight(self) -> float:
        return max(0.0, min(MAX_AGENT_WEIGHT, self.agent_weight))


class EventHit(BaseModel):
    """A ranked event: the full card, its fused rank score and the compact tool card.

    ``history``: the older versions this card superseded, newest first (``history.py``).
    """

    model_config = ConfigDict(frozen=True)

    card: EventCard
    rank_score: float
    score_meaning: str = SCORE_MEANING
    history: list[EventCard] = []

    def compact(self) -> dict[str, Any]:
        """The §12.3 compact card the search tool returns, with the versions it replaced."""
        card = compact_card(self.card, self.rank_score)
        if self.history:
            card["history"] = [history_line(older) for older in self.history]
        return card

    @property
    def source_message_ids(self) -> list[str]:
        """The card's sources, then its history's: the evidence of the change and of what
        it changed."""
        ids = [*self.card.source_message_ids]
        ids += [i for older in self.history for i in older.source_message_ids]
        return list(dict.fromkeys(ids))


def participants_match(temporal: Mapping[str, Any], wanted: Sequence[str]) -> bool:
    """Every requested participant fuzzy-matches some participant of the event."""
    have = [p for p in temporal.get("participants", []) if isinstance(p, str)]
    return all(any(fuzzy_match(w, h) for h in have) for w in wanted)


def event_type_match(
    title: str, summary: str, tags: list[str], temporal: Mapping[str, Any], wanted: str
) -> bool:
    """Fuzzy on the event type, else on title + summary + tags (raw or normalised name)."""
    names = {wanted, normalize_event_type(wanted)} - {"other"} or {wanted}
    text = " ".join([title, summary, *tags])
    kind = str(temporal.get("event_type", ""))
    return any(fuzzy_match(name, kind) or fuzzy_match(name, text) for name in names)


def window_match(temporal: Mapping[str, Any], start: datetime | None, end: datetime | None) -> bool:
    """Overlap of ``[from, to]`` with ``[happenedStart ?? happenedEnd, happenedEnd ?? …Start]``."""
    first = _time(temporal.get("happened_start") or temporal.get("happened_end"))
    last = _time(temporal.get("happened_end") or temporal.get("happened_start"))
    if first is None or last is None:
        return False
    return (end is None or first <= end) and (start is None or last >= start)


def card_matches(card: EventCard, check: FieldCheck) -> bool:
    return check(card.title, card.summary, card.tags, card.temporal)


def _time(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        return parse_iso(value)
    except ValueError:
        return None


def event_tokens(card: EventCard) -> tuple[str, ...]:
    """The BM25 document of an event, each field repeated by its weight."""
    fields = (card.title, card.summary, card.tags, card.quotes, card.temporal)
    return _document(event_fields(*fields))


def event_fields(
    title: str,
    summary: str,
    tags: Sequence[str],
    quotes: Sequence[str],
    temporal: Mapping[str, Any],
) -> tuple[tuple[str, int], ...]:
    """(text, weight) of every searchable field, in ``FIELD_WEIGHTS`` order."""
    happened = " ".join(str(temporal.get(k, "")) for k in ("happened_start", "happened_end"))
    texts = {
        "title": title,
        "summary": summary,
        "tags": "\n".join(tags),
        "quotes": "\n".join(quotes),
        "participants": "\n".join(temporal.get("participants", [])),
        "event_type": str(temporal.get("event_type", "")),
        "original_text": str(temporal.get("original_text", "")),
        "happened": happened,
    }
    return tuple((texts[name], weight) for name, weight in FIELD_WEIGHTS.items())


def counted_document(tokens: Sequence[str]) -> Document:
    return dict(Counter(tokens)), len(tokens)


@lru_cache(maxsize=DOCUMENT_CACHE)
def _document(fields: tuple[tuple[str, int], ...]) -> tuple[str, ...]:
    """Tokenising dominates search time; recently ranked events are remembered by content."""
    return tuple(weighted_tokens(fields))


def weight_order(cards: Sequence[EventCard], current_turn: int) -> list[EventCard]:
    """Memory weight desc, then updatedAt desc, then id."""
    by_id = sorted(cards, key=lambda card: card.id)
    by_time = sorted(by_id, key=lambda card: card.updated_at, reverse=True)
    return sorted(by_time, key=lambda card: card_weight(card, current_turn), reverse=True)


def weight_key(card: EventCard, current_turn: int) -> WeightKey:
    return card_weight(card, current_turn), card.updated_at


def weight_order_ids(keys: Mapping[str, WeightKey]) -> list[str]:
    """``weight_order`` over (weight, updatedAt) keys by id, without the cards."""
    by_time = sorted(sorted(keys), key=lambda key: keys[key][1], reverse=True)
    return sorted(by_time, key=lambda key: keys[key][0], reverse=True)


def chronology_order(cards: Sequence[EventCard], intent: TemporalIntent) -> list[EventCard]:
    """Chronology asc ('first') or desc ('latest'); unparseable times last, ties by id."""

    def key(card: EventCard) -> float:
        moment = _time(chronology_key(card.temporal, iso(card.created_at)))
        stamp = moment.timestamp() if moment else math.inf
        return stamp if intent == "first" or moment is None else -stamp

    return sorted(sorted(cards, key=lambda card: card.id), key=key)


def structured_order(
    cards: Sequence[EventCard], intent: TemporalIntent | None, current_turn: int
) -> list[str]:
    ordered = chronology_order(cards, intent) if intent else weight_order(cards, current_turn)
    return [card.id for card in ordered]


def pool_rankings(
    cards: Sequence[EventCard],
    request: EventSearch,
    current_turn: int,
    documents: Mapping[str, Document] = NO_DOCUMENTS,
) -> list[list[str]]:
    """The rankings one pool fuses (spec §6.4); ``[]`` means the pool returns nothing."""
    intent = request.filters.temporal_intent
    checks = request.filters.checks()
    lexical = _lexical(card_documents(cards, documents), request.tokens)
    if not checks:
        if request.tokens:
            return [lexical] if lexical else []
        return [structured_order(cards, intent, current_turn)]
    joint = [card for card in cards if all(card_matches(card, check) for check in checks)]
    if joint:
        ids = {card.id for card in joint}
        return [[i for i in lexical if i in ids], structured_order(joint, intent, current_turn)]
    lists = [[card for card in cards if card_matches(card, check)] for check in checks]
    return [lexical, *(structured_order(c, intent, current_turn) for c in lists if c)]


def card_documents(
    cards: Sequence[EventCard], stored: Mapping[str, Document]
) -> dict[str, Document]:
    """Each card's BM25 document: the stored one, else tokenised here."""
    return {c.id: stored.get(c.id) or counted_document(event_tokens(c)) for c in cards}


def _lexical(docs: Mapping[str, Document], tokens: Sequence[str]) -> list[str]:
    """BM25 over the documents sharing a token with the query."""
    if not tokens:
        return []
    wanted = set(tokens)
    corpus = {key: doc for key, doc in docs.items() if not wanted.isdisjoint(doc[0])}
    return [key for key, _ in bm25_rank_counted(tokens, corpus)]


def rank_pool(
    cards: Sequence[EventCard],
    request: EventSearch,
    current_turn: int,
    documents: Mapping[str, Document] = NO_DOCUMENTS,
) -> list[str]:
    """One pool's lane: its rankings fused by RRF, cut to ``offset + limit``."""
    rankings = pool_rankings(cards, request, current_turn, documents)
    fused = rrf_rank([(ranking, 1.0) for ranking in rankings])
    return [key for key, _ in fused[: request.lane]]


def rank_events(
    cards: Sequence[EventCard],
    request: EventSearch,
    current_turn: int,
    documents: Mapping[str, Document] = NO_DOCUMENTS,
    paged: bool = True,
) -> list[EventHit]:
    """Both pools ranked apart, lanes fused by weighted RRF, then the requested page.

    ``documents``: stored BM25 documents by event id (others are tokenised here).
    ``paged=False``: every fused hit, for a caller that pages after folding (``history``).
    """
    scope = request.filters.event_ids
    visible = [
        card
        for card in cards
        if card.status in ("active", "superseded") and (scope is None or card.id in scope)
    ]
    by_id = {card.id: card for card in visible}
    lanes = [
        rank_pool([c for c in visible if c.pool == pool], request, current_turn, documents)
        for pool in POOL_ORDER
    ]
    fused = fuse(lanes, request, paged)
    return [EventHit(card=by_id[key], rank_score=score) for key, score in fused]


def is_plain(request: EventSearch) -> bool:
    """A query without structured filters or scope: ranked by BM25 alone."""
    filters = request.filters
    return bool(request.tokens) and not filters.checks() and filters.event_ids is None


def rank_plain(
    pools: Mapping[str, Mapping[str, Document]], request: EventSearch, paged: bool = True
) -> list[Hit]:
    """``rank_events`` of a plain query from documents alone, before any card is built."""
    lanes = [_lexical(pools.get(pool, {}), request.tokens)[: request.lane] for pool in POOL_ORDER]
    return fuse(lanes, request, paged)


def fuse(lanes: Sequence[list[str]], request: EventSearch, paged: bool = True) -> list[Hit]:
    """Conversation and agent lanes by weighted RRF, then the page (offset, limit)."""
    weights = (1.0, request.agent_lane_weight)
    fused = rrf_rank(list(zip(lanes, weights, strict=True)))
    return page_of(fused, request) if paged else fused


def page_of(hits: Sequence[Hit], request: EventSearch) -> list[Hit]:
    start = max(0, request.offset)
    return list(hits[start : start + request.page])


def compact_card(card: EventCard, rank_score: float) -> dict[str, Any]:
    """``{id, title ≤240, summary ≤800, sourceTime, temporal{…}, sourceBlockId, …}``."""
    temporal = card.temporal
    source_time = temporal.get("happened_start") or temporal.get("mentioned_at")
    out: dict[str, Any] = {
        "id": card.id,
        "title": compact_text(card.title, 240),
        "summary": compact_text(card.summary, 800),
        "sourceTime": source_time or iso(card.created_at),
        "temporal": compact_temporal(temporal),
        "sourceBlockId": card.source_block_id,
        "status": card.status,
        "scope": card.scope,
        "criticality": card.criticality,
    }
    if card.pool == "agent":
        out["source"] = "agent-recorded"
    return out | {"rankScore": rank_score, "scoreMeaning": SCORE_MEANING}


_COMPACT_TEMPORAL = {
    "mentioned_at": "mentionedAt",
    "happened_start": "happenedStart",
    "happened_end": "happenedEnd",
    "precision": "precision",
    "status": "status",
    "event_type": "eventType",
}
_COMPACT_LINKS = {
    "supersedes_event_ids": "supersedesEventIds",
    "conflicts_with_event_ids": "conflictsWithEventIds",
}


def compact_temporal(temporal: Mapping[str, Any]) -> dict[str, Any]:
    out = {name: temporal[key] for key, name in _COMPACT_TEMPORAL.items() if key in temporal}
    return out | {name: temporal[key] for key, name in _COMPACT_LINKS.items() if temporal.get(key)}


def compact_text(value: str, limit: int) -> str:
    return " ".join(value.split())[:limit]
