"""Data the host hands to plugins and gets back from them."""

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Annotated, Any, Literal, Protocol

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from .chat import ChatMessage, ToolSpec
from .profiles import Profile
from .text import valid_json, valid_text

__all__ = [
    "ChatMessage",
    "ChatNote",
    "ContextSection",
    "HostAPI",
    "HostTurn",
    "NavLink",
    "NoteItem",
    "Session",
    "SettingsSection",
    "SpaceChoice",
    "StopDecision",
    "Tool",
    "ToolCallContext",
    "ToolTrace",
    "TurnState",
    "WebSection",
]


class HostAPI(Protocol):
    """What every hook's ``host`` offers a plugin (``harness.runtime.Host`` implements it).

    Plugins depend on this, not on ``Host``, so the hooks need nothing but this module.
    """

    @property
    def name(self) -> str:
        """The host's name, as ``plugin.yml``'s ``host.name`` gives it."""
        ...

    @property
    def version(self) -> str:
        """The host's version, checked against ``plugin.yml``'s ``host.compatible``."""
        ...

    @property
    def profile(self) -> Profile:
        """The running profile (its ``model`` and ``system_prompt`` are for plugins to read)."""
        ...

    @property
    def cwd(self) -> Path:
        """The directory the host was started in."""
        ...

    @property
    def home(self) -> Path:
        """``$STRATAGATE_HOME``: where profiles, sessions and plugin data live."""
        ...

    def settings(self, section_id: str) -> dict[str, Any]:
        """The section's defaults overlaid with the values saved in the profile."""
        ...

    def save_settings(self, section_id: str, values: dict[str, Any]) -> dict[str, Any]:
        """Merge ``values`` into the profile's saved settings, write it, return the result."""
        ...


@dataclass
class Session:
    """One conversation: its id, profile, working directory and native history."""

    id: str
    profile: str
    cwd: Path
    created_at: datetime
    history: list[ChatMessage] = field(default_factory=list)
    turns: int = 0
    completed: list["HostTurn"] = field(default_factory=list)
    """Every folded turn in the session file, oldest first: the durable record a plugin
    catches up from when it could not take a turn when it ended."""
    memory_space: str | None = None
    """The memory space the person chose as the conversation began (one a plugin offered
    through ``session_spaces``), kept in the session file; None: the plugin's own rule."""


@dataclass(frozen=True)
class SpaceChoice:
    """A memory space a new conversation may use: ``value`` is what the session keeps
    (``""``: the plugin's own rule, the default), ``name`` what the person reads."""

    value: str
    name: str


@dataclass(frozen=True)
class ToolCallContext:
    """Where a tool call happens: the session, the turn number and the model's call id."""

    session: Session
    turn: int
    call_id: str


StopKind = Literal["allow", "steer", "fail", "recover"]
ToolImplementation = Callable[[dict[str, Any], ToolCallContext], Awaitable[Any]]


@dataclass(frozen=True)
class Tool:
    """A tool offered to the model; the result (str, or JSON-able data) goes back as text."""

    name: str
    description: str
    parameters: dict[str, Any]
    implementation: ToolImplementation

    def spec(self) -> ToolSpec:
        return ToolSpec(name=self.name, description=self.description, parameters=self.parameters)


class ContextSection(BaseModel):
    """Text added to every model call; sorted by ``order`` (then id).

    ``system`` sections join the system message; ``user`` sections go just before the
    current turn's user message.
    """

    model_config = ConfigDict(frozen=True)

    id: str = Field(min_length=1)
    text: str
    role: Literal["system", "user"] = "system"
    order: int = 100


CleanJson = Annotated[Any, AfterValidator(valid_json)]  # U+FFFD for lone surrogates


class ToolTrace(BaseModel):
    """One tool call kept in a folded turn: name, raw arguments, raw result (the memory
    plugin hands it to the engine as a mapping)."""

    model_config = ConfigDict(frozen=True)

    name: Annotated[str, AfterValidator(valid_text)]
    arguments: CleanJson = None
    result: CleanJson = None


class HostTurn(BaseModel):
    """A completed turn folded for memory: human text, answer text, non-memory tool traces."""

    model_config = ConfigDict(frozen=True)

    session_id: str
    turn: int
    user: str
    assistant: str
    tool_calls: tuple[ToolTrace, ...] = ()
    started_at: datetime
    ended_at: datetime
    outcome: Literal["completed", "failed"] = "completed"
    error: str | None = None


@dataclass
class TurnState:
    """The running turn as ``turn_stopping`` sees it (read-only for plugins)."""

    turn: int
    user_message: str
    messages: list[ChatMessage]
    step: int = 0
    stops: int = 0

    @property
    def answer(self) -> str:
        """The text of the latest assistant message."""
        replies = [m for m in self.messages if m.role == "assistant"]
        return replies[-1].text if replies else ""


@dataclass(frozen=True)
class StopDecision:
    """A plugin's answer when the model stops: allow, steer, fail or recover."""

    kind: StopKind
    text: str = ""

    @classmethod
    def allow(cls) -> "StopDecision":
        """Let the turn end with the model's answer."""
        return cls("allow")

    @classmethod
    def steer(cls, message: str) -> "StopDecision":
        """Add ``message`` as a plugin-sourced user message and let the model continue."""
        return cls("steer", message)

    @classmethod
    def fail(cls, reason: str) -> "StopDecision":
        """End the turn with an error."""
        return cls("fail", reason)

    @classmethod
    def recover(cls, instructions: str) -> "StopDecision":
        """Ask for the final answer again, without tools, following ``instructions``."""
        return cls("recover", instructions)


@dataclass(frozen=True)
class SettingsSection:
    """A plugin's settings: defaults for its entry in the profile (its web pages, if it has
    any, come through ``register_web``)."""

    id: str
    title: str
    defaults: dict[str, Any] = field(default_factory=dict)
    order: int = 100


@dataclass(frozen=True)
class NavLink:
    """One entry of the web app's navigation: a path and its label per language."""

    href: str
    labels: dict[str, str]


@dataclass(frozen=True)
class WebSection:
    """A plugin's part of the web app (``register_web``), as datasette's ``register_routes``.

    ``routes`` are Starlette routes mounted under ``path``; ``nav`` adds links to the app's
    navigation; ``catalogs`` is a directory of message catalogs (``en.json``, ``zh.json``:
    key → text) the templates use, ``strings`` the same as a dict (language → key → text).
    Templates are found in the app's ``webui/templates`` and in ``templates`` if given.
    ``body_limits`` lets named routes (paths under ``path``) take bodies larger than the
    app's 1 MB, e.g. an upload; every other route keeps the app's limit.
    """

    id: str
    path: str
    routes: list[Any]
    nav: list[NavLink] = field(default_factory=list)
    strings: dict[str, dict[str, str]] = field(default_factory=dict)
    catalogs: Traversable | None = None
    templates: Path | None = None
    order: int = 100
    body_limits: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class NoteItem:
    """One line of a chat note: a label, an optional link into the app, a detail."""

    label: str
    href: str | None = None
    detail: str = ""


@dataclass(frozen=True)
class ChatNote:
    """What a plugin adds below a turn in the web chat (``chat_annotations``).

    ``kind`` is ``citations`` (the evidence the answer used; ``more`` holds what was checked
    and not used, shown folded) or ``status`` (a row such as "block sealed"), which the
    user may hide."""

    turn: int
    kind: Literal["citations", "status"]
    title: str
    items: tuple[NoteItem, ...] = ()
    more: tuple[NoteItem, ...] = ()
