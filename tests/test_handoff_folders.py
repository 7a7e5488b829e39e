"""The hand-off folder ``serve`` keeps purge plans in: a SIGKILLed server's folder (words
a user never confirmed erasing) is removed by the next server, a live one's never."""

import os
import subprocess
import sys
from pathlib import Path

from stratagate_plugin.web.shell.handoff import Handoff, private_folder, remove_orphans


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_a_killed_servers_folder_goes_and_a_live_ones_stays(tmp_path: Path) -> None:
    dead = tmp_path / f"stratagate-serve-{_dead_pid()}-abc123"
    dead.mkdir()
    Handoff(dead).put({"words": ["my old address"]})
    live = tmp_path / f"stratagate-serve-{os.getppid()}-def456"
    live.mkdir()
    unrelated = tmp_path / "stratagate-serve-oldstyle"  # no pid in its name: left alone
    unrelated.mkdir()

    folder = private_folder(tmp_path)

    assert not dead.exists()
    assert live.is_dir() and unrelated.is_dir()
    assert folder.name.startswith(f"stratagate-serve-{os.getpid()}-")
    assert oct(folder.stat().st_mode & 0o777) == "0o700"


def test_orphans_are_reported_and_only_once(tmp_path: Path) -> None:
    dead = tmp_path / f"stratagate-serve-{_dead_pid()}-x1"
    dead.mkdir()
    assert remove_orphans(tmp_path) == [dead]
    assert remove_orphans(tmp_path) == []
