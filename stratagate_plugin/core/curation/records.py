"""A person's memory actions and what they read of one item: the records (no rule).

Every forget, restore, pin, unpin, purge, correction and resolved conflict leaves a receipt
(``MemoryAction``); ``show`` reads an event's or a block's details. The storage returns
these (``storage.py``); what an action may do and what its receipt says are the rules of
``actions.py`` and ``corrections.py``.
"""

from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field

from ..clock import UtcDatetime
from ..events.cards import EventCard
from ..records import BlockView, Message

ActionKind = Literal["forget", "restore", "pin", "unpin", "purge"]
ReceiptKind = Literal[ActionKind, "correct", "resolve"]  # correct/resolve: corrections.py
Actor = Literal["user", "agent"]
ACTION_KINDS: tuple[ActionKind, ...] = get_args(ActionKind)
PURGED_TITLE = "[purged]"
"""What a purged event's title becomes, wherever it is kept (batches, receipts)."""


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
