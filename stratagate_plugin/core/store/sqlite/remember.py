"""``memory_remember``'s storage contract (``core/remember/storage.py``) on SQLite: the
live events a memory is compared with, and phase 3 in one ``Database.write``."""

import sqlite3

from ...events.storage import EventRules
from ...remember.storage import (
    Applied,
    LiveEvent,
    Plan,
    RememberAsk,
    RememberRules,
    SpaceDefaults,
)
from .. import event_rows, gate_rows, graph_jobs
from ..provenance_rows import add_pending_citation
from ..turns import NewSpaceDefaults, ensure_space
from ..units import UnitDatabase, alone

REMEMBERING = "remember"  # a space's: phase 3 re-reads the events it may merge into


class SqliteRememberStorage:
    def __init__(self, db: UnitDatabase, events: EventRules) -> None:
        self.db = db
        self.events = events

    async def live_events(self, space: str, text: str, limit: int) -> list[LiveEvent]:
        return await self.db.read(lambda raw: _live(raw, space, text, limit))

    async def commit(
        self, ask: RememberAsk, rules: RememberRules, defaults: SpaceDefaults, now: str
    ) -> Applied:
        events = self.events
        return await self.db.write(lambda raw: _commit(raw, ask, rules, events, defaults, now))


def _live(raw: sqlite3.Connection, space: str, text: str, limit: int) -> list[LiveEvent]:
    found = event_rows.sharing_a_token(raw, space, text, limit)
    return [LiveEvent(r["id"], r["title"], r["summary"]) for r in found]


def _commit(
    raw: sqlite3.Connection,
    ask: RememberAsk,
    rules: RememberRules,
    events: EventRules,
    defaults: SpaceDefaults,
    now: str,
) -> Applied:
    alone(raw, REMEMBERING, ask.namespace)  # the same memory saved twice at once: one event
    live = _live(raw, ask.namespace, ask.text, ask.limit)
    still = event_rows.live_event_ids(raw, ask.ambiguous) if ask.ambiguous else set()
    settings = NewSpaceDefaults(defaults.block_turn_size, defaults.block_decay_lambda)
    ensure_space(raw, ask.namespace, settings, now)
    turn = gate_rows.current_turn(raw, ask.namespace)
    plan = rules.plan(live, still, turn)
    if plan.action == "IGNORED":
        return Applied(None, None, turn)
    written = _write(raw, ask, plan, rules, events, turn, now)
    cited = written[:1] if plan.action == "REINFORCED" else written
    for event_id in cited:  # cites the turn's user message once that turn is recorded
        add_pending_citation(raw, ask.namespace, ask.thread_id, event_id, now)
    if plan.action != "REINFORCED":
        graph_jobs.queue_events(raw, ask.namespace, written, graph_jobs.AGENT_PRIORITY, now)
    if not written:
        return Applied(None, None, turn)
    return Applied(written[0], event_rows.get_event(raw, written[0]), turn)


def _write(
    raw: sqlite3.Connection,
    ask: RememberAsk,
    plan: Plan,
    rules: RememberRules,
    events: EventRules,
    turn: int,
    now: str,
) -> list[str]:
    """The ids reinforced, merged into or inserted."""
    if plan.action == "REINFORCED":
        return gate_rows.reinforce_events(raw, ask.namespace, plan.targets, turn, now)
    if plan.action == "MERGED":
        for target in plan.targets:
            summary, tags = rules.merged(event_rows.get_event(raw, target))
            gate_rows.merge_into(raw, target, summary, tags, turn, now, events)
        return list(plan.targets)
    assert plan.card is not None, f"{plan.action} writes a card"
    event_rows.insert_event(raw, plan.card, events)
    return [plan.card.id]
