"""The profile's storage contract (``core/profile/storage.py``) on SQLite."""

import sqlite3
from collections.abc import Callable

from ...profile.storage import FieldChange, ProfileChange, Proposal, StoredField
from .. import profile_rows as rows
from ..rows import record_from_row
from ..units import UnitDatabase


class SqliteProfileStorage:
    def __init__(self, db: UnitDatabase) -> None:
        self.db = db

    async def fields(self) -> dict[str, StoredField]:
        return await self.db.read(_fields)

    async def changes(self, limit: int, offset: int) -> list[ProfileChange]:
        found = await self.db.read(lambda raw: rows.changes(raw, limit, offset))
        return [record_from_row(ProfileChange, row) for row in found]

    async def write_field(
        self, change: FieldChange, allowed: Callable[[dict[str, str]], None]
    ) -> tuple[bool, int]:
        return await self.db.write(lambda raw: _write_field(raw, change, allowed))

    async def add_proposal(self, thread_key: str, field: str, value: str, now: str) -> str:
        return await self.db.write(
            lambda raw: rows.add_proposal(raw, thread_key, field, value, now)
        )

    async def pending_proposals(self, thread_key: str) -> list[Proposal]:
        found = await self.db.read(lambda raw: rows.pending_proposals(raw, thread_key))
        return [Proposal(row["id"], row["field"], row["value"]) for row in found]

    async def resolve_proposal(self, proposal_id: str, status: str, now: str) -> None:
        await self.db.write(lambda raw: rows.resolve_proposal(raw, proposal_id, status, now))


def _fields(raw: sqlite3.Connection) -> dict[str, StoredField]:
    times = rows.updated_times(raw)
    return {
        field: StoredField(value, revision, times[field])
        for field, (value, revision) in rows.read_profile(raw).items()
    }


def _write_field(
    raw: sqlite3.Connection, change: FieldChange, allowed: Callable[[dict[str, str]], None]
) -> tuple[bool, int]:
    current = {f: v for f, (v, _) in rows.read_profile(raw).items()}
    allowed({**current, change.field: change.value})
    return rows.write_field(
        raw,
        change.field,
        change.value,
        change.source,
        change.now,
        change.expected_revision,
        change.message_id,
    )
