"""Session files rewritten without purged words: every line still JSON, everything else
kept, the rewrite made under the session's sidecar lock (the one an append takes)."""

import fcntl
import json
from pathlib import Path

import pytest

from stratagate_plugin.core.purge.words import Needles
from stratagate_plugin.harness import session_purge

LINES = [
    {"kind": "session", "id": "a", "profile": "default", "cwd": "/tmp", "created_at": "x"},
    {"kind": "message", "turn": 1, "message": {"role": "user", "content": "My plate is SUA12345."}},
    {
        "kind": "message",
        "turn": 1,
        "message": {"role": "tool", "content": json.dumps({"title": "Plate is sua12345"})},
    },
    {"kind": "message", "turn": 2, "message": {"role": "user", "content": "I hate cilantro."}},
]


def test_a_session_file_is_rewritten_under_its_lock_keeping_everything_else(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "a.jsonl"
    torn = '{"kind": "message", "turn": 3, "message": {"content": "SUA12345 and'
    path.write_text("".join(json.dumps(x) + "\n" for x in LINES) + torn, encoding="utf-8")
    written = []
    real = session_purge._replace_durably

    def checking(target: Path, text: str) -> None:
        lock = target.with_suffix(".lock")
        with lock.open("a+") as probe, pytest.raises(BlockingIOError):  # another open: refused
            fcntl.flock(probe.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        written.append(text)
        real(target, text)

    monkeypatch.setattr(session_purge, "_replace_durably", checking)
    needles = Needles(["SUA12345"])
    assert session_purge.sessions_holding(needles, tmp_path) == {str(path): 3}
    assert session_purge.rewrite_sessions(needles, tmp_path) == {str(path): 3}
    assert written and "sua12345" not in path.read_text(encoding="utf-8").lower()
    lines = path.read_text(encoding="utf-8").splitlines()
    parsed = [json.loads(line) for line in lines[:4]]
    assert parsed[0] == LINES[0] and parsed[3] == LINES[3]
    assert parsed[1]["message"]["content"] == "My plate is [purged]."
    assert json.loads(parsed[2]["message"]["content"]) == {"title": "Plate is [purged]"}
    assert lines[4].endswith("[purged] and")  # the torn line: tombstoned as text
    assert session_purge.sessions_holding(needles, tmp_path) == {}
