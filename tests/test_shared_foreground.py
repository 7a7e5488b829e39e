"""Processes on one database share a board: a worker yields to another process's requests,
and one derivation pass runs at a time (``core/shared_foreground.py``).

The other process is real: a child Python that joins the board for the same database file
and obeys one command a line (``busy N``, ``lock``, ``unlock``), answering ``ok`` once done.
"""

import asyncio
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_idle_worker import WAIT_S, ready_blocks

from stratagate_plugin.core import shared_foreground
from stratagate_plugin.core.config import MemoryConfig
from stratagate_plugin.core.foreground import FOREGROUND, Foreground
from stratagate_plugin.core.memory import StrataGate
from stratagate_plugin.core.shared_foreground import SharedBoard
from stratagate_plugin.memory_plugin.runtime import MemoryRuntime
from stratagate_plugin.memory_plugin.settings import DEFAULT_SETTINGS

CHILD = """
import fcntl, sys
from pathlib import Path
from stratagate_plugin.core import shared_foreground
board = shared_foreground.join(Path(sys.argv[1]))
print("ok", board.slot, flush=True)
for line in sys.stdin:
    word, *rest = line.split()
    if word == "busy":
        board.publish(int(rest[0]))
    elif word == "lock":
        fcntl.flock(board.lock_fd, fcntl.LOCK_EX)
    elif word == "unlock":
        fcntl.flock(board.lock_fd, fcntl.LOCK_UN)
    elif word == "leave":
        shared_foreground.leave(board)
    elif word == "try":
        got = board._try_lock()
        if got:
            fcntl.flock(board.lock_fd, fcntl.LOCK_UN)
        print("ok", "got" if got else "held", flush=True)
        continue
    print("ok", flush=True)
"""


class Other:
    """The child process on the board."""

    def __init__(self, database: Path) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-c", CHILD, str(database)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=dict(os.environ),
        )  # fmt: skip
        self.slot = int(self._answer().split()[1])

    def say(self, command: str) -> str:
        assert self.process.stdin is not None
        self.process.stdin.write(command + "\n")
        self.process.stdin.flush()
        return self._answer().strip()

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=10)
        for pipe in (self.process.stdin, self.process.stdout):
            if pipe is not None:
                pipe.close()

    def _answer(self) -> str:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        assert line.startswith("ok"), f"the other process said {line!r}"
        return line


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path / "run"))
    (tmp_path / "run").mkdir()
    yield tmp_path / "run" / f"stratagate-{os.getuid()}"


@pytest.fixture
def others() -> Iterator[list[Other]]:
    started: list[Other] = []
    yield started
    for other in started:
        other.kill()


@pytest.fixture
def pair(tmp_path: Path, folder: Path, others: list[Other]) -> Iterator[tuple[SharedBoard, Other]]:
    """This process's board for a database, and another process on the same one."""
    board = shared_foreground.join(tmp_path / "memory.db")
    assert board is not None
    other = Other(tmp_path / "memory.db")
    others.append(other)
    yield board, other
    if board.users:
        shared_foreground.leave(board)


def test_another_process_requests_are_seen_until_it_ends(
    tmp_path: Path, folder: Path, others: list[Other]
) -> None:
    database = tmp_path / "memory.db"
    board = shared_foreground.join(database)
    assert board is not None and board.others() == 0
    other = Other(database)
    others.append(other)
    assert other.slot != board.slot
    other.say("busy 2")
    assert board.others() == 2
    board.publish(5)  # this process's own count is never "others"
    assert board.others() == 2
    other.kill()  # killed while serving: its count must not hold workers back
    assert board.others() == 0
    again = Other(database)
    others.append(again)
    assert again.slot == other.slot  # the dead process's slot is taken again
    shared_foreground.leave(board)


def test_a_slot_whose_pid_now_names_another_process_is_not_counted(
    pair: tuple[SharedBoard, Other],
) -> None:
    """A process killed while serving leaves its count; the system may give its pid to a
    new process, which must not make the old slot count again. The slot says when its
    process started, and a live pid that started at another time is not it."""
    board, other = pair
    pid = other.process.pid
    started = shared_foreground.start_time(pid)
    assert started > 0  # Linux: read from /proc
    spare = next(n for n in range(shared_foreground.SLOTS) if n not in (board.slot, other.slot))
    at = spare * shared_foreground.SLOT.size
    shared_foreground.SLOT.pack_into(board.map, at, pid, 3, started + 1)
    assert board.others() == 0  # the pid is live, but not the process that took the slot
    shared_foreground.SLOT.pack_into(board.map, at, pid, 3, started)
    assert board.others() == 3
    shared_foreground.SLOT.pack_into(board.map, at, 0, 0, 0)


def test_a_different_database_has_its_own_board(
    tmp_path: Path, folder: Path, others: list[Other]
) -> None:
    board = shared_foreground.join(tmp_path / "a.db")
    assert board is not None
    other = Other(tmp_path / "b.db")
    others.append(other)
    other.say("busy 1")
    assert board.others() == 0
    shared_foreground.leave(board)


async def test_a_worker_waits_for_another_process_request(
    pair: tuple[SharedBoard, Other],
) -> None:
    board, other = pair
    foreground = Foreground()
    foreground.boards.append(board)
    other.say("busy 1")
    waiting = asyncio.create_task(foreground.yield_to(max_backoff_s=60))
    done, _ = await asyncio.wait([waiting], timeout=0.3)
    assert not done  # the other process is serving: the worker must not go on
    await asyncio.to_thread(other.say, "busy 0")
    await asyncio.wait_for(waiting, timeout=30)  # well before the 60 s back-off


async def test_one_pass_at_a_time_across_processes(pair: tuple[SharedBoard, Other]) -> None:
    board, other = pair
    other.say("lock")
    entered = asyncio.Event()

    async def run_pass() -> None:
        async with board.one_pass():
            entered.set()

    running = asyncio.create_task(run_pass())
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(asyncio.shield(entered.wait()), timeout=0.3)
    await asyncio.to_thread(other.say, "unlock")
    await asyncio.wait_for(running, timeout=30)
    assert entered.is_set()
    async with board.one_pass():  # this process's pass now: the other cannot start one
        assert await asyncio.to_thread(other.say, "try") == "ok held"
    assert await asyncio.to_thread(other.say, "try") == "ok got"


def test_the_last_process_to_leave_removes_the_board(
    tmp_path: Path, folder: Path, others: list[Other]
) -> None:
    database = tmp_path / "memory.db"
    board = shared_foreground.join(database)
    assert board is not None
    other = Other(database)
    others.append(other)
    shared_foreground.leave(board)
    assert sorted(p.suffixes for p in folder.iterdir()) == [[".v2", ".busy"], [".v2", ".pass"]]
    other.say("leave")
    assert list(folder.iterdir()) == []
    again = shared_foreground.join(database)  # a later process makes a fresh one
    assert again is not None and again.others() == 0
    shared_foreground.leave(again)


def test_a_server_url_is_named_without_its_password() -> None:
    one = shared_foreground.database_key("postgresql://me:secret@db.local:5433/memory")
    two = shared_foreground.database_key("postgresql://me:other@db.local:5433/memory")
    assert one == two
    assert one != shared_foreground.database_key("postgresql://me@db.local:5433/else")


def test_a_file_is_named_by_its_real_path(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    through_link = shared_foreground.database_key(tmp_path / "link" / "memory.db")
    assert through_link == shared_foreground.database_key(tmp_path / "real" / "memory.db")


async def test_a_runtime_derives_only_while_no_other_process_runs_a_pass(
    tmp_path: Path, folder: Path, others: list[Other]
) -> None:
    db = tmp_path / "memory.db"
    settings = {**DEFAULT_SETTINGS, "database": str(db), "job_poll_s": 0.2}
    runtime = await MemoryRuntime.start(settings, tmp_path)
    try:
        assert runtime.board is not None and runtime.board in FOREGROUND.boards
        await asyncio.wait_for(runtime.idle.wait(), timeout=WAIT_S)
        other = Other(db)
        others.append(other)
        await asyncio.to_thread(other.say, "lock")  # the other process's pass is running
        writer = await StrataGate.open(db, MemoryConfig(block_turn_size=1))
        try:
            await writer.blocks.append_turn("ns", "t", user="We moved the launch to June.",
                                     assistant="Noted.")  # fmt: skip
        finally:
            await writer.close()
        runtime.kick()
        await asyncio.sleep(0.5)
        assert ready_blocks(db) == 0 and not runtime.idle.is_set()  # waiting for the lock
        await asyncio.to_thread(other.say, "unlock")
        deadline = time.monotonic() + WAIT_S
        while ready_blocks(db) == 0 and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        assert ready_blocks(db) == 1
    finally:
        board = runtime.board
        await runtime.stop()
    assert board not in FOREGROUND.boards and runtime.board is None


def test_a_folder_others_can_write_is_not_used(tmp_path: Path, folder: Path) -> None:
    folder.mkdir(mode=0o700)
    folder.chmod(0o777)  # another user could hold the pass lock and stop every worker
    assert shared_foreground.join(tmp_path / "memory.db") is None
    folder.chmod(0o700)
    board = shared_foreground.join(tmp_path / "memory.db")
    assert board is not None
    shared_foreground.leave(board)
