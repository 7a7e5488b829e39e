"""What a person's memory actions and the item reads need from storage (the contract a
database implements).

Each action is one transaction holding the change and its receipt, so a receipt never
names an action that did not happen, nor the reverse. What an action may do and what its
receipt says are decided by the service's rules, handed in (``ActionRules``, a correction's
``make``, a resolution's ``decide``): the storage reads, asks them and writes.
"""

from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple, Protocol

from ..blocks.storage import BlockParts
from ..events.cards import EventCard
from ..records import Message
from .records import (
    ActionKind,
    ActionResult,
    Actor,
    Adoption,
    EventBrief,
    MemoryAction,
    MessageCard,
    NothingDone,
    PurgePlan,
)

__all__ = [
    "ActionRules",
    "BlockRows",
    "CurationStorage",
    "Decide",
    "EventRows",
    "Make",
    "PurgeRules",
    "Resolved",
]


class BlockRows(NamedTuple):
    parts: BlockParts
    """The block with what its view at its current level is computed from."""
    cards: list[MessageCard]
    """Its messages with the live events citing each."""
    events: list[EventBrief]
    """The events formed from it."""

    @property
    def messages(self) -> list[Message]:
        return self.parts.messages


class EventRows(NamedTuple):
    """An event as stored, whatever its status, with what its details are made of."""

    card: EventCard
    sources: list[MessageCard]
    linked: dict[str, EventBrief]
    """Those of the events the card links to (its successor, its relation lists) that
    exist, by id: the service names the links (``actions.event_details``)."""
    adoptions: list[Adoption]
    actions: list[MemoryAction]


class Resolved(NamedTuple):
    """A conflict's resolution as decided: whether the first supersedes the second (the
    second's weight then capped at ``superseded_cap``; None: neither supersedes), both
    cards' new relations, the receipt's detail."""

    superseded_cap: float | None
    mine: dict[str, Any]
    theirs: dict[str, Any]
    detail: dict[str, Any]


Make = Callable[[EventCard, int], tuple[EventCard, dict[str, Any]]]
"""A correction's new card and receipt detail from the old card and the current turn."""


Decide = Callable[[EventCard, EventCard], Resolved]
"""A conflict's resolution from its two cards (raises when it may not be resolved)."""


class PurgeRules(Protocol):
    """What a purge's transaction derives again from what is left of the words, by the
    rules of the capabilities owning each view (handed in; applied to rows read inside
    the transaction, so nothing between read and write can change them)."""

    def block_layers(self, messages: Sequence[Message]) -> tuple[str, str, int]:
        """A block's L4 (readable) and L3 (condensed) texts and its L5's estimated tokens
        from its messages as they are."""
        ...

    def purged_temporal(self, temporal: Mapping[str, Any]) -> dict[str, Any]:
        """A forgotten, blanked card's temporal fields: what stays of them."""
        ...

    def receipt_payload(self, event_ids: list[str], audit: dict[str, Any]) -> str:
        """A usage receipt's canonical payload, made again where its audit was blanked."""
        ...


class ActionRules(PurgeRules, Protocol):
    """The decisions of a forget, restore, pin, unpin or purge (the service's rules)."""

    def tombstone(self, now: str) -> str:
        """The text a message purged at ``now`` keeps instead of its words."""
        ...

    def nothing_to_do(self, kind: ActionKind, card: EventCard) -> str | None:
        """Why the action leaves the card as it is (then nothing is written), else None."""
        ...

    def check_restore(self, card: EventCard, purged: list[str]) -> None:
        """Raise if the card may not be restored, its sources ``purged`` being gone."""
        ...

    def detail(self, before: EventCard, after: EventCard) -> dict[str, Any]:
        """A flag action's receipt detail."""
        ...

    def purge_detail(self, plan: PurgePlan, before: EventCard) -> dict[str, Any]:
        """A purge's receipt detail."""
        ...


class CurationStorage(Protocol):
    async def act(
        self, kind: ActionKind, event_id: str, actor: Actor, now: str, rules: ActionRules
    ) -> ActionResult | NothingDone:
        """One transaction: the event read (``NotFound``); nothing written when the rules
        find nothing to do; else the flag set (a purge: forgotten, and its plan's source
        messages tombstoned) and the receipt recorded. The receipt and the card after."""
        ...

    async def correct(self, event_id: str, actor: Actor, now: str, make: Make) -> ActionResult:
        """One transaction: ``make(old, current turn)``'s new card inserted, its receipt
        (kind ``correct``, the detail ``make`` gave) recorded on the old event. The receipt
        and the new card."""
        ...

    async def resolve(
        self, event_id: str, other_id: str, actor: Actor, now: str, decide: Decide
    ) -> ActionResult:
        """One transaction: both events read (``NotFound``), ``decide``'s relations written
        (and the supersession, the second under the first), a ``resolve`` receipt on the
        first. Receipt and card."""
        ...

    async def actions(
        self, target_id: str | None = None, action_id: str | None = None, limit: int = 100
    ) -> list[MemoryAction]:
        """Receipts oldest first: of one target, one receipt, or the newest ``limit``."""
        ...

    async def purge_plan(self, event_id: str) -> PurgePlan:
        """What purging the event would touch (``NotFound`` if unknown)."""
        ...

    async def message_cards(self, message_ids: Sequence[str]) -> list[MessageCard]:
        """The messages in the order asked (unknown ids left out), with citing events."""
        ...

    async def event_details(self, event_id: str) -> EventRows:
        """The card whatever its status (``NotFound``), its sources, linked events,
        adoptions and receipts, in one read."""
        ...

    async def block_details(self, block_id: str) -> BlockRows:
        """The block's parts, messages and events in one read (``NotFound`` if unknown)."""
        ...

    async def describe(self, item_id: str) -> EventRows | BlockRows | MessageCard:
        """Whatever ``item_id`` names, an event, a block or a message, in one read
        (``NotFound`` if none)."""
        ...
