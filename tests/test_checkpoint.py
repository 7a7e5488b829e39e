"""WAL checkpoints run on their own thread, not inside the writer's commits."""

import asyncio
import sqlite3
import threading
from pathlib import Path

import pytest

from stratagate_plugin.core.memory import StrataGate
from stratagate_plugin.core.store.checkpoint import (
    CHECKPOINT_EVERY_WRITES,
    WRITER_SAFETY_NET_PAGES,
    Checkpointer,
)

pytestmark = pytest.mark.sqlite_only(
    reason="WAL checkpoints of SQLite's writer, on their own thread"
)


def checkpoint_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "stratagate-checkpoint"]


async def test_writer_keeps_only_a_safety_net_autocheckpoint(memory: StrataGate) -> None:
    pages = await memory.db.read(lambda raw: raw.execute("PRAGMA wal_autocheckpoint").fetchone())
    assert pages[0] == WRITER_SAFETY_NET_PAGES > 1000


async def test_the_thread_checkpoints_every_so_many_writes(db_path: Path) -> None:
    async with await StrataGate.open(db_path) as memory:
        checkpointer = memory.db._checkpointer
        assert checkpointer is not None
        for i in range(CHECKPOINT_EVERY_WRITES):
            await memory.blocks.append_turn("ns", "t", user=f"turn {i}", receipt_id=f"r{i}")
        for _ in range(200):  # the thread runs on its own; give it up to 2 s
            if checkpointer.checkpoints:
                break
            await asyncio.sleep(0.01)
        assert checkpointer.checkpoints == 1
        conn = sqlite3.connect(db_path)  # a checkpoint moved the log into the file
        busy, log, done = conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
        conn.close()
    assert busy == 0 and log == done


async def test_close_stops_the_thread(db_path: Path) -> None:
    before = len(checkpoint_threads())
    memory = await StrataGate.open(db_path)
    assert len(checkpoint_threads()) == before + 1
    await memory.close()
    assert len(checkpoint_threads()) == before


def test_a_checkpointer_on_a_plain_file_counts_its_checkpoints(tmp_path: Path) -> None:
    path = tmp_path / "x.db"
    writer = sqlite3.connect(path, isolation_level=None)
    writer.execute("PRAGMA journal_mode = WAL")
    writer.execute("PRAGMA wal_autocheckpoint = 0")
    checkpointer = Checkpointer(path, every_writes=2)
    for value in range(4):
        writer.execute("CREATE TABLE IF NOT EXISTS t(x)")
        writer.execute("INSERT INTO t VALUES (?)", (value,))
        checkpointer.wrote()
        if value == 1:
            for _ in range(500):  # until the first nudge has been served (at most 5 s)
                if checkpointer.checkpoints:
                    break
                threading.Event().wait(0.01)
    checkpointer.close()
    assert 1 <= checkpointer.checkpoints <= 2  # nudged at writes 2 and 4, never at 1 or 3
    assert writer.execute("SELECT COUNT(*) FROM t").fetchone()[0] == 4
    writer.close()


def test_a_file_that_is_not_a_database_never_kills_the_thread(tmp_path: Path) -> None:
    path = tmp_path / "not-a-db.db"
    path.write_bytes(b"this is not sqlite" * 300)
    checkpointer = Checkpointer(path, every_writes=1)
    checkpointer.wrote()
    for _ in range(200):  # the nudge is served (and fails quietly) or the thread is waiting
        if not checkpointer._wake.is_set():
            break
        threading.Event().wait(0.01)
    assert checkpointer._thread.is_alive()
    checkpointer.close()
    assert checkpointer.checkpoints == 0 and not checkpointer._thread.is_alive()
