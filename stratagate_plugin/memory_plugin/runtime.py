"""The plugin's running state: the engine, memory spaces, a derivation worker, turn state.

The worker also seals the tails that went idle (``seal_idle_minutes``): once as the plugin
starts (a conversation left unfinished by an earlier process), after every turn, and
every ``idle_check_s`` while the process runs, so no tail stays unsealed for ever. And it
looks for due jobs every ``job_poll_s`` (the profile's setting, 3 s by default): other
processes on the same file (``ingest``, ``import --commit``, an MCP server) queue jobs it
hears nothing about, and an idle ``serve`` once left them pending for minutes.

``serve`` runs this worker in a process of its own (``cli/serve_processes.py``): its web
processes set ``MemoryRuntime.kick_pipe`` before the plugin starts, and their runtimes then
run no worker; a kick is one byte written to that pipe, which the worker process reads.
"""

import asyncio
import contextlib
import logging
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, ClassVar, Self

from ..core import shared_foreground
from ..core.clock import utc_now
from ..core.foreground import FOREGROUND, yield_to_foreground
from ..core.llm.select import model_from_settings
from ..core.memory import StrataGate
from ..core.profile.spaces import display_name
from ..core.store.db import default_database_path
from ..core.store.units import is_database_url
from ..harness.types import ChatMessage, Session, SpaceChoice
from .settings import memory_config, space_of, validated

LIVE_SETTINGS = (  # what the settings page applies to the running plugin
    "block_turn_size",
    "block_decay_lambda",
    "agent_memory_weight",
    "show_status_rows",
    "show_citations",
)
IDLE_CHECK_S = 60.0
DATABASE_VARIABLE = "STRATAGATE_DATABASE_URL"  # below --db and the profile's database:
JOB_POLL_S = 3.0  # the settings' default ``job_poll_s``: one small read when nothing is due

log = logging.getLogger(__name__)


@dataclass
class TurnGate:
    """One turn's plugin state: the user's message, its recall, finish-step bookkeeping."""

    user_message: str = ""
    recall: str | None = None
    directory: str | None = None  # the topic directory, read once per turn as recall is
    steers: int = 0
    open_at_last_steer: int = 0
    recovering: bool = False


@dataclass
class SavedSettings:
    """The profile file the settings page saves into, and how to read its memory section:
    ``serve``'s other web processes apply a save they did not answer when the file changes."""

    path: Path
    read: Callable[[], dict[str, Any]]
    stamp: int = 0

    def __post_init__(self) -> None:
        self.stamp = self._stamp()

    def changes(self) -> dict[str, Any] | None:
        """The saved section when the file changed since last asked, else None."""
        stamp = self._stamp()
        if stamp == self.stamp:
            return None
        self.stamp = stamp
        try:
            return self.read()
        except Exception as error:  # a profile being hand-edited: keep what runs
            log.warning("StrataGate kept its settings: the profile did not read: %s", error)
            return None

    def _stamp(self) -> int:
        try:
            return self.path.stat().st_mtime_ns
        except OSError:
            return 0


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
    clock: Callable[[], datetime] = utc_now
    idle_check_s: float = IDLE_CHECK_S
    job_poll_s: float = JOB_POLL_S
    saved: SavedSettings | None = None
    board: shared_foreground.SharedBoard | None = None  # other processes on the database
    kick_pipe: ClassVar[int | None] = None
    """Set (before the plugin starts): runtimes of this process derive nothing themselves,
    a kick is a byte on this pipe to the process that does (``serve``'s web processes)."""
    database_given: ClassVar[Path | str | None] = None
    """Set (before the plugin starts) by ``chat --db`` and ``serve --db``: the database
    every runtime of this process opens, over the profile's (which it never changes)."""

    @classmethod
    async def start(cls, settings: dict[str, Any], cwd: Path) -> Self:
        settings = validated(settings)
        database = chosen_database(settings, cls.database_given)
        model = model_from_settings(settings.get("model"), os.environ)
        memory = await StrataGate.open(database, memory_config(settings), model)
        runtime = cls(memory, settings, cwd, job_poll_s=float(settings["job_poll_s"]))
        runtime.board = shared_foreground.join(database)
        if runtime.board is not None:
            FOREGROUND.boards.append(runtime.board)
        if cls.kick_pipe is None:
            runtime.worker = asyncio.create_task(runtime._derive_forever())
        else:
            runtime.idle.set()  # nothing runs here: the other process derives
        runtime.kick()
        return runtime

    def kick(self) -> None:
        """Ask the worker for a derivation pass (the worker counts as busy from now on)."""
        if self.kick_pipe is not None:
            kick_through(self.kick_pipe)
            return
        self.idle.clear()
        self.wake.set()

    def follow_saved_settings(self) -> None:
        """Apply the settings page's values another process saved (cheap: one ``stat``)."""
        saved = self.saved.changes() if self.saved is not None else None
        if saved is not None:
            fresh = validated({**self.settings, **saved})
            self.settings.update({name: fresh[name] for name in LIVE_SETTINGS})

    def turn(self, session: Session, turn: int) -> TurnGate:
        """The state of one running turn (dropped when the turn completes)."""
        return self.gates.setdefault((session.id, turn), TurnGate())

    def session_space(self, session: Session) -> str:
        """The space the person chose as the session began, else the settings' rule."""
        if session.memory_space:
            return session.memory_space
        return space_of(self.settings, str(session.cwd or self.cwd), session.id)

    async def space_choices(self) -> list[SpaceChoice]:
        """What a new conversation may use: the default (this directory's space, or a
        space of its own in ``session`` mode), then every space that holds memory, most
        recently used first (a name two spaces share is given whole)."""
        default = self.default_space()
        own = self.settings["namespace_mode"] == "session"
        others = [name for name in await self.memory.spaces.names() if name != default]
        shown = [display_name(name) for name in others]
        choices = [SpaceChoice("", "a space of its own" if own else display_name(default))]
        for name, label in zip(others, shown, strict=True):
            choices.append(SpaceChoice(name, name if shown.count(label) > 1 else label))
        return choices

    def default_space(self) -> str:
        """The space a new chat in the host's directory uses (what the web app shows first)."""
        return space_of(self.settings, str(self.cwd), "")

    async def seal_idle_tails(self) -> list[str]:
        """Seal every tail quiet for ``seal_idle_minutes`` (by ``clock``); the new blocks."""
        quiet = timedelta(minutes=float(self.settings["seal_idle_minutes"]))
        return await self.memory.blocks.seal_idle_tails(self.clock() - quiet)

    async def _derive_forever(self) -> None:
        """Seal idle tails and run derivation jobs whenever a turn may have sealed a block;
        in between, look for idle tails every ``idle_check_s`` and for jobs queued by other
        processes every ``job_poll_s``."""
        loop = asyncio.get_running_loop()
        next_seal_check = loop.time()
        while True:
            if not self.wake.is_set():
                self.idle.set()
            with contextlib.suppress(TimeoutError):
                timeout = max(0.0, min(self.job_poll_s, next_seal_check - loop.time()))
                await asyncio.wait_for(self.wake.wait(), timeout=timeout)
            woken = self.wake.is_set()
            self.idle.clear()
            self.wake.clear()
            try:
                sealed: list[str] = []
                if woken or loop.time() >= next_seal_check:
                    sealed = await self.seal_idle_tails()
                    next_seal_check = loop.time() + self.idle_check_s
                if sealed or woken or await self._jobs_due():
                    await self._derive()
                await self.memory.imports.advance_pending()
            except Exception as failure:
                log.error("StrataGate derivation pass failed: %s", failure)
                log.debug("StrataGate derivation pass failed", exc_info=True)

    async def _jobs_due(self) -> bool:
        """Derivation or topic work another process queued (a pass runs both)."""
        memory = self.memory
        return await memory.derivation.jobs_due() or await memory.topics.jobs_due()

    async def _derive(self) -> None:
        """One pass, while no other process on the database runs one (``one_pass``)."""
        async with self.board.one_pass() if self.board else contextlib.nullcontext():
            report = await self.memory.derivation.process_pending(pause=yield_to_foreground)
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
        if self.board is not None:
            FOREGROUND.boards.remove(self.board)
            shared_foreground.leave(self.board)
            self.board = None
        await self.memory.close()


def kick_through(pipe: int) -> None:
    """One byte to the worker process; a full pipe already holds kicks it has yet to read,
    and a closed one means it is being restarted (it derives what is due as it starts)."""
    with contextlib.suppress(BlockingIOError, BrokenPipeError):
        os.write(pipe, b"k")


def chosen_database(
    settings: dict[str, Any],
    given: Path | str | None = None,
    environ: Mapping[str, str] = os.environ,
) -> Path | str:
    """Where memory lives, decided once for every command, the plugin and ``serve``:
    ``given`` (``--db``), else the profile's ``database:``, else ``$STRATAGATE_DATABASE_URL``,
    else ``$STRATAGATE_HOME/memory.db``. Each may name a file or a ``postgresql://`` URL;
    a URL stays text (``Path`` would fold its ``//``), a file is a ``Path``."""
    named = (
        given
        or settings.get("database")
        or environ.get(DATABASE_VARIABLE)
        or default_database_path()
    )
    return named if is_database_url(named) else Path(named)
