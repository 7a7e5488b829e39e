"""Purged words erased from the harness's session files (``sessions/<id>.jsonl``).

A session file keeps every message of a chat as the harness saw it, so a purge of memory
must rewrite it too. Each file holding the words is rewritten whole: every string of every
line (messages, tool results, folded turns) with the words tombstoned, written to a temp
file, fsynced and moved over the original, all while holding ``flock(LOCK_EX)`` on the
session's sidecar ``<id>.lock`` (the lock a turn being appended takes, so the next append
opens the new file) and on the session file itself. A torn last line (a crash mid-append)
holding the words is tombstoned as text.
"""

import fcntl
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol

from .sessions import sessions_dir


class Needles(Protocol):
    """The purged words as the engine finds and tombstones them (``core.purge.words``)."""

    def byte_hits(self, data: bytes) -> int: ...
    def holds(self, text: str) -> bool: ...
    def scrub(self, text: str) -> str: ...
    def scrub_value(self, value: Any) -> Any: ...


def sessions_holding(needles: Needles, folder: Path | None = None) -> dict[str, int]:
    """Each session file whose bytes hold the words, with how many times."""
    found = {}
    for path in _session_files(folder):
        hits = needles.byte_hits(path.read_bytes())
        if hits:
            found[str(path)] = hits
    return found


def rewrite_sessions(needles: Needles, folder: Path | None = None) -> dict[str, int]:
    """Rewrite every session file holding the words (a temp copy left by a rewrite that
    was killed is removed first); the files rewritten, with the hits each held before."""
    where = folder or sessions_dir()
    for stale in where.glob(".*.purging") if where.is_dir() else []:
        stale.unlink(missing_ok=True)
    held = sessions_holding(needles, folder)
    for name in held:
        rewrite_session(Path(name), needles)
    return held


def rewrite_session(path: Path, needles: Needles) -> None:
    with _session_locked(path):
        text = path.read_bytes().decode("utf-8", errors="replace")
        lines = [_scrubbed_line(line, needles) for line in text.splitlines(keepends=True)]
        _replace_durably(path, "".join(lines))


@contextmanager
def _session_locked(path: Path) -> Iterator[None]:
    """The session's sidecar lock, then the file's own, both exclusive."""
    with path.with_suffix(".lock").open("a+") as sidecar, path.open("rb") as own:
        fcntl.flock(sidecar.fileno(), fcntl.LOCK_EX)
        fcntl.flock(own.fileno(), fcntl.LOCK_EX)
        yield


def _scrubbed_line(line: str, needles: Needles) -> str:
    if not needles.holds(line):
        return line
    end = "\n" if line.endswith("\n") else ""
    try:
        entry = json.loads(line)
    except json.JSONDecodeError:
        return needles.scrub(line)
    scrubbed = json.dumps(needles.scrub_value(entry), ensure_ascii=False)
    return (scrubbed if not needles.holds(scrubbed) else needles.scrub(scrubbed)) + end


def _replace_durably(path: Path, text: str) -> None:
    temp = path.with_name(f".{path.name}.purging")
    with temp.open("w", encoding="utf-8") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temp, path)
    directory = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)


def _session_files(folder: Path | None) -> list[Path]:
    """The session files, and any temp copy a killed rewrite left."""
    where = folder or sessions_dir()
    if not where.is_dir():
        return []
    return sorted([*where.glob("*.jsonl"), *where.glob(".*.purging")])


def session_files_of(thread_ids: list[str], folder: Path | None = None) -> list[Path]:
    """The session files named after ``thread_ids`` (a chat session is a memory thread)."""
    where = folder or sessions_dir()
    return [where / f"{key}.jsonl" for key in thread_ids if (where / f"{key}.jsonl").is_file()]


def delete_session_files(paths: list[Path]) -> list[str]:
    """Delete each file under its locks (no turn is being appended to it)."""
    deleted = []
    for path in paths:
        with _session_locked(path):
            path.unlink(missing_ok=True)
        deleted.append(str(path))
    return deleted
