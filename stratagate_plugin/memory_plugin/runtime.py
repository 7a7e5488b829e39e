"""The plugin's running state: the engine, memory spaces, a derivation worker, turn state."""

import asyncio
import contextlib
import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core.config import MemoryConfig
from ..core.llm.select import model_from_settings
from ..core.memory import StrataGate
from ..core.profile.spaces import namespace_for
from ..core.store.db import default_database_path
from ..harness.types import ChatMessage, Session
from .settings import validated

log = logging.getLogger(__name__)


@dataclass
class TurnGate:
    """One turn's plugin state: the user's message, its recall, finish-step bookkeeping."""

    user_message: str = ""
    recall: str | None = None
    steers: int = 0
    open_at_last_steer: int = 0
    recovering: bool = False


@dataclass
class MemoryRuntime:
    memory: StrataGate
    settings: dict[str, Any]
    cwd: Path
    worker: asyncio.Task[None] | None = None
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    idle: asyncio.Event = field(default_factory=asyncio.Event)
    gates: dict[tuple[str, int], TurnGate] = field(default_factory=dict)
    histories: dict[str, tuple[int, list[ChatMessage] | None]] = field(default_factory=dict)
    synced: dict[str, int] = field(default_factory=dict)  # session → its newest turn in memory

    @classmethod
    async def start(cls, settings: dict[str, Any], cwd: Path) -> "MemoryRuntime":
        settings = validated(settings)
        path = Path(settings["database"]) if settings.get("database") else default_database_path()
        config = MemoryConfig(
            block_turn_size=int(settings["block_turn_size"]),
            block_decay_lambda=float(settings["block_decay_lambda"]),
            structured_task_timeout_s=float(settings["structured_task_timeout_s"]),
            agent_memory_weight=float(settings["agent_memory_weight"]),
            derive_concurrency=int(settings["derive_concurrency"]),
        )
        memory = await StrataGate.open(
            path, config, model_from_settings(settings.get("model"), os.environ)
        )
        runtime = cls(memory, settings, cwd)
        runtime.worker = asyncio.create_task(runtime._derive_forever())
        runtime.kick()
        return runtime

    def kick(self) -> None:
        """Ask the worker for a derivation pass (the worker counts as busy from now on)."""
        self.idle.clear()
        self.wake.set()

    def turn(self, session: Session, turn: int) -> TurnGate:
        """The state of one running turn (dropped when the turn completes)."""
        return self.gates.setdefault((session.id, turn), TurnGate())

    def namespace(self, session: Session) -> str:
        return namespace_for(
            str(self.settings["namespace_mode"]),
            cwd=str(session.cwd or self.cwd),
            session_id=session.id,
            prefix=str(self.settings["namespace_prefix"]),
            global_name=str(self.settings["global_namespace"]),
        )

    async def _derive_forever(self) -> None:
        """Run derivation jobs in the background whenever a turn may have sealed a block."""
        while True:
            if not self.wake.is_set():
                self.idle.set()
            await self.wake.wait()
            self.idle.clear()
            self.wake.clear()
            try:
                report = await self.memory.process_pending()
            except Exception as failure:
                log.error("StrataGate derivation pass failed: %s", failure)
                log.debug("StrataGate derivation pass failed", exc_info=True)
                continue
            for error in report.errors:
                log.warning("StrataGate derivation: %s", error)

    async def stop(self, grace_s: float = 5.0) -> None:
        """Give queued derivation a few seconds to finish, then cancel; an interrupted job is
        failed and retried at the next start, so nothing is lost either way."""
        if self.worker is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.idle.wait(), timeout=grace_s)
            self.worker.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await asyncio.wait_for(self.worker, timeout=5)
        await self.memory.close()
