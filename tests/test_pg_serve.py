"""``serve`` and ``mcp`` on one PostgreSQL database: real processes, the private server.

One ``serve --db URL --processes 2`` answers a chat and the memory pages, its worker
process derives what a web process recorded, and neither its children's command lines nor
its pages show the URL's password. Then the issue's two-process test: two ``serve`` (each
with its own home, as two machines would have, and its own worker process) on one
database, a writer on each recording turns at the same time, and an MCP server on the
same database recording a turn and answering a search while they run: every turn is
recorded once, every job is claimed once and no event is made twice, and each server's
pages show the other's turns.
"""

import json
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import browser
import psycopg
import pytest
from browser import App, start, stop
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from test_mcp_server import COMMAND, call, poll
from test_pg_cli import PASSWORD, with_password
from test_serve_processes import WAIT_S, begin_chat, children, get, say, wait_for

FRIENDS = {  # each writer's turns: a friend's name, work and city
    "a": [("Ana", "baker", "Lisbon"), ("Bruno", "pilot", "Madrid"), ("Carla", "judge", "Oslo")],
    "b": [("Dmitri", "nurse", "Porto"), ("Elena", "chef", "Rome"), ("Farid", "tailor", "Cairo")],
}


@pytest.fixture(autouse=True)
def patient(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(browser, "TIMEOUT_S", WAIT_S)


def home_with_profile(root: Path) -> Path:
    """A home whose profile keeps one memory space for every directory (two servers in
    two folders share it), seals a block per turn and polls for jobs often (each worker
    competes for the others' jobs)."""
    settings = {"block_turn_size": 1, "job_poll_s": 0.5, "namespace_mode": "global"}
    profile = {"plugins": ["stratagate-memory"], "settings": {"stratagate-memory": settings}}
    (root / "home" / "profiles").mkdir(parents=True)
    (root / "home" / "profiles" / "default.yml").write_text(json.dumps(profile), "utf-8")
    return root / "home"


def serving(root: Path, url: str, processes: int) -> App:
    """``serve --db URL`` with its web processes and its worker process running."""
    home_with_profile(root)
    app = start(root, "--port", "0", "--db", url, "--processes", str(processes))
    wait_for(lambda: len(children(app, "web")) == processes - 1, "the web processes started")
    wait_for(lambda: len(children(app, "worker")) == 1, "the worker started")
    return app


def rows(url: str, sql: str) -> list[tuple[Any, ...]]:
    with psycopg.connect(url) as conn:
        return conn.execute(sql).fetchall()


def all_derived(url: str) -> Callable[[], bool]:
    """Every block ready and every job ended (none pending or running)."""

    def done() -> bool:
        blocks = rows(url, "SELECT DISTINCT processing_status FROM blocks")
        jobs = rows(url, "SELECT DISTINCT status FROM jobs")
        return blocks == [("ready",)] and {s for (s,) in jobs} <= {"succeeded", "skipped"}

    return done


def wait_derived(url: str) -> None:
    """Until ``all_derived``; a timeout names the blocks and jobs as they stand."""
    try:
        wait_for(all_derived(url), "every block derived")
    except pytest.fail.Exception:
        blocks = rows(url, "SELECT id, processing_status FROM blocks")
        jobs = rows(url, "SELECT kind, status, claims, last_error FROM jobs")
        pytest.fail(f"not all derived in {WAIT_S} s: blocks {blocks}; jobs {jobs}")


def command_lines(app: App) -> str:
    pids = [app.process.pid, *children(app, "web"), *children(app, "worker")]
    return " ".join(Path(f"/proc/{pid}/cmdline").read_bytes().decode() for pid in pids[1:])


def test_serve_on_a_url_answers_a_chat_and_the_memory_pages_and_derives(
    tmp_path: Path, pg_url: str
) -> None:
    url = with_password(pg_url)
    app = serving(tmp_path, url, processes=2)
    try:
        session = begin_chat(app)
        answered = say(app, session, "My sister Lena works as a nurse in Porto.")
        assert answered.status_code == 200
        wait_for(lambda: rows(url, "SELECT COUNT(*) FROM events") != [(0,)], "events derived")
        wait_derived(url)
        for page in ("/memory/", "/memory/events", "/memory/blocks", "/memory/jobs"):
            shown = get(app, page)
            assert shown.status_code == 200 and PASSWORD not in shown.text, page
        assert "Lena" in get(app, "/memory/events").text
        settings = get(app, "/memory/settings").text
        assert "postgresql://stratagate:***@/" in settings and PASSWORD not in settings
        assert PASSWORD not in command_lines(app)  # children get the URL in their environment
        assert not (app.home / "memory.db").exists()
    finally:
        assert stop(app) == 0
    assert PASSWORD not in app.stderr()


def write_turns(app: App, writer: str) -> list[str]:
    """One chat on ``app``, a turn per friend of ``writer``; what was said."""
    session = begin_chat(app)
    said = []
    for name, work, city in FRIENDS[writer]:
        text = f"My friend {name} works as a {work} in {city}."
        assert say(app, session, text).status_code == 200
        said.append(text)
    return said


@asynccontextmanager
async def mcp_server(root: Path, url: str) -> Any:
    """``stratagate mcp --db URL`` in a home and project folder of its own."""
    home_with_profile(root)
    (root / "project").mkdir()
    params = StdioServerParameters(
        command=COMMAND[0],
        args=[*COMMAND[1:], "--db", url],
        env=browser.server_env(root / "home"),
        cwd=str(root / "project"),
    )
    async with Client(params) as client:
        yield client


async def test_two_serves_and_an_mcp_server_share_one_database(tmp_path: Path, pg_url: str) -> None:
    url = with_password(pg_url)
    apps = [serving(tmp_path / name, url, processes=1) for name in ("a", "b")]
    try:
        async with mcp_server(tmp_path / "m", url) as mcp:
            with ThreadPoolExecutor(2) as pool:
                writes = pool.map(write_turns, apps, ("a", "b"))
                told = "My friend Greta works as a potter in Bergen."
                await call(mcp, "memory_record_turn", user=told, assistant="Noted.")
                said = [*(text for texts in writes for text in texts), told]
            wait_derived(url)
            found = await poll(mcp, "memory_search_events", "Dmitri nurse Porto")
            assert any("Dmitri" in json.dumps(hit) for hit in found["results"])
        users = rows(url, "SELECT content, COUNT(*) FROM messages WHERE role = 'user' GROUP BY 1")
        assert sorted(users) == sorted((text, 1) for text in said)
        assert rows(url, "SELECT id, claims FROM jobs WHERE claims <> 1") == []
        made_twice = "SELECT source_block_id, title FROM events GROUP BY 1, 2 HAVING COUNT(*) > 1"
        assert rows(url, made_twice) == []
        for app in apps:
            events = get(app, "/memory/events").text
            assert all(name in events for name in ("Ana", "Dmitri", "Greta")), events[-2000:]
    finally:
        for app in apps:
            stop(app)
