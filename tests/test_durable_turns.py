"""A turn memory could not take when it ended waits in the session file and is recorded at
the next turn or the next start, in order, never twice; the user is told it waits."""

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from stratagate_plugin.core.store import db as store_db
from stratagate_plugin.harness.agent import Agent
from stratagate_plugin.harness.chat import ScriptedChatModel
from stratagate_plugin.harness.sessions import open_session, session_path
from tests.test_plugin_e2e import make_host


@contextmanager
def locked(path: Path) -> Iterator[None]:
    """Another connection holds the write lock (past any busy timeout) meanwhile."""
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        yield
    finally:
        holder.execute("ROLLBACK")
        holder.close()


def user_turns(path: Path, thread: str) -> list[tuple[int, str]]:
    raw = sqlite3.connect(path)
    try:
        rows = raw.execute(
            "SELECT turn, content FROM messages WHERE thread_id = ? AND role = 'user' "
            "ORDER BY position",
            (thread,),
        ).fetchall()
    finally:
        raw.close()
    return [(int(turn), str(content)) for turn, content in rows]


@pytest.fixture
def short_busy_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(store_db, "BUSY_TIMEOUT_MS", 100)


@pytest.mark.sqlite_only(
    reason="a turn fails through SQLite's write lock, held by a raw connection "
    "(BEGIN IMMEDIATE) past the busy timeout"
)
async def test_a_turn_that_could_not_be_written_is_recorded_at_the_next_turn(
    tmp_path: Path, short_busy_timeout: None
) -> None:
    db = tmp_path / "m.db"
    model = ScriptedChatModel.of("one", "two", "three")
    async with make_host(db, tmp_path, block_turn_size=6) as host:
        agent = Agent(host, model)
        session = open_session("s1", "t", host.cwd)
        assert (await agent.run_turn(session, "first fact")).warnings == ()
        with locked(db):
            second = await agent.run_turn(session, "second fact")
        assert second.ok and second.answer == "two"
        [warning] = second.warnings
        assert "could not record turn 2" in warning and "session file" in warning
        assert "second fact" in session_path("s1").read_text()
        assert user_turns(db, "s1") == [(1, "first fact")]
        third = await agent.run_turn(session, "third fact")
        assert third.warnings == ()
    assert user_turns(db, "s1") == [(1, "first fact"), (2, "second fact"), (3, "third fact")]


@pytest.mark.sqlite_only(
    reason="a turn fails through SQLite's write lock, held by a raw connection "
    "(BEGIN IMMEDIATE) past the busy timeout"
)
async def test_newer_turns_wait_behind_an_older_one_and_the_next_start_records_them(
    tmp_path: Path, short_busy_timeout: None
) -> None:
    db = tmp_path / "m.db"
    async with make_host(db, tmp_path, block_turn_size=6) as host:
        agent = Agent(host, ScriptedChatModel.of("a", "b", "c"))
        session = open_session("s1", "t", host.cwd)
        await agent.run_turn(session, "first")
        with locked(db):
            await agent.run_turn(session, "second")
            third = await agent.run_turn(session, "third")
        assert "turns 2–3" in third.warnings[0]
    assert user_turns(db, "s1") == [(1, "first")]
    async with make_host(db, tmp_path, block_turn_size=6) as host:
        agent = Agent(host, ScriptedChatModel.of())
        assert await agent.start(open_session("s1", "t", host.cwd)) == []
        assert await agent.start(open_session("s1", "t", host.cwd)) == []  # nothing twice
    assert user_turns(db, "s1") == [(1, "first"), (2, "second"), (3, "third")]


async def test_a_surrogate_in_the_users_text_is_stored_as_a_replacement_character(
    tmp_path: Path,
) -> None:
    db = tmp_path / "m.db"
    async with make_host(db, tmp_path) as host:
        session = open_session("s1", "t", host.cwd)
        result = await Agent(host, ScriptedChatModel.of("fine")).run_turn(session, "caf\udce9")
        assert result.ok and result.warnings == ()
    assert user_turns(db, "s1") == [(1, "caf\ufffd")]
    assert "caf\ufffd" in session_path("s1").read_text(encoding="utf-8")


def test_a_session_id_ending_in_a_newline_is_refused() -> None:
    from stratagate_plugin.harness.errors import HostError

    with pytest.raises(HostError, match="invalid session id"):
        session_path("monday\n")


def test_a_non_utf8_byte_in_chat_message_is_kept_as_a_replacement_character(
    tmp_path: Path,
) -> None:
    import os
    import subprocess
    import sys

    env = {**os.environ, "STRATAGATE_HOME": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-m", "stratagate_plugin.cli.main", "chat", "--message", b"caf\xe9"],
        capture_output=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    assert b"Traceback" not in done.stderr
    [session_file] = (tmp_path / "sessions").glob("*.jsonl")
    assert "caf\ufffd" in session_file.read_text(encoding="utf-8")
    raw = sqlite3.connect(tmp_path / "memory.db")
    try:
        contents = [
            row[0] for row in raw.execute("SELECT content FROM messages WHERE role = 'user'")
        ]
    finally:
        raw.close()
    assert contents == ["caf\ufffd"]
