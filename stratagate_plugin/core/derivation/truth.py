"""What a committed card does to what the space already holds (issue 23), whichever model
drafted it: the check runs in the commit, after the model answered.

- A card that restates a live event (``events.restatement``) is not inserted: the event
  gains the card's sources and a mention instead.
- A change card (a cancellation, stop, move or switch) that the model left without a
  supersede link is linked to the live event it replaces by the offline model's own rules
  (``llm.offline.relations``: who + what, not word overlap alone), over the events the
  commit found by searching the card's words — the space's whole history, not only the
  extraction timeline the model saw.

Pure: the service supplies the live events near each card.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..events.cards import EventCard
from ..events.restatement import restatement_of, without_attribution
from ..llm.offline.relations import relation_fields
from ..text.search_terms import query_tokens


@dataclass(frozen=True)
class Settled:
    """``repeat_of``: the live event the card restates (nothing to insert); else ``card``,
    with any supersede link the check added."""

    card: EventCard
    repeat_of: EventCard | None = None


def search_tokens(card: EventCard) -> tuple[str, ...]:
    """What the commit searches the space with to find the card's neighbours: the words
    that state it (its quotes, else its title), fewer terms than the whole card to count."""
    return tuple(query_tokens(" ".join(card.quotes) or card.title))


def settle(card: EventCard, near: Sequence[EventCard]) -> Settled:
    live = [other for other in near if other.id != card.id]
    repeated = restatement_of(card, live)
    if repeated is not None:
        return Settled(card, repeated)
    return Settled(_with_change_links(card, live))


def _with_change_links(card: EventCard, near: Sequence[EventCard]) -> EventCard:
    temporal = card.temporal
    if temporal.get("supersedes_event_ids") or not near:
        return card
    text = " ".join(dict.fromkeys([*card.quotes, card.title, without_attribution(card.summary)]))
    names = [p for p in temporal.get("participants", []) if isinstance(p, str)]
    event_type = str(temporal.get("event_type") or "other")
    links = relation_fields(entry(card), text, event_type, [entry(c) for c in near], names)
    if not links.get("supersedes_event_ids"):
        return card
    merged: dict[str, Any] = dict(temporal)
    for key, ids in links.items():
        merged[key] = list(dict.fromkeys([*temporal.get(key, []), *ids]))
    return card.model_copy(update={"temporal": merged})


def entry(card: EventCard) -> dict[str, Any]:
    """A stored card in the extraction timeline's shape, as the relation rules read it."""
    keys = (
        "mentioned_at",
        "happened_start",
        "happened_end",
        "basis",
        "participants",
        "event_type",
    )
    return {
        "id": card.id,
        "title": card.title,
        "summary": card.summary,
        "status": card.status,
        **{key: card.temporal[key] for key in keys if key in card.temporal},
    }
