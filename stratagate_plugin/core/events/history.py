"""Changes of mind in what is read back: a superseded card is shown under its newer card.

A card superseded by a visible card never ranks on its own. Its place in a ranking goes to
the newest visible card of its chain (the head), at the better of the two places, and the
head carries the versions it replaced, newest first, as history. So "the launch moved to
May" is read first, with "planned for April 20th" as what it replaced, in event search,
recall and the search tool alike, however much better the old wording matches the query.
A chain whose newer card was forgotten ends at its last visible card. Pure functions: the
service reads the links (``superseded_by`` of visible cards) and the cards.
"""

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from .cards import EventCard

MAX_CHAIN = 8
MAX_HISTORY = 3
HISTORY_SUMMARY = 400
Links = Mapping[str, str | None]  # visible card id → the card that superseded it, if any
Hit = tuple[str, float]


def head_of(event_id: str, links: Links) -> str:
    """The newest visible card of ``event_id``'s chain (itself when nothing visible replaced
    it); cycles and overlong chains stop where they are."""
    current, seen = event_id, {event_id}
    for _ in range(MAX_CHAIN):
        newer = links.get(current)
        if newer is None or newer not in links or newer in seen:
            break
        current = newer
        seen.add(current)
    return current


def unknown_links(ids: Iterable[str], links: Links) -> set[str]:
    """Cards named as superseders that ``links`` does not know yet (to be read next)."""
    return {newer for i in ids if (newer := links.get(i)) is not None and newer not in links}


def fold(order: Sequence[Hit], links: Links) -> list[Hit]:
    """Every id replaced by its head; a head keeps its first (best) place and score."""
    placed: dict[str, float] = {}
    for event_id, score in order:
        placed.setdefault(head_of(event_id, links), score)
    return list(placed.items())


def history_of(
    head: EventCard, read: Callable[[Sequence[str]], Sequence[EventCard]]
) -> list[EventCard]:
    """The cards ``head`` replaced, newest first (breadth first down the chain, at most
    ``MAX_HISTORY``); ``read`` gives the visible cards among some ids."""
    history: list[EventCard] = []
    newer = [head]
    seen = {head.id}
    while newer and len(history) < MAX_HISTORY:
        named = [i for card in newer for i in replaced_ids(card) if i not in seen]
        if not named:
            break
        older = [c for c in read(named) if c.superseded_by in {n.id for n in newer}]
        older = sorted(older, key=lambda card: card.created_at, reverse=True)
        history += older[: MAX_HISTORY - len(history)]
        seen.update(card.id for card in older)
        newer = older
    return history


def replaced_ids(card: EventCard) -> list[str]:
    value = card.temporal.get("supersedes_event_ids", [])
    return [i for i in value if isinstance(i, str)] if isinstance(value, list) else []


def history_line(card: EventCard) -> dict[str, Any]:
    """How an older version is shown beside its newer card: what it said, and when."""
    line: dict[str, Any] = {"id": card.id, "title": card.title}
    line["summary"] = " ".join(card.summary.split())[:HISTORY_SUMMARY]
    for key, name in (("happened_start", "happenedStart"), ("happened_end", "happenedEnd")):
        if key in card.temporal:
            line[name] = card.temporal[key]
    return line | {"status": card.status, "supersededBy": card.superseded_by}
