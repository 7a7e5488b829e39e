"""``serve --processes N``: real processes on loopback, each waited on by condition.

Which web process answers a connection is the kernel's choice; a test makes it one by
stopping the other (SIGSTOP: it accepts nothing until SIGCONT). The derivation worker
runs in a process of its own, woken by kicks only here (the profile's polls are an hour
apart), so a block it derives was derived because a web process kicked it.
"""

import json
import os
import signal
import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import browser
import httpx
import pytest
from browser import App, start, stop

from stratagate_plugin.core import shared_foreground

WAIT_S = 90.0  # a loaded CI machine starts a Python process slowly
SAME_ORIGIN = {"sec-fetch-site": "same-origin"}


@pytest.fixture(autouse=True)
def patient(monkeypatch: pytest.MonkeyPatch) -> None:
    """Four Python processes start here, not one: give ``serve`` as long as the rest."""
    monkeypatch.setattr(browser, "TIMEOUT_S", WAIT_S)


def test_two_web_processes_serve_one_memory_and_one_chat(tmp_path: Path) -> None:
    app = serving(tmp_path, "--processes", "2")
    try:
        [child] = children(app, "web")
        with paused(app.process.pid):  # the child answers alone
            session = begin_chat(app)  # a chat begun, not yet written
        with paused(child):  # the parent opens it, and records its first turn
            said = say(app, session, "the parrot is called Ferdinand")
            assert said.status_code == 200 and "Ferdinand" in said.text
        with paused(app.process.pid):  # the child sees the turn, and adds one
            assert "Ferdinand" in get(app, f"/chat/{session}").text
            assert say(app, session, "and the cat is called Mo").status_code == 200
        with paused(child):
            page = get(app, f"/chat/{session}").text
            assert "Ferdinand" in page and "called Mo" in page
        assert not app.session_file(session).with_suffix(".begun").exists()
    finally:
        assert stop(app) == 0


def test_settings_saved_through_one_process_are_shown_by_the_other(tmp_path: Path) -> None:
    app = serving(tmp_path, "--processes", "2")
    try:
        [child] = children(app, "web")
        with paused(child), client(app) as http:
            saved = http.post(
                "/memory/settings", data={"block_turn_size": "4"}, headers=SAME_ORIGIN
            )
            assert saved.status_code == 303, saved.text
        with paused(app.process.pid):
            assert 'name="block_turn_size" value="4"' in get(app, "/memory/settings").text
    finally:
        stop(app)


def test_the_worker_process_derives_what_a_web_process_recorded(tmp_path: Path) -> None:
    app = serving(tmp_path, "--processes", "2")
    try:
        session = begin_chat(app)
        say(app, session, "the parrot is called Ferdinand")  # one turn seals a block
        wait_for(lambda: blocks(app) == {"ready": 1}, "the worker derives the block")
    finally:
        stop(app)


def test_the_worker_and_every_web_process_share_the_databases_board(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The worker yields to the web processes' requests through the database's board
    (``core/shared_foreground.py``), so each of the three must hold a slot on one board."""
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path / "run"))
    (tmp_path / "run").mkdir()
    app = serving(tmp_path, "--processes", "2")
    try:
        family = {app.process.pid, *children(app, "web"), *children(app, "worker")}
        wait_for(lambda: board_pids(tmp_path / "run") == family, "all three joined one board")
    finally:
        stop(app)


def board_pids(run: Path) -> set[int] | None:
    """The processes holding slots on the one board in the runtime folder ``run``."""
    boards = list(run.glob("stratagate-*/*.busy"))
    if len(boards) != 1:
        return None
    slots = shared_foreground.SLOT.iter_unpack(boards[0].read_bytes())
    return {pid for pid, _, _ in slots if pid}


def test_a_killed_worker_is_started_again_and_loses_nothing(tmp_path: Path) -> None:
    app = serving(tmp_path, "--processes", "1")
    try:
        [worker] = children(app, "worker")
        os.kill(worker, signal.SIGKILL)
        session = begin_chat(app)
        say(app, session, "said while the worker was down")
        say(app, session, "and said once it was back")
        wait_for(lambda: blocks(app) == {"ready": 2}, "the new worker derives both blocks")
        assert children(app, "worker") != [worker]
        assert "derivation worker process exited (signal 9); starting it again" in app.stderr()
    finally:
        stop(app)


@pytest.mark.parametrize("how", [signal.SIGINT, signal.SIGTERM, signal.SIGKILL])
def test_no_process_outlives_serve(tmp_path: Path, how: signal.Signals) -> None:
    app = serving(tmp_path, "--processes", "3")
    family = children(app, "web") + children(app, "worker")
    assert len(family) == 3
    app.process.send_signal(how)
    app.process.wait(timeout=WAIT_S)
    wait_for(lambda: not any(alive(pid) for pid in family), "every child has ended")
    if how != signal.SIGKILL:
        assert app.process.returncode == 0


def serving(root: Path, *args: str) -> App:
    """``serve`` on a profile whose blocks are one turn and whose worker only wakes when
    kicked; returned once every child it starts is running."""
    home = root / "home"
    settings = {"block_turn_size": 1, "job_poll_s": 3600, "seal_idle_minutes": 10**6}
    profile = {"name": "default", "plugins": ["stratagate-memory"]}
    (home / "profiles").mkdir(parents=True)
    profile["settings"] = {"stratagate-memory": settings}  # type: ignore[assignment]
    (home / "profiles" / "default.yml").write_text(json.dumps(profile), encoding="utf-8")
    app = start(root, "--port", "0", *args)
    wanted = int(args[args.index("--processes") + 1]) if "--processes" in args else 1
    wait_for(lambda: len(children(app, "web")) == wanted - 1, "the web processes started")
    wait_for(lambda: len(children(app, "worker")) == 1, "the worker started")
    return app


def children(app: App, role: str) -> list[int]:
    """The running children of ``serve`` in ``role`` (``web`` or ``worker``)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            command = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        parent, state = int(stat.rsplit(")", 1)[1].split()[1]), stat.rsplit(")", 1)[1].split()[0]
        if parent == app.process.pid and state != "Z" and f"{role}:".encode() in b" ".join(command):
            found.append(int(entry.name))
    return sorted(found)


def alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


@contextmanager
def paused(pid: int) -> Iterator[None]:
    """The other processes answer alone: ``pid`` is stopped (it accepts nothing) meanwhile."""
    os.kill(pid, signal.SIGSTOP)
    try:
        yield
    finally:
        os.kill(pid, signal.SIGCONT)


def client(app: App) -> httpx.Client:
    """A connection per request: keep-alive would stay with the process that accepted it."""
    limits = httpx.Limits(max_keepalive_connections=0)
    return httpx.Client(base_url=app.url, trust_env=False, timeout=WAIT_S, limits=limits)


def get(app: App, path: str) -> httpx.Response:
    with client(app) as http:
        return http.get(path)


def begin_chat(app: App) -> str:
    with client(app) as http:
        response = http.post("/chat/new", headers=SAME_ORIGIN)
    assert response.status_code == 303, response.text
    return str(response.headers["location"]).rsplit("/", 1)[-1]


def say(app: App, session: str, text: str) -> httpx.Response:
    headers = {**SAME_ORIGIN, "hx-request": "true"}
    with client(app) as http:
        return http.post(f"/chat/{session}/messages", data={"text": text}, headers=headers)


def blocks(app: App) -> dict[str, int]:
    """The memory's blocks by processing status (read-only, beside the processes)."""
    path = app.home / "memory.db"
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as conn:
        rows = conn.execute("SELECT processing_status, COUNT(*) FROM blocks GROUP BY 1")
        return dict(rows.fetchall())


def wait_for(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + WAIT_S
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting until {what}")
        time.sleep(0.05)
