"""The overview's storage contract (``core/overview/storage.py``) on SQLite."""

from datetime import datetime
from typing import Any

from ...overview.storage import ReceiptRow, SpaceTallies
from ...records import Job
from .. import overview_rows as rows
from ..units import UnitDatabase


class SqliteOverviewStorage:
    def __init__(self, db: UnitDatabase) -> None:
        self.db = db

    async def tallies(self, space: str) -> SpaceTallies:
        return await self.db.read(lambda raw: rows.space_counts(raw, space))

    async def jobs(self, space: str, status: str | None, offset: int, limit: int) -> list[Job]:
        return await self.db.read(lambda raw: rows.job_page(raw, space, status, offset, limit))

    async def retry_failed(self, space: str, now: datetime) -> int:
        return await self.db.write(lambda raw: rows.retry_failed_in(raw, space, now))

    async def receipts(self, space: str, offset: int, limit: int) -> list[ReceiptRow]:
        return await self.db.read(lambda raw: rows.audit_page(raw, space, offset, limit))

    async def receipt(self, space: str, receipt_id: str) -> dict[str, Any] | None:
        return await self.db.read(lambda raw: rows.receipt_record(raw, space, receipt_id))

    async def set_every_space(self, block_turn_size: int, block_decay_lambda: float) -> int:
        return await self.db.write(
            lambda raw: rows.set_every_space(raw, block_turn_size, block_decay_lambda)
        )
