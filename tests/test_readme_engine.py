"""README's "Using the engine from Python" runs as written: the composed calls it shows
record a turn, derive it offline and find the event with its source."""

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def engine_example() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Using the engine from Python", 1)[1]
    found = re.search(r"```python\n(.*?)```", section, flags=re.S)
    assert found, "README shows the engine's example"
    return found.group(1)


def test_the_readme_example_finds_the_event_it_recorded(tmp_path: Path) -> None:
    script = engine_example().replace('"memory.db"', repr(str(tmp_path / "memory.db")))
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=300, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr
    assert "Kiln" in done.stdout and "msg_" in done.stdout, done.stdout
