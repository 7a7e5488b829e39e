"""The CLI: ingest, blocks, expand, demo; user mistakes give one line and exit 2."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from stratagate_plugin.cli.main import main


def write_messages(path: Path, turns: int, thread: str = "s1") -> Path:
    entries: list[dict[str, object]] = [
        {"thread": thread, "role": "system", "content": "be brief", "at": "2025-01-01T09:00:00Z"}
    ]
    for i in range(turns):
        at = f"2025-01-01T10:{i:02d}:00+02:00"
        entries.append({"thread": thread, "role": "user", "content": f"question {i}", "at": at})
        entries.append(
            {
                "thread": thread,
                "role": "assistant",
                "content": f"answer {i}",
                "at": at,
                "tool_calls": [{"name": "lookup", "arguments": {"q": i}, "result": "ok"}],
            }
        )
    path.write_text(json.dumps(entries))
    return path


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_ingest_then_blocks_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db, file = str(tmp_path / "m.db"), write_messages(tmp_path / "msgs.json", 7)
    code, out, _ = run(capsys, "ingest", str(file), "--db", db, "--block-turns", "3")
    assert code == 0 and "recorded 7 turns" in out and "sealed 3 blocks" in out  # tail: turn 7
    code, out, _ = run(capsys, "ingest", str(file), "--db", db)
    assert "recorded 0 turns (7 already present)" in out and "sealed 0 blocks" in out
    code, out, _ = run(capsys, "blocks", "--db", db, "--json")
    rows = json.loads(out)
    assert [(r["turns"], r["status"], r["level"]) for r in rows] == [
        ([1, 3], "pending", 5),
        ([4, 6], "pending", 5),
        ([7, 7], "pending", 5),
    ]
    assert rows[0]["tokens"]["L3"] <= rows[0]["tokens"]["L4"] <= rows[0]["tokens"]["L5"]


def test_blocks_table_and_expand(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = str(tmp_path / "m.db")
    code, out, _ = run(capsys, "demo", "--db", db)
    assert code == 0 and "ready" in out and "open tail: 2 messages" in out
    code, out, _ = run(capsys, "blocks", "--db", db, "--json", "--space", "demo")
    first = json.loads(out)[0]
    code, out, _ = run(capsys, "expand", first["id"], "L3", "--db", db)
    assert code == 0 and "now at L3" in out
    code, out, _ = run(capsys, "blocks", "--db", db, "--space", "demo", "--thread", "demo-session")
    assert "L3" in out and first["id"] in out


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "is not valid JSON"),
        ('{"a": 1}', "must hold a JSON list"),
        (
            '[{"thread": "t", "role": "robot", "content": "x", "at": "2025-01-01T00:00:00Z"}]',
            "message 0: role",
        ),
        (
            '[{"thread": "t", "role": "assistant", "content": "x", "at": "2025-01-01T00:00:00Z"}]',
            "has messages but no user message",
        ),
    ],
)
def test_bad_ingest_files_give_one_clear_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, message: str
) -> None:
    file = tmp_path / "bad.json"
    file.write_text(content)
    code, _out, err = run(capsys, "ingest", str(file), "--db", str(tmp_path / "m.db"))
    assert code == 2 and message in err and err.count("\n") == 1


def test_errors_are_not_tracebacks_in_a_real_process(tmp_path: Path) -> None:
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "stratagate_plugin.cli.main",
            "expand",
            "blk_nope",
            "L5",
            "--db",
            str(tmp_path / "m.db"),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert result.stderr.strip() == "stratagate: error: no block with id 'blk_nope'"
    missing = subprocess.run(
        [sys.executable, "-m", "stratagate_plugin.cli.main", "ingest", str(tmp_path / "none.json")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert missing.returncode == 2 and "Traceback" not in missing.stderr
