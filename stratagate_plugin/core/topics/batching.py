"""What one projection sees (spec §5.3): batches of events and the candidate chapters.

A batch holds at most 12 events whose compact JSON fits 16,000 characters; historical and
new events are never mixed (the caller batches each set apart). A compact event has no
quotes nor source message ids; one still over 10,000 characters is shortened field by
field and listed as truncated. Candidates are the chapters a batch may extend: those it
continues first, then by BM25 over title ×8, sections ×6, keywords ×4, description ×2;
they are exposed in that order while their JSON fits 30,000 characters less the batch's,
and the lowest-ranked are dropped until the whole input fits 20,000 estimated tokens —
the events themselves are never cut for it.
"""

import json
from collections.abc import Sequence
from typing import Any

from ..events.cards import EventCard, chronology_key
from ..retrieval.bm25 import bm25_rank, weighted_tokens
from ..text.search_terms import tokenize
from ..text.token_budget import estimate_tokens
from .model import Topic

BATCH_LIMIT = 12
BATCH_CHARS = 16_000
LONG_EVENT_CHARS = 10_000
CANDIDATE_LIMIT = 12
CANDIDATE_PARAGRAPHS = 4
CANDIDATE_CHARS = 30_000  # the candidates' compact JSON, less the batch's own
INPUT_TOKENS = 20_000  # instructions, events and candidates, estimated
OUTPUT_TOKENS = 32_768  # TOPIC_OUTPUT_TOKEN_BUDGET: cut to the model's window by the client


def compact_event(card: EventCard) -> dict[str, Any]:
    temporal = card.temporal
    return {
        "id": card.id,
        "title": card.title,
        "summary": card.summary,
        "tags": card.tags,
        "participants": temporal.get("participants", []),
        "event_type": temporal.get("event_type", "other"),
        "criticality": card.criticality,
        "catalog_hints": card.catalog_hints,
        "status": card.status,
        "time": chronology_key(temporal, card.created_at.isoformat()),
    }


def size(entry: dict[str, Any]) -> int:
    return len(json.dumps(entry, ensure_ascii=False))


def bounded_event(card: EventCard) -> tuple[dict[str, Any], bool]:
    """The compact event, shortened when over 10,000 characters (and then flagged)."""
    entry = compact_event(card)
    if size(entry) <= LONG_EVENT_CHARS:
        return entry, False
    short = {
        **entry,
        "title": entry["title"][:120],
        "summary": entry["summary"][:800],
        "tags": [tag[:40] for tag in entry["tags"][:4]],
        "participants": [name[:120] for name in entry["participants"][:12]],
        "catalog_hints": [hint[:120] for hint in entry["catalog_hints"][:12]],
        "time": str(entry["time"])[:120],
    }
    return short, True


def make_batches(cards: Sequence[EventCard]) -> list[list[str]]:
    """Event ids in order, cut into batches of ≤ 12 whose compact JSON fits 16,000 chars."""
    batches: list[list[str]] = []
    current: list[str] = []
    used = 0
    for card in cards:
        entry, _ = bounded_event(card)
        cost = size(entry)
        if current and (len(current) >= BATCH_LIMIT or used + cost > BATCH_CHARS):
            batches.append(current)
            current, used = [], 0
        current.append(card.id)
        used += cost
    if current:
        batches.append(current)
    return batches


def candidate_view(topic: Topic, batch_ids: Sequence[str]) -> dict[str, Any]:
    """A chapter as the projector sees it: ≤ 4 overview paragraphs, all section titles."""
    members = set(topic.member_ids)
    return {
        "topic_id": topic.id,
        "title": topic.title,
        "description": topic.description,
        "sections": [section.title for section in topic.sections],
        "overview": [
            p.model_dump(exclude_none=True) for p in topic.overview[:CANDIDATE_PARAGRAPHS]
        ],
        "keywords": topic.keywords,
        "event_count": len(topic.member_ids),
        "continued_event_ids": [i for i in batch_ids if i in members],
    }


def rank_candidates(
    topics: Sequence[Topic], events: Sequence[dict[str, Any]], limit: int = CANDIDATE_LIMIT
) -> list[Topic]:
    """Chapters continuing a batch event first, then the BM25 order of the batch's words."""
    batch_ids = {entry["id"] for entry in events}
    continued = [t for t in topics if batch_ids & set(t.member_ids)]
    words = " ".join(
        " ".join([e["title"], *e["tags"], *e["participants"], *e["catalog_hints"]]) for e in events
    )
    docs = {
        topic.id: weighted_tokens(
            [
                (topic.title, 8),
                (" ".join(s.title for s in topic.sections), 6),
                (" ".join(topic.keywords), 4),
                (topic.description, 2),
            ]
        )
        for topic in topics
        if topic not in continued
    }
    by_id = {topic.id: topic for topic in topics}
    ranked = [by_id[topic_id] for topic_id, _ in bm25_rank(tokenize(words), docs)]
    return [*continued, *ranked][:limit]


def exposed_payload(
    events: Sequence[dict[str, Any]],
    truncated: Sequence[str],
    views: Sequence[dict[str, Any]],
    instructions: str,
) -> dict[str, Any]:
    """The projection's payload: the batch's events, and of the candidate ``views`` (best
    first) those that fit the character budget, then fewer until the input fits its
    estimated-token budget (with none left, the events alone are sent)."""
    room = CANDIDATE_CHARS - sum(size(event) for event in events)
    shown = []
    for view in views:
        cost = size(view)
        if cost <= room:
            shown.append(view)
            room -= cost
    payload = {"events": list(events), "truncated_event_ids": list(truncated), "candidates": shown}
    while shown and estimate_tokens(instructions) + estimate_tokens(_text(payload)) > INPUT_TOKENS:
        shown.pop()
    return payload


def _text(payload: dict[str, Any]) -> str:
    return json.dumps(payload, ensure_ascii=False)
