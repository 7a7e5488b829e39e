"""A person's memory actions on the façade, each one transaction with its receipt, and the
reads behind ``stratagate show`` and ``stratagate search``.

The flags themselves are the gate's (``gate_rows.forget``, ``set_pinned`` …): an action
here applies one and records the receipt in the same transaction, so a receipt never
names an action that did not happen, nor the reverse. Purge is forget plus the tombstoning
of the event's sources (``curation_rows.purge``), also in that one transaction.
"""

import sqlite3
from collections.abc import Sequence
from datetime import datetime

from ..blocks.rules import render_level
from ..blocks.views import block_view
from ..clock import iso, utc_now
from ..errors import InvalidInput, NotFound
from ..events.cards import EventCard
from ..service_base import ServiceBase
from ..store import block_rows, event_rows
from ..store import curation_rows as rows
from ..store import gate_rows as flags
from . import corrections
from .actions import (
    ACTION_KINDS,
    ActionKind,
    ActionResult,
    Actor,
    BlockDetails,
    EventDetails,
    LinkedEvent,
    MemoryAction,
    MessageCard,
    NothingDone,
    PurgePlan,
    action_detail,
    link_ids,
    nothing_to_do,
    purge_detail,
)


class CurationService(ServiceBase):
    """Forget, restore, pin, unpin, purge, correct and resolve, with receipts; one item's
    details."""

    async def act(
        self, kind: ActionKind, event_id: str, *, actor: Actor = "user"
    ) -> ActionResult | NothingDone:
        """Apply ``kind`` to the event and record its receipt. ``restore`` refuses an event
        whose sources were purged: its card would stand on words that are gone. An action
        with nothing to do (``nothing_to_do``) writes nothing and returns no receipt."""
        if kind not in ACTION_KINDS:
            raise InvalidInput(f"unknown memory action {kind!r}: use {', '.join(ACTION_KINDS)}")
        now = iso(utc_now())

        def unit(raw: sqlite3.Connection) -> ActionResult | NothingDone:
            before = event_rows.get_event(raw, event_id)
            if kind != "purge" and (reason := nothing_to_do(kind, before)):
                return NothingDone(kind=kind, card=before, reason=reason)
            if kind == "purge":
                plan = rows.purge_plan(raw, event_id)
                flags.forget(raw, event_id, now)
                rows.purge(raw, plan, now)
                detail = purge_detail(plan, before)
            else:
                after = _apply_flag(raw, kind, before, now)
                detail = action_detail(before, after)
            action = rows.insert_action(raw, before.namespace, kind, event_id, actor, detail, now)
            return ActionResult(action=action, card=event_rows.get_event(raw, event_id))

        return await self.db.write(unit)

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

        def unit(raw: sqlite3.Connection) -> ActionResult:
            old = event_rows.get_event(raw, event_id)
            turn = flags.current_turn(raw, old.namespace)
            new = corrections.corrected_card(
                old, title=title, summary=summary, happened=happened, turn=turn, now=now
            )
            event_rows.insert_event(raw, new)
            detail = corrections.correction_detail(old, new)
            stamp = iso(now)
            action = rows.insert_action(raw, old.namespace, "correct", old.id, actor, detail, stamp)
            return ActionResult(action=action, card=event_rows.get_event(raw, new.id))

        return await self.db.write(unit)

    async def resolve_conflict(
        self, event_id: str, other_id: str, resolution: str, *, actor: Actor = "user"
    ) -> ActionResult:
        """End the conflict between two active events: ``keep_both`` drops the link on both
        sides; ``supersedes`` makes ``event_id`` supersede ``other_id``. One receipt
        (kind ``resolve``) on ``event_id``."""
        now = iso(utc_now())

        def unit(raw: sqlite3.Connection) -> ActionResult:
            event, other = event_rows.get_event(raw, event_id), event_rows.get_event(raw, other_id)
            how = corrections.check_resolution(event, other, resolution)
            mine = corrections.without_conflict(event.temporal, other.id)
            if how == "supersedes":
                mine = corrections.superseding(event.temporal, other.id)
                rows.supersede(raw, other.id, event.id, now)
            rows.set_temporal(raw, event.id, mine, now)
            rows.set_temporal(
                raw, other.id, corrections.without_conflict(other.temporal, event.id), now
            )
            detail = {"other_id": other.id, "resolution": how}
            action = rows.insert_action(
                raw, event.namespace, "resolve", event.id, actor, detail, now
            )
            return ActionResult(action=action, card=event_rows.get_event(raw, event.id))

        return await self.db.write(unit)

    async def receipt(self, action_id: str) -> MemoryAction:
        """One receipt by its id."""

        def read(raw: sqlite3.Connection) -> MemoryAction:
            found = rows.list_actions(raw, action_id=action_id, limit=1)
            if not found:
                raise NotFound(f"no memory action receipt with id {action_id!r}")
            return found[0]

        return await self.db.read(read)

    async def purge_plan(self, event_id: str) -> PurgePlan:
        """What ``memory_action("purge", event_id)`` would touch (to ask before doing it)."""
        return await self.db.read(lambda raw: rows.purge_plan(raw, event_id))

    async def actions(self, target_id: str | None = None, limit: int = 100) -> list[MemoryAction]:
        """Receipts oldest first: of one event, or the newest ``limit`` of all."""
        return await self.db.read(lambda raw: rows.list_actions(raw, target_id, limit=limit))

    async def message_cards(self, message_ids: Sequence[str]) -> list[MessageCard]:
        """Messages by id, in the order given, each with the live events citing it."""
        ids = list(message_ids)
        return await self.db.read(lambda raw: rows.message_cards(raw, ids))

    async def event_details(self, event_id: str) -> EventDetails:
        """The card whatever its status, its sources, links, adoptions and receipts."""
        return await self.db.read(lambda raw: event_details_in(raw, event_id))

    async def block_details(self, block_id: str) -> BlockDetails:
        """The block at its current level, every view's size, its L0–L2, messages, events."""
        return await self.db.read(lambda raw: _block_details(raw, block_id))

    async def describe(self, item_id: str) -> EventDetails | BlockDetails | MessageCard:
        """Whatever ``item_id`` names, an event, a block or a message, in one read."""

        def read(raw: sqlite3.Connection) -> EventDetails | BlockDetails | MessageCard:
            if rows.briefs(raw, [item_id]):
                return event_details_in(raw, item_id)
            if rows.block_exists(raw, item_id):
                return _block_details(raw, item_id)
            found = rows.message_cards(raw, [item_id])
            if not found:
                raise NotFound(f"no event, block or message with id {item_id!r}")
            return found[0]

        return await self.db.read(read)


def event_details_in(raw: sqlite3.Connection, event_id: str) -> EventDetails:
    """``event_details`` inside a caller's read (the timeline's detail reads more with it)."""
    card = event_rows.get_event(raw, event_id)
    return EventDetails(
        card=card,
        sources=rows.message_cards(raw, card.source_message_ids),
        links=_links(raw, card),
        adoptions=flags.adoptions_of(raw, event_id),
        actions=rows.list_actions(raw, event_id),
    )


def _block_details(raw: sqlite3.Connection, block_id: str) -> BlockDetails:
    block = block_rows.get_block(raw, block_id)
    messages = block_rows.block_messages(raw, block_id)
    return BlockDetails(
        view=block_view(block_rows.block_parts(raw, block)),
        summaries={f"L{n}": render_level(block, n, messages) for n in (0, 1, 2)},
        messages=rows.message_cards(raw, [m.id for m in messages]),
        events=rows.block_event_briefs(raw, block_id),
    )


def _apply_flag(
    raw: sqlite3.Connection, kind: ActionKind, before: EventCard, now: str
) -> EventCard:
    if kind == "forget":
        return flags.forget(raw, before.id, now)
    if kind == "restore":
        purged = rows.purged_sources(raw, before.id)
        if purged and before.status == "forgotten":
            raise InvalidInput(
                f"event {before.id} cannot be restored: its source messages were purged "
                f"({', '.join(purged)})"
            )
        return flags.restore(raw, before.id, now)
    return flags.set_pinned(raw, before.id, kind == "pin", now)


def _links(raw: sqlite3.Connection, card: EventCard) -> list[LinkedEvent]:
    pairs = link_ids(card)
    known = rows.briefs(raw, [event_id for _, event_id in pairs])
    return [
        LinkedEvent(relation=relation, event_id=event_id, title=brief.title, status=brief.status)
        if (brief := known.get(event_id))
        else LinkedEvent(relation=relation, event_id=event_id, found=False)
        for relation, event_id in pairs
    ]
