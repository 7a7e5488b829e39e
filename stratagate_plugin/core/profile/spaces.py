"""Memory spaces (spec §12.1): which namespace a conversation's memories live in.

``project`` (default) keys memory by the working directory, ``session`` by the
conversation, ``global`` shares one space. Blocks and decay are per thread inside a
namespace; events are namespace-wide; the resident profile is installation-wide.
"""

from pathlib import PurePath
from typing import Literal

from ..errors import InvalidInput

SpaceMode = Literal["project", "session", "global"]
DEFAULT_PREFIX = "sg"


def namespace_for(
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


def display_name(namespace: str) -> str:
    """The last path segment for project spaces, else the part after the mode."""
    tail = namespace.split(":", 2)[-1]
    return tail.rstrip("/").rsplit("/", 1)[-1] or tail
