"""Several writers on one session (the web app, ``chat --session`` runs, MCP
``memory_record_turn``): every acknowledged turn is in memory exactly once and in the
session file under a number of its own, also after a restart; session files written by
older versions (turn numbers repeated, receipts keyed by number alone) lose nothing and
record nothing twice."""

import asyncio
import json
import sqlite3
import subprocess
import sys
import threading
from collections import Counter
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml
from browser import server_env

from stratagate_plugin.core.clock import iso, utc_now
from stratagate_plugin.core.memory import StrataGate
from stratagate_plugin.core.records import TurnReceipt
from stratagate_plugin.harness.agent import Agent
from stratagate_plugin.harness.chat import ScriptedChatModel
from stratagate_plugin.harness.sessions import (
    begin_turn,
    open_session,
    refresh_session,
    session_path,
)
from stratagate_plugin.memory_plugin.catch_up import legacy_receipt_of, receipt_of
from stratagate_plugin.memory_plugin.runtime import MemoryRuntime
from tests.test_mcp_server import call, connected
from tests.test_plugin_e2e import make_host, runtime_of
from tests.webapp import new_chat, say, web_app

CLI = [sys.executable, "-m", "stratagate_plugin.cli.main", "chat"]


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home whose default profile has memory (blocks of 50 turns), and a project folder
    that every writer runs in (one memory space)."""
    profiles = tmp_path / "home" / "profiles"
    profiles.mkdir(parents=True)
    profile = {
        "plugins": ["stratagate-memory"],
        "settings": {"stratagate-memory": {"block_turn_size": 50}},
    }
    (profiles / "default.yml").write_text(yaml.safe_dump(profile), encoding="utf-8")
    (tmp_path / "project").mkdir()
    monkeypatch.chdir(tmp_path / "project")
    return tmp_path


def cli_turn(root: Path, session_id: str, text: str) -> None:
    """One ``stratagate chat --session S --message TEXT`` run, acknowledged (exit 0)."""
    done = subprocess.run(
        [*CLI, "--session", session_id, "--message", text],
        cwd=root / "project",
        env=server_env(root / "home"),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr


def memory_users(root: Path, session_id: str) -> list[str]:
    """The user messages memory holds for the session, in order."""
    raw = sqlite3.connect(root / "home" / "memory.db")
    try:
        rows = raw.execute(
            "SELECT content FROM messages WHERE thread_id = ? AND role = 'user' ORDER BY position",
            (session_id,),
        ).fetchall()
    finally:
        raw.close()
    return [str(content) for (content,) in rows]


def file_turns(session_id: str) -> list[tuple[int, str]]:
    """The session file's turns: (number, user text), in file order."""
    lines = session_path(session_id).read_text(encoding="utf-8").splitlines()
    entries = [json.loads(line) for line in lines]
    turns = [entry for entry in entries if entry["kind"] == "turn"]
    return [(int(turn["turn"]), str(turn["folded"]["user"])) for turn in turns]


def assert_each_once(root: Path, session_id: str, texts: list[str], host_texts: list[str]) -> None:
    """Every text in memory exactly once; the host's turns in the file, numbered uniquely."""
    assert Counter(memory_users(root, session_id)) == Counter(texts)
    numbered = file_turns(session_id)
    assert sorted(text for _, text in numbered) == sorted(host_texts)
    numbers = [number for number, _ in numbered]
    assert len(set(numbers)) == len(numbers), numbers


async def test_web_cli_and_mcp_writers_on_one_session_lose_nothing(root: Path) -> None:
    web = ["alpha: the kiln is in the garage", "gamma: Ana likes figs", "delta: the van is red"]
    cli = ["beta: Bo plays the oboe", "epsilon: rent is due Monday"]
    mcp = "zeta: the bakery opens at six"
    async with web_app(root / "project") as (_app, _host, client):
        sid = await new_chat(client)
        assert (await say(client, sid, web[0])).status_code == 200
        cli_turn(root, sid, cli[0])
        assert (await say(client, sid, web[1])).status_code == 200
        async with connected(root) as mcp_client:
            await call(mcp_client, "memory_record_turn", user=mcp, assistant="ok", session=sid)
        cli_turn(root, sid, cli[1])
        assert cli[1] in (await client.get(f"/chat/{sid}")).text  # the open page refreshes
        assert (await say(client, sid, web[2])).status_code == 200
        everything = [*web, *cli, mcp]
        assert_each_once(root, sid, everything, [*web, *cli])
        page = await client.get(f"/chat/{sid}")
        assert all(text in page.text for text in [*web, *cli])  # the page shows every writer's
    async with web_app(root / "project") as (_app, _host, client):  # a restart catches up
        assert (await client.get(f"/chat/{sid}")).status_code == 200
    cli_turn(root, sid, "eta: the last word")
    assert_each_once(
        root, sid, [*everything, "eta: the last word"], [*web, *cli, "eta: the last word"]
    )


async def created(db: Path) -> None:
    """The database made before the writers start: two processes migrating a new file at
    the same moment can both apply one migration (a separate problem, not this test's)."""
    await (await StrataGate.open(db)).close()


def test_two_cli_processes_on_one_session_number_every_turn_once(root: Path) -> None:
    sid = "shared-1"
    asyncio.run(created(root / "home" / "memory.db"))  # see created()
    start = threading.Barrier(2, timeout=60)
    failures: list[BaseException] = []

    def writer(name: str) -> None:
        try:
            start.wait()
            for i in range(6):
                cli_turn(root, sid, f"{name} says fact number {i}")
        except BaseException as error:  # reported by the main thread
            failures.append(error)

    threads = [threading.Thread(target=writer, args=(name,)) for name in ("ann", "bob")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=600)
    assert not failures, failures
    texts = [f"{name} says fact number {i}" for name in ("ann", "bob") for i in range(6)]
    assert_each_once(root, sid, texts, texts)
    assert sorted(number for number, _ in file_turns(sid)) == list(range(1, 13))


def test_a_turn_number_is_reserved_under_the_lock_and_a_session_refreshes(root: Path) -> None:
    mine = open_session("s1", "t", root)
    theirs = open_session("s1", "t", root)
    assert (begin_turn(mine), begin_turn(theirs), begin_turn(mine)) == (1, 2, 3)
    assert open_session("s1", "t", root).turns == 0  # nothing written to the session file yet
    refresh_session(theirs)
    assert theirs.turns == 2


def old_session_file(session_id: str, cwd: Path, turns: list[tuple[int, str]]) -> None:
    """A session file as versions before the lock wrote it (numbers may repeat)."""
    created = utc_now() - timedelta(hours=1)
    lines: list[dict[str, Any]] = [
        {"kind": "session", "id": session_id, "profile": "t", "cwd": str(cwd),
         "created_at": iso(created)},
    ]  # fmt: skip
    for index, (number, user) in enumerate(turns):
        at = iso(created + timedelta(minutes=index))
        folded = {"session_id": session_id, "turn": number, "user": user,
                  "assistant": f"noted {index}", "started_at": at, "ended_at": at}  # fmt: skip
        lines.append(
            {"kind": "message", "turn": number, "message": {"role": "user", "content": user}}
        )
        lines.append({"kind": "turn", "turn": number, "outcome": "completed", "started_at": at,
                      "ended_at": at, "folded": folded})  # fmt: skip
    path = session_path(session_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")


async def record_legacy(runtime: MemoryRuntime, session_id: str, cwd: Path, upto: int) -> None:
    """What an older version recorded: the first ``upto`` turns under number-only receipts."""
    session = open_session(session_id, "t", cwd)
    for turn in session.completed[:upto]:
        await runtime.memory.blocks.append_turn(
            runtime.session_space(session),
            session_id,
            user=turn.user,
            assistant=turn.assistant,
            tool_calls=turn.tool_calls,
            at=turn.ended_at,
            receipt_id=legacy_receipt_of(turn),
        )


def db_users(db: Path, thread: str) -> list[str]:
    raw = sqlite3.connect(db)
    try:
        sql = "SELECT content FROM messages WHERE thread_id = ? AND role = 'user' ORDER BY position"
        return [str(row[0]) for row in raw.execute(sql, (thread,))]
    finally:
        raw.close()


async def test_an_old_file_with_repeated_numbers_has_every_distinct_turn_recorded(
    tmp_path: Path,
) -> None:
    db = tmp_path / "m.db"
    turns = [(1, "alpha"), (2, "beta"), (2, "gamma"), (3, "delta"), (4, "epsilon"), (4, "zeta")]
    old_session_file("s1", tmp_path, turns)
    async with make_host(db, tmp_path, block_turn_size=50) as host:
        await record_legacy(runtime_of(host), "s1", tmp_path, upto=2)  # alpha, beta
        agent = Agent(host, ScriptedChatModel.of("fine"))
        session = open_session("s1", "t", host.cwd)
        assert await agent.start(session) == []
        assert db_users(db, "s1") == ["alpha", "beta", "gamma", "delta", "epsilon", "zeta"]
        result = await agent.run_turn(session, "eta")
        assert result.turn == 5 and result.warnings == ()
    async with make_host(db, tmp_path, block_turn_size=50) as host:  # a restart adds nothing
        await Agent(host, ScriptedChatModel.of()).start(open_session("s1", "t", host.cwd))
    assert db_users(db, "s1") == ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta"]


async def test_turns_recorded_under_old_receipts_are_not_recorded_again(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    old_session_file("s1", tmp_path, [(1, "alpha"), (2, "beta"), (3, "gamma")])
    async with make_host(db, tmp_path, block_turn_size=50) as host:
        await record_legacy(runtime_of(host), "s1", tmp_path, upto=3)
        session = open_session("s1", "t", host.cwd)
        assert await Agent(host, ScriptedChatModel.of()).start(session) == []
        assert db_users(db, "s1") == ["alpha", "beta", "gamma"]
        [first, *_] = session.completed
        assert receipt_of(first).startswith(legacy_receipt_of(first) + ":")


async def test_the_store_numbers_turns_inside_the_write_from_two_engines(tmp_path: Path) -> None:
    """Memory's own turn numbers come from the write transaction: two engines on one file
    writing one thread at once never share a thread or namespace turn."""
    db = tmp_path / "m.db"
    engines = [await StrataGate.open(db), await StrataGate.open(db)]
    try:

        async def write(engine: StrataGate, name: str) -> list[TurnReceipt]:
            return [
                await engine.blocks.append_turn(
                    "ns", "t", user=f"{name} {i}", receipt_id=f"{name}:{i}"
                )
                for i in range(10)
            ]

        receipts = await asyncio.gather(*(write(e, n) for e, n in zip(engines, "ab", strict=True)))
    finally:
        for engine in engines:
            await engine.close()
    flat = [receipt for batch in receipts for receipt in batch]
    assert sorted(r.thread_turn for r in flat) == list(range(1, 21))
    assert sorted(r.namespace_turn for r in flat) == list(range(1, 21))
