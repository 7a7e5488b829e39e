"""The command line as a person meets it: --version, help, pipes, options in any place."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from stratagate_plugin.cli.main import main


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out.startswith("stratagate 0.")


def test_help_is_written_for_users(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    assert "remembers across sessions" in out and "examples:" in out
    assert "error translation" not in out and "façade" not in out


def test_plugin_options_after_the_action(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "plugin", "list", "--profile", "other")
    assert code == 0 and "stratagate-memory" in out
    code, out, _ = run(capsys, "plugin", "add", "stratagate-memory", "--profile", "other")
    assert code == 0 and "in profile other" in out
    code, out, _ = run(capsys, "plugin", "--profile", "third", "list")
    assert code == 0


def many_blocks(tmp_path: Path, turns: int = 300) -> Path:
    entries = []
    for i in range(turns):
        at = f"2026-01-01T10:{i % 60:02d}:00+00:00"
        entries.append({"thread": "t", "role": "user", "content": f"fact {i} " * 20, "at": at})
        entries.append({"thread": "t", "role": "assistant", "content": "ok", "at": at})
    file = tmp_path / "many.json"
    file.write_text(json.dumps(entries))
    db = tmp_path / "m.db"
    assert main(["ingest", str(file), "--db", str(db), "--block-turns", "1"]) == 0
    return db


def test_output_into_a_closed_pipe_is_quiet(tmp_path: Path) -> None:
    db = many_blocks(tmp_path)
    env = {**os.environ, "STRATAGATE_HOME": str(tmp_path)}
    command = [sys.executable, "-m", "stratagate_plugin.cli.main", "blocks", "--json"]
    with subprocess.Popen(
        [*command, "--db", str(db)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
    ) as producer:
        assert producer.stdout is not None and producer.stderr is not None
        first = producer.stdout.read(100)  # like `| head -c 100`: read a little, hang up
        producer.stdout.close()
        err = producer.stderr.read().decode()
        code = producer.wait(timeout=60)
    assert code == 0 and first
    assert "Broken pipe" not in err and "Traceback" not in err and "Exception" not in err


@pytest.mark.parametrize("level", ["L9", "banana", "-1", "6", ""])
def test_expand_refuses_unknown_levels(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], level: str
) -> None:
    db = str(tmp_path / "m.db")
    run(capsys, "demo", "--db", db)
    _, out, _ = run(capsys, "blocks", "--db", db, "--json", "--space", "demo")
    block = json.loads(out)[0]["id"]
    code, _, err = run(capsys, "expand", block, level, "--db", db)
    assert code == 2 and "unknown level" in err and "L0..L5" in err


def test_expand_prints_the_text_at_the_new_level(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(tmp_path / "m.db")
    run(capsys, "demo", "--db", db)
    _, out, _ = run(capsys, "blocks", "--db", db, "--json", "--space", "demo")
    block = json.loads(out)[0]["id"]
    code, out, _ = run(capsys, "expand", block, "raw", "--db", db)
    assert code == 0 and "now at L5" in out
    assert len(out.splitlines()) > 3  # the raw transcript follows the status line
