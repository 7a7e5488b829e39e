"""A cold start says what it is doing before it loads the engine (issue 27: a first
``serve`` took 18 s with no output), and ``--version`` loads nothing to answer."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def python(code: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )


def test_version_answers_without_loading_the_engine() -> None:
    done = python(
        """
        import sys
        from stratagate_plugin.cli.entry import main
        code = main(["--version"])
        loaded = [m for m in sys.modules if m.startswith("stratagate_plugin.core")]
        print("core modules:", len(loaded))
        raise SystemExit(code)
        """
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("stratagate ") and "core modules: 0" in done.stdout


def test_serve_says_what_it_loads_before_loading_it(tmp_path: Path) -> None:
    """The line is printed while nothing of the engine is loaded yet; then the command runs
    (here it stops at once on a port that is taken)."""
    done = python(
        """
        import socket, sys
        import stratagate_plugin.cli.entry as entry
        taken = socket.socket()
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        real_print = print
        def watching(*args, **kwargs):
            loaded = any(m.startswith("stratagate_plugin.core") for m in sys.modules)
            real_print(*args, "(engine loaded)" if loaded else "(nothing loaded)", **kwargs)
        entry.print = watching
        raise SystemExit(entry.main(["serve", "--port", port]))
        """,
    )
    first = done.stderr.splitlines()[0]
    assert first == "loading the engine and the web app… (nothing loaded)"
    assert done.returncode == 2 and "stratagate: error:" in done.stderr


def test_help_of_serve_prints_no_loading_line() -> None:
    done = python(
        """
        from stratagate_plugin.cli.entry import main
        raise SystemExit(main(["serve", "--help"]))
        """
    )
    assert done.returncode == 0 and "loading" not in done.stderr
    assert "serve [-h] [--profile PROFILE]" in done.stdout
