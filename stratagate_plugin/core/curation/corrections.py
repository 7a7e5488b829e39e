"""A person's corrections and conflict resolutions (pure): the new card, the edited links.

A correction never edits the old card: it writes a new one that supersedes it (spec §3.4),
so the old wording stays as history under the new one. The new card cites the old card's
source messages (what was said is unchanged; what it means was corrected), is formed at the
space's current turn and is marked ``corrected_by: user`` in its temporal fields.

A conflict (``conflicts_with_event_ids``, linked both ways) is resolved by keeping both,
which drops the link on both sides, or by one superseding the other.
"""

from datetime import datetime
from typing import Any, Literal, get_args

from ..clock import iso
from ..errors import InvalidInput
from ..events.cards import EventCard
from ..events.weights import new_card

Resolution = Literal["keep_both", "supersedes"]
RESOLUTIONS: tuple[Resolution, ...] = get_args(Resolution)
CONFLICTS = "conflicts_with_event_ids"
SUPERSEDES = "supersedes_event_ids"
TITLE_LIMIT, SUMMARY_LIMIT = 200, 1000
_DROPPED = (CONFLICTS, SUPERSEDES, "same_event_id", "happened_end", "original_text")


def corrected_card(
    old: EventCard,
    *,
    title: str,
    summary: str,
    happened: datetime | None,
    turn: int,
    now: datetime,
) -> EventCard:
    """The card that replaces ``old`` with a person's wording (and happened time, if given)."""
    title, summary = title.strip()[:TITLE_LIMIT], summary.strip()[:SUMMARY_LIMIT]
    if not title or not summary:
        raise InvalidInput("a correction needs a title and a summary")
    if old.status != "active":
        raise InvalidInput(f"event {old.id} is {old.status}; only an active event is corrected")
    temporal = {k: v for k, v in old.temporal.items() if k not in _DROPPED}
    if happened is not None:
        temporal |= {"happened_start": iso(happened), "precision": "instant", "basis": "explicit"}
    temporal |= {SUPERSEDES: [old.id], "mentioned_at": iso(now), "corrected_by": "user"}
    return new_card(
        namespace=old.namespace,
        pool=old.pool,
        title=title,
        summary=summary,
        tags=list(old.tags),
        source_block_id=old.source_block_id,
        source_message_ids=list(old.source_message_ids),
        formed_turn=turn,
        temporal=temporal,
        scope=old.scope,
        criticality=old.criticality,
        created_at=now,
    )


def correction_detail(old: EventCard, new: EventCard) -> dict[str, Any]:
    """What the correction changed, for its receipt (on the old event)."""
    return {
        "new_event_id": new.id,
        "title": [old.title, new.title],
        "summary": [old.summary, new.summary],
        "happened_start": [old.temporal.get("happened_start"), new.temporal.get("happened_start")],
    }


def check_resolution(event: EventCard, other: EventCard, resolution: str) -> Resolution:
    """Both active, in one space, linked as conflicting; the resolution one of ``RESOLUTIONS``."""
    if resolution not in RESOLUTIONS:
        raise InvalidInput(f"action must be one of {', '.join(RESOLUTIONS)}, not {resolution!r}")
    if event.id == other.id or event.namespace != other.namespace:
        raise InvalidInput("a conflict is between two events of one memory space")
    if other.id not in conflict_ids(event) and event.id not in conflict_ids(other):
        raise InvalidInput(f"events {event.id} and {other.id} are not marked in conflict")
    for card in (event, other):
        if card.status != "active":
            raise InvalidInput(f"event {card.id} is {card.status}; its conflict is already moot")
    return "supersedes" if resolution == "supersedes" else "keep_both"


def conflict_ids(card: EventCard) -> list[str]:
    value = card.temporal.get(CONFLICTS, [])
    return [i for i in value if isinstance(i, str)] if isinstance(value, list) else []


def without_conflict(temporal: dict[str, Any], other_id: str) -> dict[str, Any]:
    """The temporal fields with ``other_id`` out of the conflict links (the key gone if empty)."""
    out = dict(temporal)
    kept = [i for i in out.get(CONFLICTS, []) if i != other_id]
    if kept:
        out[CONFLICTS] = kept
    else:
        out.pop(CONFLICTS, None)
    return out


def superseding(temporal: dict[str, Any], other_id: str) -> dict[str, Any]:
    """The winner's temporal fields: the conflict gone, ``other_id`` among those it replaced."""
    out = without_conflict(temporal, other_id)
    out[SUPERSEDES] = list(dict.fromkeys([*out.get(SUPERSEDES, []), other_id]))
    return out
