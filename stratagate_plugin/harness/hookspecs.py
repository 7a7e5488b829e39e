"""The host's hooks. Contracts and exact signatures: docs/hooks.md.

Any implementation may be ``async``; the host awaits what comes back, so never use
``firstresult`` or wrappers here.
"""

from collections.abc import Awaitable, Callable

import pluggy

from .types import (
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

hookspec = pluggy.HookspecMarker("stratagate")
hookimpl = pluggy.HookimplMarker("stratagate")


@hookspec
def register_settings(
    host: HostAPI, register: Callable[[SettingsSection], None]
) -> Awaitable[None] | None:
    """Register settings sections (defaults, optional web app) before startup."""


@hookspec
def startup(host: HostAPI) -> Awaitable[None] | None:
    """Open resources once the plugin's settings are known."""


@hookspec
def register_tools(host: HostAPI, register: Callable[..., None]) -> Awaitable[None] | None:
    """Register tools (``Tool`` objects or typed functions) offered to the model."""


@hookspec
def build_context(
    host: HostAPI, session: Session, user_message: str, state: TurnState
) -> list[ContextSection] | Awaitable[list[ContextSection] | None] | None:
    """Return context sections for the next model call."""


@hookspec
def build_history(
    host: HostAPI, session: Session, history: list[ChatMessage]
) -> list[ChatMessage] | Awaitable[list[ChatMessage] | None] | None:
    """Return a shorter stand-in for the session's native history, or None to keep it."""


@hookspec
def turn_stopping(
    host: HostAPI, session: Session, state: TurnState
) -> StopDecision | Awaitable[StopDecision | None] | None:
    """Decide whether the model may stop: allow, steer, fail or recover."""


@hookspec
def session_started(host: HostAPI, session: Session) -> Awaitable[str | None] | str | None:
    """A session was opened (new or continued); a returned text is a warning for the user."""


@hookspec
def describe_session(host: HostAPI, session: Session) -> Awaitable[str | None] | str | None:
    """Return one line about the opened session for the user (e.g. which memory it uses)."""


@hookspec
def session_spaces(
    host: HostAPI,
) -> list[SpaceChoice] | Awaitable[list[SpaceChoice] | None] | None:
    """The memory spaces a new conversation may choose (the web chat offers them)."""


@hookspec
def session_ended(host: HostAPI, session: Session) -> Awaitable[str | None] | str | None:
    """An interactive session ended (exit or end of input); a returned text warns the user."""


@hookspec
def turn_completed(
    host: HostAPI, session: Session, turn: HostTurn
) -> Awaitable[str | None] | str | None:
    """Receive the folded turn once it is in the session file; a returned text warns the user."""


@hookspec
def register_web(host: HostAPI, register: Callable[[WebSection], None]) -> Awaitable[None] | None:
    """Add pages to the web app (after ``startup``): routes, navigation, translations."""


@hookspec
def chat_annotations(
    host: HostAPI, session: Session
) -> list[ChatNote] | Awaitable[list[ChatNote] | None] | None:
    """Notes the web chat shows below the session's turns (citations, status rows)."""


@hookspec
def shutdown(host: HostAPI) -> Awaitable[None] | None:
    """Release resources; called once when the host stops."""
