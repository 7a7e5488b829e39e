"""Curation's storage contract (``core/curation/storage.py``) on SQLite: each action one
``Database.write`` with its receipt, each item read one ``Database.read``.

A read returns records: a block's parts (its view is rendered by the service), an event's
card with the briefs of the events it links to (the service names the links).
"""

import sqlite3
from collections.abc import Sequence

from ...curation.records import (
    ActionKind,
    ActionResult,
    Actor,
    EventBrief,
    MemoryAction,
    MessageCard,
    NothingDone,
    PurgePlan,
)
from ...curation.storage import ActionRules, BlockRows, Decide, EventRows, Make
from ...errors import NotFound
from ...events.cards import RELATION_LISTS, EventCard
from ...events.storage import EventRules
from .. import block_rows, event_rows
from .. import curation_rows as rows
from .. import gate_rows as flags
from ..units import UnitDatabase


class SqliteCurationStorage:
    def __init__(self, db: UnitDatabase, events: EventRules) -> None:
        self.db = db
        self.events = events

    async def act(
        self, kind: ActionKind, event_id: str, actor: Actor, now: str, rules: ActionRules
    ) -> ActionResult | NothingDone:
        events = self.events
        return await self.db.write(lambda raw: _act(raw, kind, event_id, actor, now, rules, events))

    async def correct(self, event_id: str, actor: Actor, now: str, make: Make) -> ActionResult:
        events = self.events
        return await self.db.write(lambda raw: _correct(raw, event_id, actor, now, make, events))

    async def resolve(
        self, event_id: str, other_id: str, actor: Actor, now: str, decide: Decide
    ) -> ActionResult:
        def unit(raw: sqlite3.Connection) -> ActionResult:
            event_rows.lock_events(raw, [event_id, other_id])  # their temporal fields rewritten
            event, other = event_rows.get_event(raw, event_id), event_rows.get_event(raw, other_id)
            resolved = decide(event, other)
            if resolved.superseded_cap is not None:
                rows.supersede(raw, other.id, event.id, resolved.superseded_cap, now)
            rows.set_temporal(raw, event.id, resolved.mine, now, self.events)
            rows.set_temporal(raw, other.id, resolved.theirs, now, self.events)
            action = rows.insert_action(
                raw, event.namespace, "resolve", event.id, actor, resolved.detail, now
            )
            return ActionResult(action=action, card=event_rows.get_event(raw, event.id))

        return await self.db.write(unit)

    async def actions(
        self, target_id: str | None = None, action_id: str | None = None, limit: int = 100
    ) -> list[MemoryAction]:
        return await self.db.read(lambda raw: rows.list_actions(raw, target_id, action_id, limit))

    async def purge_plan(self, event_id: str) -> PurgePlan:
        return await self.db.read(lambda raw: rows.purge_plan(raw, event_id))

    async def message_cards(self, message_ids: Sequence[str]) -> list[MessageCard]:
        ids = list(message_ids)
        return await self.db.read(lambda raw: rows.message_cards(raw, ids))

    async def event_details(self, event_id: str) -> EventRows:
        return await self.db.read(lambda raw: event_details_in(raw, event_id))

    async def block_details(self, block_id: str) -> BlockRows:
        return await self.db.read(lambda raw: _block_rows(raw, block_id))

    async def describe(self, item_id: str) -> EventRows | BlockRows | MessageCard:
        return await self.db.read(lambda raw: _describe(raw, item_id))


def _act(
    raw: sqlite3.Connection,
    kind: ActionKind,
    event_id: str,
    actor: Actor,
    now: str,
    rules: ActionRules,
    events: EventRules,
) -> ActionResult | NothingDone:
    before = event_rows.get_event(raw, event_id)
    if kind != "purge" and (reason := rules.nothing_to_do(kind, before)):
        return NothingDone(kind=kind, card=before, reason=reason)
    if kind == "purge":
        plan = rows.purge_plan(raw, event_id)
        flags.forget(raw, event_id, now)
        rows.purge(raw, plan, rules.tombstone(now), now, rules, events)
        detail = rules.purge_detail(plan, before)
    else:
        detail = rules.detail(before, _flag(raw, kind, before, now, rules))
    action = rows.insert_action(raw, before.namespace, kind, event_id, actor, detail, now)
    return ActionResult(action=action, card=event_rows.get_event(raw, event_id))


def _flag(
    raw: sqlite3.Connection, kind: ActionKind, before: EventCard, now: str, rules: ActionRules
) -> EventCard:
    if kind == "forget":
        return flags.forget(raw, before.id, now)
    if kind == "restore":
        rules.check_restore(before, rows.purged_sources(raw, before.id))
        return flags.restore(raw, before.id, now)
    return flags.set_pinned(raw, before.id, kind == "pin", now)


def _correct(
    raw: sqlite3.Connection, event_id: str, actor: Actor, now: str, make: Make, events: EventRules
) -> ActionResult:
    old = event_rows.get_event(raw, event_id)
    new, detail = make(old, flags.current_turn(raw, old.namespace))
    event_rows.insert_event(raw, new, events)
    action = rows.insert_action(raw, old.namespace, "correct", old.id, actor, detail, now)
    return ActionResult(action=action, card=event_rows.get_event(raw, new.id))


def event_details_in(raw: sqlite3.Connection, event_id: str) -> EventRows:
    """``event_details`` inside a caller's read (the timeline's story reads more with it)."""
    card = event_rows.get_event(raw, event_id)
    return EventRows(
        card=card,
        sources=rows.message_cards(raw, card.source_message_ids),
        linked=_linked(raw, card),
        adoptions=flags.adoptions_of(raw, event_id),
        actions=rows.list_actions(raw, event_id),
    )


def _linked(raw: sqlite3.Connection, card: EventCard) -> dict[str, EventBrief]:
    """Briefs of the events the card names: its successor and its relation lists."""
    named = [card.superseded_by] if card.superseded_by else []
    named += [str(i) for key in RELATION_LISTS for i in card.temporal.get(key, [])]
    return rows.briefs(raw, named)


def _block_rows(raw: sqlite3.Connection, block_id: str) -> BlockRows:
    parts = block_rows.block_parts(raw, block_rows.get_block(raw, block_id))
    return BlockRows(
        parts=parts,
        cards=rows.message_cards(raw, [m.id for m in parts.messages]),
        events=rows.block_event_briefs(raw, block_id),
    )


def _describe(raw: sqlite3.Connection, item_id: str) -> EventRows | BlockRows | MessageCard:
    if rows.briefs(raw, [item_id]):
        return event_details_in(raw, item_id)
    if rows.block_exists(raw, item_id):
        return _block_rows(raw, item_id)
    found = rows.message_cards(raw, [item_id])
    if not found:
        raise NotFound(f"no event, block or message with id {item_id!r}")
    return found[0]
