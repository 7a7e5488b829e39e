"""Façade facet: reading blocks at their decayed levels, readiness and expansion."""

import sqlite3
from typing import Any

from ..clock import iso, utc_now
from ..errors import InvalidInput
from ..records import Block, BlockView, LiftSource, Message
from ..service_base import ServiceBase
from ..store import block_rows
from . import rules as block_rules
from .views import block_view, current_level


class BlocksService(ServiceBase):
    async def get_blocks(
        self, namespace: str | None = None, thread_id: str | None = None
    ) -> list[BlockView]:
        """Every block with its current decayed level and the token size of each view."""

        def query(raw: sqlite3.Connection) -> list[BlockView]:
            found = block_rows.list_blocks(raw, namespace, thread_id)
            return [block_view(raw, block) for block in found]

        return await self.db.read(query)

    async def view_block(self, block_id: str, level: int | None = None) -> BlockView:
        """One block rendered at ``level`` (default: its current decayed level)."""
        return await self.db.read(
            lambda raw: block_view(raw, block_rows.get_block(raw, block_id), level)
        )

    async def block_messages(self, block_id: str) -> list[Message]:
        def query(raw: sqlite3.Connection) -> list[Message]:
            block_rows.get_block(raw, block_id)
            return block_rows.block_messages(raw, block_id)

        return await self.db.read(query)

    async def open_tail(self, namespace: str, thread_id: str) -> list[Message]:
        return await self.db.read(lambda raw: block_rows.open_tail(raw, namespace, thread_id))

    async def mark_block_ready(
        self, block_id: str, derived: dict[str, object] | None = None
    ) -> Block:
        """Mark a block ready (normally done by derivation once L0–L2 and events exist)."""
        now = iso(utc_now())
        return await self.db.write(lambda raw: block_rows.mark_ready(raw, block_id, now, derived))

    async def expand_block(
        self, block_id: str, target: Any = None, source: LiftSource = "user"
    ) -> BlockView:
        """Lift (or lower) a ready block's view and re-anchor its decay there."""
        if source not in ("user", "agent"):
            raise InvalidInput("source must be 'user' or 'agent'")
        now = iso(utc_now())

        def unit(raw: sqlite3.Connection) -> BlockView:
            current, _ = current_level(raw, block_rows.get_block(raw, block_id))
            level = block_rules.normalize_target_level(target, current)
            block = block_rows.reanchor(raw, block_id, level, source, now)
            return block_view(raw, block)

        return await self.db.write(unit)
