"""A person's memory actions and what they read of one item: the rules (pure).

Every forget, restore, pin, unpin, purge, correction and resolved conflict leaves a receipt
(``MemoryAction``, ``records.py``), so what was done to memory, when and by whom can be read
back (``stratagate show``). Forget only hides an event and restore undoes it; purge also
replaces the words of the event's L5 source messages with a tombstone, which nothing can
undo: the rows stay, so block structure, positions and ids are kept, but the text is gone
from every view built on it. What is built on those words is derived again inside the
purge's transaction by the rules of the capabilities owning each view, gathered here
(``PurgeRederivation``) and handed to the storage.
"""

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from ..blocks.transcript import TranscriptMessage, layer_texts
from ..clock import iso
from ..events.cards import RELATION_LISTS, EventCard
from ..gate.evidence import receipt_payload
from ..text.token_budget import estimate_tokens
from .records import ActionKind, EventDetails, LinkedEvent, PurgePlan
from .storage import EventRows

LINK_NAMES = {
    "supersedes_event_ids": "supersedes",
    "conflicts_with_event_ids": "conflicts with",
    "before_event_ids": "before",
    "after_event_ids": "after",
    "related_event_ids": "related to",
}
_KEPT_TEMPORAL = {*RELATION_LISTS, "same_event_id", "thread_id"}


def tombstone(moment: datetime) -> str:
    """The text a purged message keeps: when it was purged and by whom, nothing of it."""
    return f"[purged by the user at {iso(moment)}]"


def purged_temporal(temporal: Mapping[str, Any]) -> dict[str, Any]:
    """A purged card's temporal fields: its links and thread stay (other cards point to it),
    its quoted text, participants and times go."""
    return {key: value for key, value in temporal.items() if key in _KEPT_TEMPORAL}


def link_ids(card: EventCard) -> list[tuple[str, str]]:
    """(relation, event id) of every link the card records, ``superseded by`` first."""
    links = [("superseded by", card.superseded_by)] if card.superseded_by else []
    for key, name in LINK_NAMES.items():
        links += [(name, str(event_id)) for event_id in card.temporal.get(key, [])]
    return links


def event_details(rows: EventRows) -> EventDetails:
    """An event's details as ``show`` gives them: its links named, a dangling one marked."""
    links = [
        LinkedEvent(relation=relation, event_id=event_id, title=brief.title, status=brief.status)
        if (brief := rows.linked.get(event_id))
        else LinkedEvent(relation=relation, event_id=event_id, found=False)
        for relation, event_id in link_ids(rows.card)
    ]
    return EventDetails(
        card=rows.card,
        sources=rows.sources,
        links=links,
        adoptions=rows.adoptions,
        actions=rows.actions,
    )


def nothing_to_do(kind: ActionKind, card: EventCard) -> str | None:
    """Why ``kind`` would leave ``card`` as it is (restoring what is not forgotten, unpinning
    what is not pinned …), else None; such an action writes nothing, not even a receipt."""
    if kind == "restore" and card.status != "forgotten":
        return f"{card.id} is not forgotten (it is {card.status})"
    if kind == "forget" and card.status == "forgotten":
        return f"{card.id} is already forgotten"
    if kind == "pin" and card.pinned:
        return f"{card.id} is already pinned"
    if kind == "unpin" and not card.pinned:
        return f"{card.id} is not pinned"
    return None


def action_detail(before: EventCard, after: EventCard) -> dict[str, Any]:
    """What a forget, restore, pin or unpin changed (it may have changed nothing)."""
    return {
        "status": [before.status, after.status],
        "pinned": [before.pinned, after.pinned],
        "changed": (before.status, before.pinned) != (after.status, after.pinned),
    }


def purge_detail(plan: PurgePlan, before: EventCard) -> dict[str, Any]:
    return {
        "status": [before.status, "forgotten"],
        "messages": plan.message_ids,
        "blocks": plan.block_ids,
        "also_forgotten": [event.id for event in plan.also_forgotten],
    }


class PurgeRederivation:
    """What a purge's transaction derives again from what is left (``PurgeRules``): a
    block's L4/L3 by the transcript's rule, a forgotten card's temporal fields, a usage
    receipt's payload by the gate's canonical form (so an identical replay is still
    recognised)."""

    def block_layers(self, messages: Sequence[TranscriptMessage]) -> tuple[str, str, int]:
        raw, readable, condensed = layer_texts(messages)
        return readable, condensed, estimate_tokens(raw)

    def purged_temporal(self, temporal: Mapping[str, Any]) -> dict[str, Any]:
        return purged_temporal(temporal)

    def receipt_payload(self, event_ids: list[str], audit: dict[str, Any]) -> str:
        return receipt_payload(event_ids, audit)


PURGE_RULES = PurgeRederivation()
