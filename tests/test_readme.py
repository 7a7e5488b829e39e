"""The README's transcript, run as it stands through the CLI in a fresh home (issue #14)."""

import re
import shlex
from pathlib import Path

import pytest

from stratagate_plugin.cli.main import main

README = Path(__file__).resolve().parents[1] / "README.md"
SECTION = "## Memory across sessions (offline agent, transcript)"


def transcript() -> list[tuple[list[str], str]]:
    """(arguments, expected stdout) for each ``$ stratagate …`` line of the transcript;
    indented ``…`` lines are comments."""
    text = README.read_text(encoding="utf-8")
    block = re.search(r"```text\n(.*?)```", text[text.index(SECTION) :], re.DOTALL)
    assert block is not None
    steps: list[tuple[list[str], list[str]]] = []
    for line in block.group(1).splitlines():
        if line.startswith("$ stratagate "):
            steps.append((shlex.split(line[2:])[1:], []))
        elif not line.startswith("   …"):
            steps[-1][1].append(line)
    return [(argv, "\n".join(lines) + "\n") for argv, lines in steps]


def test_readme_transcript_runs_literally_in_a_fresh_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    project = tmp_path / "studio"
    project.mkdir()
    monkeypatch.chdir(project)
    steps = transcript()
    assert len(steps) == 6 and not (tmp_path / "home").exists()
    for argv, expected in steps:
        assert main(argv) == 0, argv
        assert capsys.readouterr().out == expected, argv
