"""The StrataGate plugin: thin hook implementations that translate host calls to the façade.

Turns are recorded when they complete (receipt = session + turn number) and derived in the
background; each model call gets the resident profile, the memory directory, automatic
recall and the memory protocol; the finish step makes the agent close every evidence batch
before answering.
Memory failures are logged and never break the agent's turn. An interactive session's
end seals its open tail; tails of sessions that simply stop are sealed once idle
(``runtime``). Each session opens with one line naming its memory space.

The entry point names ``MemoryPlugin``; the host registers one instance per ``Host``, and
that instance holds the running engine between ``startup`` and ``shutdown``.
"""

import functools
import logging
from collections.abc import Callable
from typing import Any

from ..core.foreground import serving
from ..core.profile.spaces import SpaceSummary, display_name
from ..harness.hookspecs import hookimpl
from ..harness.profiles import load_profile, profile_path
from ..harness.types import (
    ChatMessage,
    ChatNote,
    ContextSection,
    HostAPI,
    HostTurn,
    Session,
    SettingsSection,
    SpaceChoice,
    StopDecision,
    TurnState,
    WebSection,
)
from ..web.memory.section import memory_section
from .annotations import chat_notes
from .catch_up import record_missing
from .history import replace_with_blocks
from .protocol import (
    NO_PROGRESS,
    PROTOCOL,
    RECOVERY,
    REDO_WITHOUT_BOOKKEEPING,
    cleanup_steer,
    leaks_bookkeeping,
)
from .runtime import MemoryRuntime, SavedSettings
from .settings import DEFAULT_SETTINGS, SETTINGS_ID, derivation_model, validated
from .tools import memory_tools

PLUGIN_NAME = "stratagate-memory"
HOOKS: tuple[str, ...] = (
    "register_settings",
    "startup",
    "session_started",
    "describe_session",
    "session_spaces",
    "session_ended",
    "register_tools",
    "build_context",
    "build_history",
    "turn_stopping",
    "turn_completed",
    "register_web",
    "chat_annotations",
    "shutdown",
)
TOOLS: tuple[str, ...] = (
    "memory_search_events",
    "memory_search_raw",
    "memory_get_blocks",
    "memory_expand_block",
    "memory_expand_event",
    "memory_search_graph",
    "memory_expand_graph_node",
    "memory_assess",
    "memory_record_use",
    "memory_profile_update",
    "memory_remember",
    "memory_list_topics",
    "memory_expand_topic",
)
DIRECTORY_SECTION = "stratagate:memory-directory"
log = logging.getLogger(__name__)


class MemoryPlugin:
    """The plugin as pluggy sees it: each hook is a method over this host's ``runtime``."""

    def __init__(self) -> None:
        self._runtime: MemoryRuntime | None = None

    @property
    def runtime(self) -> MemoryRuntime:
        """The engine and turn state opened by ``startup``."""
        if self._runtime is None:
            raise RuntimeError("the StrataGate plugin has not started")
        return self._runtime

    @hookimpl
    def register_settings(self, register: Callable[[SettingsSection], None]) -> None:
        defaults = dict(DEFAULT_SETTINGS)
        register(SettingsSection(id=SETTINGS_ID, title="StrataGate memory", defaults=defaults))

    @hookimpl
    async def startup(self, host: HostAPI) -> None:
        source = str(profile_path(host.profile.name))  # a wrong value's warning names it
        settings = validated(host.settings(SETTINGS_ID), source)
        chat_model = host.profile.model.model_dump() if host.profile.model is not None else None
        settings["model"] = derivation_model(settings, chat_model)
        self._runtime = await MemoryRuntime.start(settings, host.cwd)
        name = host.profile.name
        read = functools.partial(saved_section, name)
        self._runtime.saved = SavedSettings(profile_path(name), read)

    @hookimpl
    def register_tools(self, register: Callable[..., None]) -> None:
        for tool in memory_tools(self.runtime):
            register(tool)

    @hookimpl
    async def build_context(
        self, session: Session, user_message: str, state: TurnState
    ) -> list[ContextSection]:
        runtime = self.runtime
        turn = runtime.turn(session, state.turn)
        sections = [ContextSection(id="stratagate:memory-protocol", text=PROTOCOL, order=30)]
        with serving():  # the worker in this process yields to the turn's recall
            try:
                if turn.recall is None:  # first model call of the turn
                    turn.user_message = user_message
                    await runtime.memory.profile.settle_proposals(session.id, user_message)
                    recall = await runtime.memory.retrieval.auto_context(
                        runtime.session_space(session), session.id, user_message
                    )
                    turn.recall = recall.text
                    turn.directory = await runtime.memory.topics.directory(
                        runtime.session_space(session)
                    )
                sections += await _memory_sections(runtime, turn.recall, turn.directory or "")
            except Exception as error:
                log_failure("context build failed; continuing without memory", error)
        return sections

    @hookimpl
    async def build_history(
        self, session: Session, history: list[ChatMessage]
    ) -> list[ChatMessage] | None:
        """Ready blocks replace the native turns they hold, at their decayed level.

        Worked out once per turn: the history only grows when a turn completes."""
        runtime = self.runtime
        cached = runtime.histories.get(session.id)
        if cached is not None and cached[0] == len(history):
            return cached[1]
        try:
            replaced = await replace_with_blocks(
                runtime.memory, runtime.session_space(session), session.id, history
            )
        except Exception as error:
            log_failure("history replacement failed; using native history", error)
            return None
        runtime.histories[session.id] = (len(history), replaced)
        return replaced

    @hookimpl
    async def turn_stopping(self, session: Session, state: TurnState) -> StopDecision:
        """Open batches → steer to close them; no progress → fail; all closed → recover."""
        runtime = self.runtime
        gate = runtime.turn(session, state.turn)
        space = runtime.session_space(session)
        open_ids = [b.id for b in await runtime.memory.gate.unresolved_batches(space, session.id)]
        if open_ids:
            if gate.steers and len(open_ids) >= gate.open_at_last_steer:
                return StopDecision.fail(f"{NO_PROGRESS} (open: {', '.join(open_ids)}).")
            gate.steers += 1
            gate.open_at_last_steer = len(open_ids)
            return StopDecision.steer(cleanup_steer(open_ids))
        if gate.recovering:
            return StopDecision.allow()
        if leaks_bookkeeping(state.answer):
            gate.recovering = True
            return StopDecision.recover(REDO_WITHOUT_BOOKKEEPING)
        if gate.steers:
            gate.recovering = True
            return StopDecision.recover(RECOVERY)
        return StopDecision.allow()

    @hookimpl
    async def session_started(self, session: Session) -> str | None:
        """Turns the session file has and memory lacks (a crash, a locked database) are
        recorded now."""
        return await record_missing(self.runtime, session)

    @hookimpl
    async def describe_session(self, session: Session) -> str:
        """Which memory space the session uses and how much it holds (memory being silently
        bound to the working directory surprised people)."""
        runtime = self.runtime
        space = runtime.session_space(session)
        spaces = await runtime.memory.spaces.summaries()
        return space_line(space, spaces)

    @hookimpl
    async def session_spaces(self) -> list[SpaceChoice]:
        """The web chat's choice for a new conversation: the default space or any space
        that holds memory (a conversation about another project's memory)."""
        return await self.runtime.space_choices()

    @hookimpl
    async def session_ended(self, session: Session) -> str | None:
        """Seal the session's open tail now and derive it in the background (the host
        gives the worker a few seconds at shutdown; a job left over runs at the next start)."""
        runtime = self.runtime
        waiting = await record_missing(runtime, session)
        if waiting:
            return waiting  # sealing now would leave the waiting turns out of the block
        try:
            await runtime.memory.blocks.seal_tail(runtime.session_space(session), session.id)
        except Exception as error:
            log_failure("could not seal the ended session", error)
            return f"memory could not seal this session yet ({error}); it is sealed once idle"
        runtime.kick()
        return None

    @hookimpl
    async def turn_completed(self, session: Session, turn: HostTurn) -> str | None:
        """Record the turn (after any older one still waiting); a warning when it must wait."""
        runtime = self.runtime
        runtime.gates.pop((session.id, turn.turn), None)
        return await record_missing(runtime, session, turn)

    @hookimpl
    def register_web(self, host: HostAPI, register: Callable[[WebSection], None]) -> None:
        """The memory page (``/memory``), over this plugin's running engine."""
        register(memory_section(host, lambda: self.runtime))

    @hookimpl
    async def chat_annotations(self, session: Session) -> list[ChatNote]:
        """Below each web-chat turn: the evidence its answer adopted (with what was checked
        and left), and rows for the session's blocks as they seal and become ready."""
        self.runtime.follow_saved_settings()  # another web process may have saved them
        return await chat_notes(self.runtime, session)

    @hookimpl
    async def shutdown(self) -> None:
        runtime, self._runtime = self._runtime, None
        if runtime is not None:
            await runtime.stop()


def saved_section(profile: str) -> dict[str, Any]:
    """The plugin's section as the profile file holds it now."""
    section: dict[str, Any] = load_profile(profile).settings.get(SETTINGS_ID, {})
    return section


def log_failure(what: str, error: Exception) -> None:
    """One line for the user (no traceback: a damaged file or a locked database is not a
    bug to debug); the traceback is kept at DEBUG level."""
    log.error("StrataGate %s: %s", what, error)
    log.debug("StrataGate %s", what, exc_info=True)


def space_line(namespace: str, spaces: list[SpaceSummary]) -> str:
    """``memory space "shop" (sg:project:/home/u/shop): 12 messages …``; an empty space
    says how many others hold memory."""
    this = next((space for space in spaces if space.namespace == namespace), None)
    holdings = this.holdings() if this else "empty"
    line = f"memory space {display_name(namespace)!r} ({namespace}): {holdings}"
    others = [space for space in spaces if space.namespace != namespace and space.messages]
    if holdings == "empty" and others:
        held = "1 other space holds" if len(others) == 1 else f"{len(others)} other spaces hold"
        line += f"; {held} memory (see `stratagate spaces`)"
    return line


async def _memory_sections(
    runtime: MemoryRuntime, recall: str, directory: str
) -> list[ContextSection]:
    """The profile (re-read each call: a tool may change it mid-turn), and the turn's
    recall and topic directory (read once per turn: the directory costs a scan of the
    space's unplaced events, 200 ms at 20k events, docs/graph-topics-measurements.md)."""
    sections = [ContextSection(id="stratagate:auto-memory", text=recall, order=20)]
    profile = (await runtime.memory.profile.get()).rendered()
    if profile:
        sections.append(ContextSection(id="stratagate:persistent-profile", text=profile, order=10))
    if directory:
        sections.append(ContextSection(id=DIRECTORY_SECTION, text=directory, order=15))
    return sections
