"""Memory spaces (spec §12.1): which namespace a conversation's memories live in.

``project`` (default) keys memory by the working directory, ``session`` by the
conversation, ``global`` shares one space. Blocks and decay are per thread inside a
namespace; events are namespace-wide; the resident profile is installation-wide.
"""

from dataclasses import dataclass
from pathlib import PurePath
from typing import Literal

from ..errors import InvalidInput

SpaceMode = Literal["project", "session", "global"]
DEFAULT_PREFIX = "sg"


def space_for(
    mode: str,
    *,
    cwd: str,
    session_id: str,
    prefix: str = DEFAULT_PREFIX,
    global_name: str = "global",
) -> str:
    if mode == "project":
        return f"{prefix}:project:{normalize_path(cwd)}"
    if mode == "session":
        return f"{prefix}:session:{session_id}"
    if mode == "global":
        return f"{prefix}:global:{global_name}"
    raise InvalidInput(f"unknown memory space mode {mode!r} (project, session or global)")


def normalize_path(path: str) -> str:
    return str(PurePath(path.replace("\\", "/"))).rstrip("/") or "/"


def display_name(space: str) -> str:
    """The last path segment for project spaces, else the part after the mode."""
    tail = space.split(":", 2)[-1]
    return tail.rstrip("/").rsplit("/", 1)[-1] or tail


@dataclass(frozen=True)
class SpaceSummary:
    """How much one memory space holds: what ``chat`` announces and ``spaces`` lists."""

    namespace: str
    threads: int
    messages: int
    open_messages: int
    blocks: int
    events: int
    updated_at: str

    @property
    def display_name(self) -> str:
        return display_name(self.namespace)

    def holdings(self) -> str:
        """``12 messages (2 not yet sealed) in 3 sessions, 2 blocks, 5 events``, or ``empty``."""
        if not self.messages and not self.events:
            return "empty"
        unsealed = f" ({self.open_messages} not yet sealed)" if self.open_messages else ""
        return (
            f"{_count(self.messages, 'message')}{unsealed} in {_count(self.threads, 'session')}, "
            f"{_count(self.blocks, 'block')}, {_count(self.events, 'event')}"
        )


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"
