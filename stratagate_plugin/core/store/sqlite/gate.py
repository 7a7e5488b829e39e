"""The evidence gate's storage contract (``core/gate/storage.py``) on SQLite."""

import sqlite3
from collections.abc import Callable, Iterable, Sequence
from typing import TypeVar

from ...events.cards import EventCard
from ...gate.records import Assessment, Batch
from ...gate.storage import BatchOpening, GateUnit, NewReceipt, StoredReceipt
from ...gate.trail import BatchUse, EventMark, MessageMark
from .. import event_rows
from .. import gate_rows as rows
from ..units import UnitDatabase

T = TypeVar("T")


class SqliteGateStorage:
    def __init__(self, db: UnitDatabase) -> None:
        self.db = db

    async def transaction(self, work: Callable[[GateUnit], T]) -> T:
        return await self.db.write(lambda raw: work(SqliteGateUnit(raw)))

    async def open_batch(self, opening: BatchOpening, now: str) -> Batch:
        return await self.db.write(lambda raw: rows.insert_batch(raw, *opening, now))

    async def batches(self, space: str, thread_id: str, status: str | None) -> list[Batch]:
        return await self.db.read(lambda raw: rows.list_batches(raw, space, thread_id, status))

    async def thread_uses(self, space: str, thread_id: str) -> list[BatchUse]:
        return await self.db.read(lambda raw: rows.thread_uses(raw, space, thread_id))

    async def marks(
        self, event_ids: Sequence[str], message_ids: Sequence[str], snippet_chars: int
    ) -> tuple[dict[str, EventMark], dict[str, MessageMark]]:
        return await self.db.read(
            lambda raw: (
                rows.event_marks(raw, event_ids) if event_ids else {},
                rows.message_marks(raw, message_ids, snippet_chars) if message_ids else {},
            )
        )

    async def set_pinned(self, event_id: str, pinned: bool, now: str) -> EventCard:
        return await self.db.write(lambda raw: rows.set_pinned(raw, event_id, pinned, now))

    async def forget(self, event_id: str, now: str) -> EventCard:
        return await self.db.write(lambda raw: rows.forget(raw, event_id, now))

    async def restore(self, event_id: str, now: str) -> EventCard:
        return await self.db.write(lambda raw: rows.restore(raw, event_id, now))

    async def card_at_turn(self, event_id: str) -> tuple[EventCard, int]:
        return await self.db.read(lambda raw: _card_at_turn(raw, event_id))


class SqliteGateUnit:
    """``GateUnit`` over the connection of one ``Database.write`` unit."""

    def __init__(self, raw: sqlite3.Connection) -> None:
        self.raw = raw

    def batch_choices(self, space: str, thread_id: str, batch_id: str | None) -> list[Batch]:
        return rows.batch_choices(self.raw, space, thread_id, batch_id)

    def batches(self, space: str, thread_id: str, status: str | None = None) -> list[Batch]:
        return rows.list_batches(self.raw, space, thread_id, status)

    def latest_batch_id(self, space: str, thread_id: str) -> str | None:
        return rows.latest_batch_id(self.raw, space, thread_id)

    def batch_turn(self, batch_id: str) -> int:
        return rows.batch_turn(self.raw, batch_id)

    def save_assessment(self, assessment: Assessment, now: str) -> Batch:
        return rows.save_assessment(self.raw, assessment, now)

    def receipt(self, space: str, receipt_id: str) -> StoredReceipt | None:
        row = rows.receipt_row(self.raw, space, receipt_id)
        return None if row is None else StoredReceipt(row["batch_id"], row["payload"])

    def current_turn(self, space: str) -> int:
        return rows.current_turn(self.raw, space)

    def reinforce(self, space: str, event_ids: Iterable[str], turn: int, now: str) -> list[str]:
        return rows.reinforce_events(self.raw, space, event_ids, turn, now)

    def insert_receipt(self, receipt: NewReceipt, now: str) -> None:
        rows.insert_receipt(self.raw, *receipt, now)

    def mark_recorded(self, batch_id: str, now: str) -> Batch:
        return rows.mark_batch_recorded(self.raw, batch_id, now)


def _card_at_turn(raw: sqlite3.Connection, event_id: str) -> tuple[EventCard, int]:
    card = event_rows.get_event(raw, event_id)
    return card, rows.current_turn(raw, card.namespace)
