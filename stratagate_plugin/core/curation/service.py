"""A person's memory actions on the façade, each one transaction with its receipt, and the
reads behind ``stratagate show`` and ``stratagate search``.

The flags themselves are the gate's (forget, restore, pin …): an action here applies one
and records the receipt in the same ``CurationStorage`` transaction, so a receipt never
names an action that did not happen, nor the reverse. Purge is forget plus the
tombstoning of the event's sources, also in that one transaction. What an action may do
and what its receipt says are decided here (``actions``, ``corrections``).
"""

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from ..blocks.rules import render_level
from ..blocks.views import block_view
from ..clock import iso, parse_iso, utc_now
from ..errors import InvalidInput, NotFound
from ..events.cards import EventCard
from ..events.weights import SUPERSEDED_CAP
from ..service_base import ServiceBase
from . import corrections
from .actions import (
    PurgeRederivation,
    action_detail,
    event_details,
    nothing_to_do,
    purge_detail,
    tombstone,
)
from .records import (
    ACTION_KINDS,
    ActionKind,
    ActionResult,
    Actor,
    BlockDetails,
    EventDetails,
    MemoryAction,
    MessageCard,
    NothingDone,
    PurgePlan,
)
from .storage import BlockRows, CurationStorage, EventRows, Resolved


class CurationService(ServiceBase):
    """Forget, restore, pin, unpin, purge, correct and resolve, with receipts; one item's
    details."""

    @property
    def store(self) -> CurationStorage:
        return self.storage.curation

    async def act(
        self, kind: ActionKind, event_id: str, *, actor: Actor = "user"
    ) -> ActionResult | NothingDone:
        """Apply ``kind`` to the event and record its receipt. ``restore`` refuses an event
        whose sources were purged: its card would stand on words that are gone. An action
        with nothing to do (``nothing_to_do``) writes nothing and returns no receipt."""
        if kind not in ACTION_KINDS:
            raise InvalidInput(f"unknown memory action {kind!r}: use {', '.join(ACTION_KINDS)}")
        return await self.store.act(kind, event_id, actor, iso(utc_now()), ACTION_RULES)

    async def correct_event(
        self,
        event_id: str,
        *,
        title: str,
        summary: str,
        happened: datetime | None = None,
        actor: Actor = "user",
    ) -> ActionResult:
        """Write a new card with the person's wording that supersedes the event (kept as
        history); the receipt (kind ``correct``) is on the old event, ``card`` is the new one."""
        now = utc_now()

        def make(old: EventCard, turn: int) -> tuple[EventCard, dict[str, Any]]:
            new = corrections.corrected_card(
                old, title=title, summary=summary, happened=happened, turn=turn, now=now
            )
            return new, corrections.correction_detail(old, new)

        return await self.store.correct(event_id, actor, iso(now), make)

    async def resolve_conflict(
        self, event_id: str, other_id: str, resolution: str, *, actor: Actor = "user"
    ) -> ActionResult:
        """End the conflict between two active events: ``keep_both`` drops the link on both
        sides; ``supersedes`` makes ``event_id`` supersede ``other_id``. One receipt
        (kind ``resolve``) on ``event_id``."""

        def decide(event: EventCard, other: EventCard) -> Resolved:
            how = corrections.check_resolution(event, other, resolution)
            mine = corrections.without_conflict(event.temporal, other.id)
            if how == "supersedes":
                mine = corrections.superseding(event.temporal, other.id)
            theirs = corrections.without_conflict(other.temporal, event.id)
            detail = {"other_id": other.id, "resolution": how}
            cap = SUPERSEDED_CAP if how == "supersedes" else None
            return Resolved(cap, mine, theirs, detail)

        return await self.store.resolve(event_id, other_id, actor, iso(utc_now()), decide)

    async def receipt(self, action_id: str) -> MemoryAction:
        """One receipt by its id."""
        found = await self.store.actions(action_id=action_id, limit=1)
        if not found:
            raise NotFound(f"no memory action receipt with id {action_id!r}")
        return found[0]

    async def purge_plan(self, event_id: str) -> PurgePlan:
        """What ``memory_action("purge", event_id)`` would touch (to ask before doing it)."""
        return await self.store.purge_plan(event_id)

    async def actions(self, target_id: str | None = None, limit: int = 100) -> list[MemoryAction]:
        """Receipts oldest first: of one event, or the newest ``limit`` of all."""
        return await self.store.actions(target_id, limit=limit)

    async def message_cards(self, message_ids: Sequence[str]) -> list[MessageCard]:
        """Messages by id, in the order given, each with the live events citing it."""
        return await self.store.message_cards(message_ids)

    async def event_details(self, event_id: str) -> EventDetails:
        """The card whatever its status, its sources, links, adoptions and receipts."""
        return event_details(await self.store.event_details(event_id))

    async def block_details(self, block_id: str) -> BlockDetails:
        """The block at its current level, every view's size, its L0–L2, messages, events."""
        return _block_details(await self.store.block_details(block_id))

    async def describe(self, item_id: str) -> EventDetails | BlockDetails | MessageCard:
        """Whatever ``item_id`` names, an event, a block or a message, in one read."""
        found = await self.store.describe(item_id)
        if isinstance(found, BlockRows):
            return _block_details(found)
        return event_details(found) if isinstance(found, EventRows) else found


def _block_details(found: BlockRows) -> BlockDetails:
    block, messages = found.parts.block, found.messages
    return BlockDetails(
        view=block_view(found.parts),
        summaries={f"L{n}": render_level(block, n, messages) for n in (0, 1, 2)},
        messages=found.cards,
        events=found.events,
    )


class CurationRules(PurgeRederivation):
    """What a forget, restore, pin, unpin or purge may do, what its receipt says and what a
    purge derives again (``ActionRules``)."""

    def nothing_to_do(self, kind: ActionKind, card: EventCard) -> str | None:
        return nothing_to_do(kind, card)

    def check_restore(self, card: EventCard, purged: list[str]) -> None:
        if purged and card.status == "forgotten":
            raise InvalidInput(
                f"event {card.id} cannot be restored: its source messages were purged "
                f"({', '.join(purged)})"
            )

    def detail(self, before: EventCard, after: EventCard) -> dict[str, Any]:
        return action_detail(before, after)

    def purge_detail(self, plan: PurgePlan, before: EventCard) -> dict[str, Any]:
        return purge_detail(plan, before)

    def tombstone(self, now: str) -> str:
        return tombstone(parse_iso(now))


ACTION_RULES = CurationRules()
