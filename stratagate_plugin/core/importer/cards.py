"""Import candidates ↔ event cards: what a commit writes, and what an export reads back.

The two directions are written side by side so an export round-trips: a card's title,
summary, tags, quotes, scope, criticality and temporal fields come back unchanged when
the exported candidate is imported. A candidate's narrative is not a card field; the full
text stays in the batch's source block, which every imported card cites.
"""

from collections.abc import Sequence
from datetime import datetime
from typing import Any, cast, get_args

from ..clock import iso
from ..events.cards import EventCard, normalize_temporal
from ..events.weights import new_card
from ..llm.tasks import Criticality
from .decider import Final
from .external_format import (
    CATEGORIES,
    EXPORT_SOURCE,
    SOURCE_TYPE,
    V2,
    ExternalCandidate,
    ExternalTemporal,
)
from .merge import merged_text

MAX_QUOTES = 12  # §11.1's limit on a candidate's quotes
_BY_CATEGORY: dict[str, Criticality] = {
    "identity": "identity",
    "preference": "preference",
    "instruction": "preference",
}


def criticality_of(candidate: ExternalCandidate) -> Criticality:
    """The card's criticality: the candidate's own when it is one of ours, else by category."""
    for known in get_args(Criticality):
        if candidate.criticality == known:
            return cast(Criticality, known)
    return _BY_CATEGORY.get(candidate.category or "", "routine")


def temporal_of(candidate: ExternalCandidate, final: Final) -> dict[str, Any]:
    """The card's temporal fields (normalised as extraction's are) and the action's links."""
    temporal = normalize_temporal(candidate.temporal.model_dump(exclude_none=True))
    if final.action in ("MERGE", "SUPERSEDE"):
        temporal["supersedes_event_ids"] = list(final.target_ids)
    elif final.action == "CONFLICT":
        temporal["conflicts_with_event_ids"] = list(final.target_ids)
    return temporal


def import_card(
    candidate: ExternalCandidate,
    final: Final,
    *,
    space: str,
    block_id: str,
    message_id: str,
    turn: int,
    now: datetime,
    merged_from: Sequence[EventCard] = (),
    proposed: str | None = None,
) -> EventCard:
    """The new card an ADD, MERGE, SUPERSEDE or CONFLICT writes (never an overwrite).

    A MERGE's card (``merged_from``: its live targets) keeps what they said: its text
    contains theirs (``proposed``, the decider's merged text, when it does), its quotes
    are theirs too, and it cites their sources beside the import's."""
    summary = candidate.summary
    quotes, sources = list(candidate.quotes), [message_id]
    if merged_from:
        summary = merged_text(candidate.summary, [c.summary for c in merged_from], proposed)
        quotes = list(dict.fromkeys([*quotes, *(q for c in merged_from for q in c.quotes)]))
        sources += [m for c in merged_from for m in c.source_message_ids if m not in sources]
    return new_card(
        namespace=space,
        title=candidate.title,
        summary=summary,
        tags=list(candidate.tags),
        quotes=quotes[:MAX_QUOTES],
        source_block_id=block_id,
        source_message_ids=list(dict.fromkeys(sources)),
        formed_turn=turn,
        temporal=temporal_of(candidate, final),
        scope=candidate.scope,
        criticality=criticality_of(candidate),
        created_at=now,
    )


def exported_candidate(card: EventCard) -> dict[str, Any]:
    """The card as a v2 candidate; its category is the first tag that names one."""
    temporal = {
        field.alias or name: card.temporal[name]
        for name, field in ExternalTemporal.model_fields.items()
        if card.temporal.get(name) not in (None, "", [])
    }
    candidate: dict[str, Any] = {
        "title": card.title,
        "summary": card.summary,
        "tags": list(card.tags),
        "quotes": list(card.quotes),
        "temporal": temporal,
        "scope": card.scope,
        "criticality": card.criticality,
        "confidence": 1.0,
    }
    category = next((tag for tag in card.tags if tag in CATEGORIES), None)
    if category:
        candidate["category"] = category
    return {key: value for key, value in candidate.items() if value not in ([], {})}


def export_document(
    cards: Sequence[EventCard], now: datetime, profile: dict[str, str] | None = None
) -> dict[str, Any]:
    """The space's events as a v2 document (plus the profile's set fields if asked)."""
    document: dict[str, Any] = {
        "schemaVersion": V2,
        "sourceType": SOURCE_TYPE,
        "sourceSystem": EXPORT_SOURCE,
        "exportedAt": iso(now),
        "coverage": "full",
        "candidates": [exported_candidate(card) for card in cards],
    }
    if profile is not None:
        document["profile"] = {k: v for k, v in profile.items() if v}
    return document
