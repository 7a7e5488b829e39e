"""One MCP client's identity: the memory space, a session of its own, its turns and calls.

An MCP client is a host that StrataGate does not run: it reports no turns and shows the
server none of its conversation. Over stdio one process serves one client, so the process
opens a session as ``stratagate chat`` would (a new id, the working directory's space by
the plugin's rule, or the ``--space`` given) and every tool call runs in it, numbered as the
harness numbers a turn's calls.
"""

import itertools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core.clock import utc_now
from ..harness.sessions import new_session_id
from ..harness.types import Session, ToolCallContext
from ..memory_plugin.runtime import MemoryRuntime

SESSION_PREFIX = "mcp-"


@dataclass
class ServerRuntime(MemoryRuntime):
    """The plugin's runtime (engine, derivation worker, turn state) with an optional fixed
    memory space: ``--space`` overrides the plugin's per-session rule."""

    space: str | None = None

    def session_space(self, session: Session) -> str:
        return self.space or super().session_space(session)


@dataclass
class Connection:
    """The client's session and where its calls stand: the turn they belong to (the next
    one ``memory_record_turn`` will record) and a counter naming each call."""

    runtime: ServerRuntime
    session: Session
    turn: int = 1
    proposal_turn: int | None = None  # the turn of the newest profile proposal
    calls: "itertools.count[int]" = field(default_factory=lambda: itertools.count(1))

    @classmethod
    async def open(cls, settings: dict[str, Any], cwd: Path, profile: str) -> "Connection":
        """Start the runtime (its derivation worker included) and a new session in ``cwd``."""
        runtime = await ServerRuntime.start(settings, cwd)
        session = Session(
            id=SESSION_PREFIX + new_session_id(), profile=profile, cwd=cwd, created_at=utc_now()
        )
        return cls(runtime, session)

    @property
    def namespace(self) -> str:
        return self.runtime.session_space(self.session)

    def call(self) -> ToolCallContext:
        """The context of the next tool call (its id unique within the session)."""
        return ToolCallContext(self.session, self.turn, f"mcp-call-{next(self.calls)}")

    def thread(self, name: str | None) -> str:
        """The thread a turn is recorded in: the client's session, or the conversation it
        names (one it keeps across server restarts), always in this connection's space."""
        return name or self.session.id

    async def close(self) -> None:
        """Stop within the client's grace period (2 s after stdin closes): a derivation
        job cut short is retried at the next start."""
        await self.runtime.stop(grace_s=1.0)
