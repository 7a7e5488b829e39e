"""Sessions as append-only JSON lines under ``$STRATAGATE_HOME/sessions/<id>.jsonl``.

Line kinds: one ``session`` header, then per turn its ``message`` lines and one ``turn`` line.
A turn is written in one append followed by flush and fsync, so it survives the process
exiting right after; a torn last line (a crash mid-write) is skipped when reading.

Several writers may share a session (the web app, ``chat --session S`` runs, each its own
process). Every write holds an exclusive lock on the sidecar ``<id>.lock``, which also keeps
the last turn number handed out: a turn's number is reserved under that lock when the turn
starts (``begin_turn``), so two writers never number a turn alike, and the in-memory
session is refreshed from the file first, so its history includes the others' turns.

A session begun and not yet written (the web chat's "new conversation", before its first
message) is announced in a sidecar ``<id>.begun`` holding its header: every process serving
the same home (``serve --processes``) then opens it as the one that began it, with its
memory space; the first turn's write removes it.
"""

import fcntl
import json
import logging
import os
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel

from .chat import ChatMessage
from .clock import iso, parse_iso, utc_now
from .errors import HostError
from .home import harness_home
from .ids import short_tag
from .text import valid_text
from .types import HostTurn, Session

logger = logging.getLogger(__name__)

_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


class TurnRecord(BaseModel):
    """How a turn ended, and its folded form (None when folding dropped it)."""

    turn: int
    outcome: Literal["completed", "failed"]
    error: str | None = None
    started_at: datetime
    ended_at: datetime
    folded: HostTurn | None = None


def sessions_dir() -> Path:
    return harness_home() / "sessions"


def session_path(session_id: str) -> Path:
    if not _ID.fullmatch(session_id):  # match() would let a trailing newline through
        raise HostError(f"invalid session id {session_id!r}: use letters, digits, '.', '_' or '-'")
    return sessions_dir() / f"{session_id}.jsonl"


def new_session_id() -> str:
    return f"{utc_now():%Y%m%d-%H%M%S}-{short_tag(6)}"


def open_session(session_id: str | None, profile: str, cwd: Path) -> Session:
    """The stored session ``session_id``, else a new one (written with its first turn)."""
    path = session_path(session_id or new_session_id())
    if _has_content(path):
        return read_session(path)
    return Session(id=path.stem, profile=profile, cwd=cwd.resolve(), created_at=utc_now())


def refresh_session(session: Session) -> None:
    """Bring ``session`` up to its file: the turns other writers appended since it was read."""
    path = session_path(session.id)
    if not _has_content(path):
        return
    stored = read_session(path)
    session.history[:] = stored.history
    session.completed[:] = stored.completed
    session.turns = max(session.turns, stored.turns)


def begin_turn(session: Session) -> int:
    """Reserve the session's next turn number, refreshing ``session`` from its file first.

    Under the session's lock, so a number is never handed out twice, whichever process
    asks; a turn that never ends (a crash) leaves a gap, never a repeat."""
    with _locked(session.id) as lock:
        refresh_session(session)
        number = max(session.turns, _reserved(lock)) + 1
        _reserve(lock, number)
    session.turns = number
    return number


def read_session(path: Path) -> Session:
    session: Session | None = None
    for entry in _entries(path):
        if entry.get("kind") == "session":
            session = _header_session(entry)
        elif session is not None and entry.get("kind") == "message":
            session.history.append(ChatMessage.model_validate(entry["message"]))
        elif session is not None and entry.get("kind") == "turn":
            session.turns = max(session.turns, int(entry["turn"]))
            if entry.get("folded"):
                session.completed.append(HostTurn.model_validate(entry["folded"]))
    if session is None:
        raise HostError(f"session file {path} has no session header")
    return session


def record_turn(session: Session, messages: Sequence[ChatMessage], record: TurnRecord) -> None:
    """Append the turn durably under the session's lock, after refreshing the in-memory
    session from the file (other writers' turns come before this one), then add it."""
    path = session_path(session.id)
    with _locked(session.id):
        refresh_session(session)
        begun = not _has_content(path)
        lines = [_header(session)] if begun else []
        lines += [{"kind": "message", "turn": record.turn, "message": _dump(m)} for m in messages]
        lines.append({"kind": "turn", **record.model_dump(mode="json")})
        text = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)
        _append_durably(path, valid_text(text))  # the U+FFFD rule: a stray surrogate can't lose it
        if begun:
            _begun_path(session.id).unlink(missing_ok=True)
    session.history.extend(messages)
    session.turns = max(session.turns, record.turn)
    if record.folded is not None:
        session.completed.append(record.folded)


def announce_session(session: Session) -> None:
    """Announce a session begun and not yet written (see the module's docstring)."""
    path = _begun_path(session.id)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".begun-partial")
    partial.write_text(json.dumps(_header(session), ensure_ascii=False), encoding="utf-8")
    partial.replace(path)  # whole or absent, for a process reading it meanwhile


def begun_session(session_id: str) -> Session | None:
    """The session announced as ``session_id`` and not yet written, else None."""
    try:
        entry = json.loads(_begun_path(session_id).read_text(encoding="utf-8"))
        return _header_session(entry) if isinstance(entry, dict) else None
    except (OSError, ValueError, KeyError):
        return None


def _begun_path(session_id: str) -> Path:
    return session_path(session_id).with_suffix(".begun")


@contextmanager
def _locked(session_id: str) -> Iterator[Any]:
    """The session's sidecar lock file, held exclusively (released on close, even by a crash)."""
    path = session_path(session_id).with_suffix(".lock")
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a+", encoding="utf-8") as lock:
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
        yield lock


def _reserved(lock: Any) -> int:
    """The last turn number the lock file handed out (0 when none or unreadable)."""
    lock.seek(0)
    text = lock.read().strip()
    return int(text) if text.isdigit() else 0


def _reserve(lock: Any, number: int) -> None:
    lock.seek(0)
    lock.truncate()
    lock.write(f"{number}\n")
    lock.flush()


def _has_content(path: Path) -> bool:
    try:
        return path.stat().st_size > 0
    except FileNotFoundError:
        return False


def _header(session: Session) -> dict[str, Any]:
    header = {
        "kind": "session",
        "id": session.id,
        "profile": session.profile,
        "cwd": str(session.cwd),
        "created_at": iso(session.created_at),
    }
    if session.memory_space:
        header["memory_space"] = session.memory_space
    return header


def _header_session(entry: dict[str, Any]) -> Session:
    created = parse_iso(entry["created_at"])
    session = Session(entry["id"], entry["profile"], Path(entry["cwd"]), created)
    space = entry.get("memory_space")
    session.memory_space = space if isinstance(space, str) and space else None
    return session


def _dump(message: ChatMessage) -> dict[str, Any]:
    return message.model_dump(mode="json", exclude_none=True, exclude_defaults=True)


def _entries(path: Path) -> Iterator[dict[str, Any]]:
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            try:
                entry = json.loads(line)
            except json.JSONDecodeError:
                logger.warning("%s:%d: skipping an unreadable line", path, number)
                continue
            if isinstance(entry, dict):
                yield entry


def _append_durably(path: Path, text: str) -> None:
    created = not _has_content(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as file:
        file.write(text)
        file.flush()
        os.fsync(file.fileno())
    if created:
        _fsync_directory(path.parent)


def _fsync_directory(directory: Path) -> None:
    """Make the new file's directory entry durable too (POSIX only)."""
    if os.name != "posix":
        return
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class SessionSummary(BaseModel):
    """One line of a sessions list: the id, when it began, its first words, its turns."""

    id: str
    created_at: datetime
    title: str
    turns: int


def list_sessions(limit: int = 50) -> list[SessionSummary]:
    """The ``limit`` most recently written sessions, newest first (unreadable files skipped:
    one damaged file must not hide the others)."""
    directory = sessions_dir()
    if not directory.is_dir():
        return []
    paths = sorted(directory.glob("*.jsonl"), key=lambda p: p.stat().st_mtime, reverse=True)
    found = []
    for path in paths[:limit]:
        try:
            session = read_session(path)
        except (HostError, OSError, ValueError) as error:
            logger.warning("skipping session file %s: %s", path, error)
            continue
        first = session.completed[0].user if session.completed else ""
        title = " ".join(first.split())[:80] or session.id
        found.append(
            SessionSummary(
                id=session.id, created_at=session.created_at, title=title, turns=session.turns
            )
        )
    return found
