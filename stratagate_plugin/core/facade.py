"""``StrataGate``: the one entry point hosts, the CLI and the web app call.

Each public method is a short use case that joins pure rule modules with one store
transaction; no framework code lives here.
"""

import sqlite3
import uuid
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from . import blocks as block_rules
from . import profile_service
from .config import MemoryConfig
from .derivation import DerivationReport, Deriver
from .errors import InvalidInput, NotFound
from .events import EventCard
from .llm.base import StructuredModel
from .profile_service import ProfileUpdate, ProfileView
from .records import (
    Block,
    BlockView,
    Job,
    LiftSource,
    Message,
    MessageIn,
    ToolTrace,
    TurnReceipt,
)
from .store import Database, block_rows, default_database_path, event_rows, jobs
from .store.sealing import seal_whole_tail
from .store.turns import NamespaceDefaults, record_turn
from .timeutil import iso, to_utc, utc_now


class StrataGate:
    """The memory engine over one database file."""

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

    @property
    def _defaults(self) -> NamespaceDefaults:
        return NamespaceDefaults(self.config.block_turn_size, self.config.block_decay_lambda)

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

        return await self.db.write(unit)

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

    # -- blocks ------------------------------------------------------------------------

    async def get_blocks(
        self, namespace: str | None = None, thread_id: str | None = None
    ) -> list[BlockView]:
        """Every block with its current decayed level and the token size of each view."""

        def query(raw: sqlite3.Connection) -> list[BlockView]:
            found = block_rows.list_blocks(raw, namespace, thread_id)
            return [_view_of(raw, block, None) for block in found]

        return await self.db.read(query)

    async def view_block(self, block_id: str, level: int | None = None) -> BlockView:
        """One block rendered at ``level`` (default: its current decayed level)."""
        return await self.db.read(
            lambda raw: _view_of(raw, block_rows.get_block(raw, block_id), level)
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
            current = _view_of(raw, block_rows.get_block(raw, block_id), None).current_level
            level = block_rules.normalize_target_level(target, current)
            block = block_rows.reanchor(raw, block_id, level, source, now)
            return _view_of(raw, block, None)

        return await self.db.write(unit)

    # -- derivation and events ---------------------------------------------------------

    async def process_pending(
        self, max_jobs: int | None = None, on_job: Callable[[Job], None] | None = None
    ) -> DerivationReport:
        """Run every due derivation job now (summaries, then event extraction)."""
        return await Deriver(self.db, self.model).process_pending(max_jobs, on_job)

    async def list_jobs(self, namespace: str | None = None, status: str | None = None) -> list[Job]:
        return await self.db.read(lambda raw: jobs.list_jobs(raw, namespace, status))

    async def retry_job(self, job_id: str) -> Job:
        """Manual retry of a failed job: attempts start again and it runs at the next pass."""
        now = utc_now()
        return await self.db.write(lambda raw: jobs.retry(raw, job_id, now))

    async def list_events(
        self,
        namespace: str | None = None,
        *,
        block_id: str | None = None,
        include_hidden: bool = False,
        limit: int = 1000,
        offset: int = 0,
    ) -> list[EventCard]:
        statuses = event_rows.VISIBLE + (("forgotten", "archived") if include_hidden else ())
        return await self.db.read(
            lambda raw: event_rows.list_events(raw, namespace, statuses, block_id, limit, offset)
        )

    async def get_event(self, event_id: str) -> EventCard:
        return await self.db.read(lambda raw: event_rows.get_event(raw, event_id))

    # -- resident profile ----------------------------------------------------------------

    async def get_profile(self) -> ProfileView:
        return await profile_service.get_profile(self.db)

    async def update_profile(
        self,
        field: str,
        value: object,
        source: profile_service.Source = "settings",
        expected_revision: int | None = None,
    ) -> ProfileUpdate:
        """One field per call; a stale ``expected_revision`` raises ProfileConflict."""
        return await profile_service.update_field(self.db, field, value, source, expected_revision)

    async def agent_profile_update(
        self, thread_key: str, field: str, value: object, latest_user_message: str
    ) -> ProfileUpdate:
        """The agent's request: applied if the user asked for it, else awaits consent."""
        return await profile_service.agent_update(
            self.db, thread_key, field, value, latest_user_message
        )

    async def settle_profile_proposals(
        self, thread_key: str, user_message: str
    ) -> list[ProfileUpdate]:
        return await profile_service.settle_proposals(self.db, thread_key, user_message)


def default_model() -> StructuredModel:
    """The embedded deterministic model, used whenever no endpoint is configured."""
    from .llm.offline import OfflineModel

    return OfflineModel()


def _require_name(label: str, value: object) -> None:
    if not isinstance(value, str) or not value.strip():
        raise InvalidInput(f"{label} must be a non-empty string")


def current_level(raw: sqlite3.Connection, block: Block) -> tuple[int, int]:
    """(level, age): pending blocks stay at L5 and never age."""
    if block.processing_status != "ready" or block.pointer_anchor_position is None:
        return 5, 0
    latest = block_rows.latest_ready_position(raw, block.namespace, block.thread_id)
    decay = block_rows.decay_lambda(raw, block.namespace)
    level = block_rules.decayed_level(
        block.pointer_anchor_level, block.pointer_anchor_position, latest, decay
    )
    return level, max(0, latest - (block.ready_position or latest))


def _view_of(raw: sqlite3.Connection, block: Block, level: int | None) -> BlockView:
    messages = block_rows.block_messages(raw, block.id)
    current, age = current_level(raw, block)
    shown = current if level is None else block_rules.clamp_level(level)
    if not messages:
        raise NotFound(f"block {block.id} has no messages")
    return BlockView(
        block=block,
        current_level=current,
        age=age,
        view_tokens=block_rules.view_token_sizes(block, messages),
        text=block_rules.render_level(block, shown, messages),
    )
