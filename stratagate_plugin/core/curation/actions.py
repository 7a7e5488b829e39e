"""A person's memory actions and what they read of one item: shapes and rules (pure).

Every forget, restore, pin, unpin, purge, correction and resolved conflict leaves a receipt
(``MemoryAction``), so what was done to memory, when and by whom can be read back
(``stratagate show``). Forget only hides an event and restore undoes it; purge also replaces
the words of the event's L5 source messages with a tombstone, which nothing can undo: the
rows stay, so block structure, positions and ids are kept, but the text is gone from every
view built on it.
"""

from collections.abc import Mapping
from datetime import datetime
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field

from ..clock import UtcDatetime, iso
from ..events.cards import RELATION_LISTS, EventCard
from ..records import BlockView, Message

ActionKind = Literal["forget", "restore", "pin", "unpin", "purge"]
ReceiptKind = Literal[ActionKind, "correct", "resolve"]  # correct/resolve: corrections.py
Actor = Literal["user", "agent"]
ACTION_KINDS: tuple[ActionKind, ...] = get_args(ActionKind)
PURGED_TITLE = "[purged]"
LINK_NAMES = {
    "supersedes_event_ids": "supersedes",
    "conflicts_with_event_ids": "conflicts with",
    "before_event_ids": "before",
    "after_event_ids": "after",
    "related_event_ids": "related to",
}
_KEPT_TEMPORAL = {*RELATION_LISTS, "same_event_id", "thread_id"}


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True)


class MemoryAction(_Frozen):
    """The receipt of one action: ``detail`` says what changed (statuses, purged messages)."""

    id: str
    namespace: str
    kind: ReceiptKind
    target_id: str
    actor: Actor
    detail: dict[str, Any] = Field(default_factory=dict)
    created_at: UtcDatetime


class ActionResult(_Frozen):
    """An action's receipt and the event as it now is."""

    action: MemoryAction
    card: EventCard


class NothingDone(_Frozen):
    """An action that had nothing to do (``reason``): it wrote nothing, no receipt either,
    since a receipt names only what happened."""

    kind: ActionKind
    card: EventCard
    reason: str

    def line(self) -> str:
        return f"nothing to do: {self.reason}; no receipt written"


class EventBrief(_Frozen):
    id: str
    title: str
    status: str
    pinned: bool = False


class MessageCard(_Frozen):
    """A stored message with when it was purged (if it was) and the live events citing it."""

    message: Message
    purged_at: UtcDatetime | None = None
    events: list[EventBrief] = Field(default_factory=list)


class LinkedEvent(_Frozen):
    """One supersede/conflict/order link of an event; ``found`` is False for a dangling id."""

    relation: str
    event_id: str
    title: str = ""
    status: str = ""
    found: bool = True


class Adoption(_Frozen):
    """One ``memory_record_use`` receipt that adopted the event: which turn, batch, thread."""

    receipt_id: str
    batch_id: str
    thread_id: str | None
    turn: int | None
    tool: str | None
    verdict: str | None
    created_at: UtcDatetime


class EventDetails(_Frozen):
    card: EventCard
    sources: list[MessageCard]
    links: list[LinkedEvent]
    adoptions: list[Adoption]
    actions: list[MemoryAction]


class BlockDetails(_Frozen):
    """A block at its current level with every view's size, its L0–L2 texts, its messages."""

    view: BlockView
    summaries: dict[str, str]
    messages: list[MessageCard]
    events: list[EventBrief]


class PurgePlan(_Frozen):
    """What purging an event's sources touches: the messages, their blocks, and every other
    event citing one of them, hidden ones included (its words came from the purged text, so
    it is forgotten and blanked too)."""

    event_id: str
    namespace: str
    message_ids: list[str]
    block_ids: list[str]
    also_forgotten: list[EventBrief]


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
