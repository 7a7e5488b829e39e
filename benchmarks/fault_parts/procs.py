"""Running the real ``stratagate`` CLI (and small writer scripts) as child processes.

Every child gets a ``timeout`` so a hang is counted instead of blocking the run, runs the
code of this checkout (``PYTHONPATH`` is the repository root), and sees no ``STRATAGATE_*``
or proxy variable from the caller's shell: only what the scenario sets.
"""

import os
import signal
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CLI = (sys.executable, "-m", "stratagate_plugin.cli.main")
PROXY_VARS = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")
HANG = -999  # the return code recorded when a child outlived its timeout and was killed


@dataclass(frozen=True)
class Outcome:
    """How a child ended: its return code (``HANG`` when it timed out) and its output."""

    returncode: int
    stdout: str
    stderr: str
    seconds: float

    @property
    def hung(self) -> bool:
        return self.returncode == HANG

    @property
    def traceback(self) -> bool:
        return "Traceback" in self.stderr

    def crashed(self, allowed: Sequence[int] = (0, 1, 2)) -> bool:
        """A Python crash, a signal, a hang: any return code the CLI does not promise."""
        return self.returncode not in allowed

    def excerpt(self, lines: int = 8) -> str:
        """The end of stderr: where a traceback names its exception."""
        return "\n".join(self.stderr.strip().splitlines()[-lines:])


def child_env(home: Path, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The caller's environment minus ``STRATAGATE_*`` and proxies, plus ``home`` and ``extra``."""
    env = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith("STRATAGATE_") and name not in PROXY_VARS
    }
    env.update(STRATAGATE_HOME=str(home), PYTHONPATH=str(REPO), NO_PROXY="*")
    env.update(extra or {})
    return env


def run(
    args: Sequence[str], env: Mapping[str, str], timeout: float, cwd: Path | None = None
) -> Outcome:
    """Run to completion (or to ``timeout``, then kill and report ``HANG``)."""
    started = time.perf_counter()
    try:
        done = subprocess.run(
            list(args), env=dict(env), cwd=cwd, capture_output=True, text=True,
            timeout=timeout, errors="replace",
        )  # fmt: skip
    except subprocess.TimeoutExpired as expired:
        return Outcome(HANG, _text(expired.stdout), _text(expired.stderr), timeout)
    return Outcome(done.returncode, done.stdout, done.stderr, time.perf_counter() - started)


def cli(
    *args: str, env: Mapping[str, str], timeout: float = 120, cwd: Path | None = None
) -> Outcome:
    return run([*CLI, *args], env, timeout, cwd)


def _text(data: bytes | str | None) -> str:
    if isinstance(data, bytes):
        return data.decode(errors="replace")
    return data or ""


@dataclass(frozen=True)
class Killed:
    """A child sent SIGKILL ``delay`` s after it opened its database (unless it had exited)."""

    delay: float
    exited_first: bool
    stdout: str
    stderr: str


def kill_at(
    args: Sequence[str], env: Mapping[str, str], delay: float, folder: Path, watch: Path
) -> Killed:
    """Start ``args``; SIGKILL it ``delay`` s after ``watch`` (its database's ``-wal``)
    appears, so the kill falls in the same stretch of the child's work however long its
    imports took on a busy machine. Output goes to files: every line the child flushed
    before it died is kept (a pipe would need a reader thread)."""
    out, err = folder / "killed.out", folder / "killed.err"
    with out.open("wb") as stdout, err.open("wb") as stderr:
        child = subprocess.Popen(list(args), env=dict(env), stdout=stdout, stderr=stderr)
        while child.poll() is None and not watch.exists():
            time.sleep(0.001)
        opened = time.perf_counter()
        while child.poll() is None and time.perf_counter() - opened < delay:
            time.sleep(min(0.002, max(0.0, delay - (time.perf_counter() - opened))))
        exited_first = child.poll() is not None
        if not exited_first:
            child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
    return Killed(delay, exited_first, _read(out), _read(err))


def _read(path: Path) -> str:
    return path.read_bytes().decode(errors="replace")


def observe(
    args: Sequence[str],
    env: Mapping[str, str],
    watch: Path,
    timeout: float,
    cwd: Path | None = None,
) -> tuple[float, float, Outcome]:
    """An unkilled run: when ``watch`` (the database's ``-wal`` file) first appeared, when
    the child exited, and how. Kill points are drawn inside that window: before it the
    child is still importing modules and a kill tells nothing about the database."""
    started = time.perf_counter()
    child = subprocess.Popen(
        list(args), env=dict(env), cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    opened = None
    while child.poll() is None and time.perf_counter() - started < timeout:
        if opened is None and watch.exists():
            opened = time.perf_counter() - started
        time.sleep(0.002)
    if child.poll() is None:
        child.kill()
    _, stderr = child.communicate(timeout=30)
    ended = time.perf_counter() - started
    code = child.returncode if ended < timeout else HANG
    outcome = Outcome(code, "", _text(stderr), ended)
    return (opened if opened is not None else 0.0), ended, outcome
