"""The inputs scenarios write: ingest files, database copies, bad-model profiles.

Contents are ASCII and unique per turn, so a stored message can be matched to the turn it
came from by its text alone (whatever receipt scheme the importer uses).
"""

import json
import sqlite3
from collections import Counter
from pathlib import Path
from typing import Any


def message_entries(turns: int, threads: int, tag: str = "turn") -> list[dict[str, Any]]:
    """``turns`` user/assistant pairs spread over ``threads`` threads, minutes apart."""
    entries: list[dict[str, Any]] = []
    for i in range(turns):
        at = f"2025-03-{1 + (i // 600) % 28:02d}T{(i // 60) % 10 + 8:02d}:{i % 60:02d}:00Z"
        thread = f"{tag}-thread-{i % threads}"
        user = f"{tag} {i}: yesterday I ordered {i % 7 + 1} blue kettles from the Leeds shop"
        reply = f"Noted for {tag} {i}: {i % 7 + 1} kettles, Leeds."
        entries.append({"thread": thread, "role": "user", "content": user, "at": at})
        entries.append({"thread": thread, "role": "assistant", "content": reply, "at": at})
    return entries


def write_messages(path: Path, turns: int, threads: int, tag: str = "turn") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(message_entries(turns, threads, tag)))
    return path


def file_message_counts(path: Path) -> Counter[tuple[str, str, str]]:
    """(thread, role, content) of each message an ingest file holds."""
    entries = json.loads(path.read_text())
    return Counter((e["thread"], e["role"], e["content"]) for e in entries)


def copy_database(source: Path, target: Path) -> Path:
    """A consistent copy through SQLite's backup API (no stray ``-wal`` to carry along)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    src, dst = sqlite3.connect(source), sqlite3.connect(target)
    try:
        src.backup(dst)
    finally:
        dst.close()
        src.close()
    return target


def write_profile(home: Path, name: str, base_url: str, timeout_s: float) -> str:
    """A profile under ``home`` whose chat model (and so the memory's model) is ``base_url``."""
    folder = home / "profiles"
    folder.mkdir(parents=True, exist_ok=True)
    model = {"base_url": base_url, "model": f"model-{name}", "timeout_s": timeout_s}
    lines = [
        "plugins: [stratagate-memory]",
        "model:",
        *(f"  {key}: {json.dumps(value)}" for key, value in model.items()),
    ]
    (folder / f"{name}.yml").write_text("\n".join(lines) + "\n")
    return name
