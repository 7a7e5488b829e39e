"""``StrataGate``: the one entry point hosts, the CLI and the web app call.

Each public method is a short use case that joins pure rule modules with one store
transaction; no framework code lives here.
"""

import sqlite3
import uuid
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from .blocks.service import BlocksService
from .clock import iso, to_utc, utc_now
from .config import MemoryConfig
from .derivation.facet import DerivationFacet
from .errors import InvalidInput
from .events.service import EventsService
from .gate.service import GateService
from .llm.base import StructuredModel
from .profile.service import ProfileService
from .records import MessageIn, ToolTrace, TurnReceipt
from .remember.service import RememberService
from .retrieval.service import RetrievalService
from .store import Database, default_database_path, jobs
from .store.sealing import seal_whole_tail
from .store.turns import ReceiptExists, record_turn, replayed_receipt, turn_fingerprint


class StrataGate(
    BlocksService,
    DerivationFacet,
    EventsService,
    GateService,
    ProfileService,
    RememberService,
    RetrievalService,
):
    """The memory engine over one database file: each base is one capability's use cases."""

    def __init__(
        self,
        db: Database,
        config: MemoryConfig | None = None,
        model: StructuredModel | None = None,
    ) -> None:
        self.db = db
        self.config = config or MemoryConfig()
        self.model = model or default_model()

    @classmethod
    async def open(
        cls,
        path: Path | str | None = None,
        config: MemoryConfig | None = None,
        model: StructuredModel | None = None,
    ) -> "StrataGate":
        """Open (creating or migrating) the file; jobs a dead process left running are failed."""
        db = await Database(path or default_database_path()).open()
        now = utc_now()
        await db.write(lambda raw: jobs.recover_interrupted(raw, now))
        return cls(db, config, model)

    async def close(self) -> None:
        await self.db.close()

    async def __aenter__(self) -> "StrataGate":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # -- recording -------------------------------------------------------------------

    async def append_turn(
        self,
        namespace: str,
        thread_id: str,
        *,
        user: str,
        assistant: str = "",
        tool_calls: Sequence[ToolTrace | dict[str, Any]] = (),
        at: datetime | None = None,
        receipt_id: str | None = None,
    ) -> TurnReceipt:
        """Record one completed turn (user + assistant with its tool traces)."""
        traces = tuple(t if isinstance(t, ToolTrace) else ToolTrace(**t) for t in tool_calls)
        messages = [
            MessageIn(role="user", content=user, at=at),
            MessageIn(role="assistant", content=assistant, tool_calls=traces, at=at),
        ]
        return await self.record_turn(namespace, thread_id, messages, at=at, receipt_id=receipt_id)

    async def record_turn(
        self,
        namespace: str,
        thread_id: str,
        messages: Sequence[MessageIn],
        *,
        at: datetime | None = None,
        receipt_id: str | None = None,
    ) -> TurnReceipt:
        """Record a turn of any messages (it must contain a user message); idempotent by receipt."""
        _require_name("namespace", namespace)
        _require_name("thread_id", thread_id)
        moment = to_utc(at) if at else utc_now()
        receipt = receipt_id or f"auto:{uuid.uuid4().hex}"
        defaults = self._defaults

        def unit(raw: sqlite3.Connection) -> TurnReceipt:
            return record_turn(raw, namespace, thread_id, messages, moment, receipt, defaults)

        try:
            return await self.db.write(unit)
        except ReceiptExists:
            # Rare path: the insert found the receipt, the whole unit rolled back.
            fingerprint = turn_fingerprint(thread_id, messages)
            return await self.db.read(
                lambda raw: replayed_receipt(raw, namespace, receipt, fingerprint)
            )

    async def seal_tail(self, namespace: str, thread_id: str) -> str | None:
        """Seal the thread's open tail now (end of a session or an import); None if empty."""
        now = iso(utc_now())
        return await self.db.write(lambda raw: seal_whole_tail(raw, namespace, thread_id, now))

    # -- block settings ----------------------------------------------------------------

    async def set_block_turn_size(self, namespace: str, size: int) -> None:
        """Affects future sealing only; existing blocks are never re-split."""
        if not isinstance(size, int) or size < 1:
            raise InvalidInput("block_turn_size must be a positive integer")
        await self._update_namespace(namespace, "block_turn_size", size)

    async def set_decay_lambda(self, namespace: str, decay_lambda: float) -> None:
        if decay_lambda < 0:
            raise InvalidInput("block_decay_lambda must be ≥ 0")
        await self._update_namespace(namespace, "block_decay_lambda", float(decay_lambda))

    async def _update_namespace(self, namespace: str, column: str, value: Any) -> None:
        now = iso(utc_now())
        defaults = self._defaults

        def unit(raw: sqlite3.Connection) -> None:
            from .store.turns import ensure_namespace

            ensure_namespace(raw, namespace, defaults, now)
            raw.execute(
                f"UPDATE namespaces SET {column} = ?, updated_at = ? WHERE namespace = ?",
                (value, now, namespace),
            )

        await self.db.write(unit)


def default_model() -> StructuredModel:
    """The endpoint configured in the environment, else the embedded offline model."""
    from .llm.select import model_from_settings

    return model_from_settings()


def _require_name(label: str, value: object) -> None:
    if not isinstance(value, str) or not value.strip():
        raise InvalidInput(f"{label} must be a non-empty string")
