"""Reads run on a pool of read-only connections beside the writer (issue 29).

Each test proves an ordering with events, never a timing: two reads in flight at once is
impossible on one connection, so the first test would fail (after its guard's wait) on the
old single-connection store.
"""

import asyncio
import sqlite3
import threading
import time
from pathlib import Path

import pytest

from stratagate_plugin.core.errors import StrataGateError
from stratagate_plugin.core.foreground import JOB_SHARE, MAX_SHARE_BACKOFF_S, Foreground
from stratagate_plugin.core.store.db import Database

GUARD_S = 30  # only a failing test waits this long: the events normally fire at once


def _put(key: str, value: str = "x"):
    def unit(raw: sqlite3.Connection) -> None:
        raw.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value))

    return unit


def _count_test_keys(raw: sqlite3.Connection) -> int:
    return int(raw.execute("SELECT count(*) FROM meta WHERE key LIKE 'test-%'").fetchone()[0])


async def _wait(event: threading.Event) -> None:
    assert await asyncio.to_thread(event.wait, GUARD_S)


@pytest.fixture
async def db(tmp_path: Path):
    database = await Database(tmp_path / "memory.db", backups=False, readers=3).open()
    yield database
    await database.close()


async def test_reader_pool_runs_two_reads_at_once(db: Database) -> None:
    first_started, second_started = threading.Event(), threading.Event()

    def first(raw: sqlite3.Connection) -> bool:
        first_started.set()
        return second_started.wait(GUARD_S)

    def second(raw: sqlite3.Connection) -> bool:
        second_started.set()
        return True

    held = asyncio.create_task(db.read(first))
    await _wait(first_started)
    assert await db.read(second)
    assert await held  # the first read saw the second start while it was still running


async def test_reader_pool_read_sees_the_last_committed_write(db: Database) -> None:
    for n in range(1, 6):
        await db.write(_put(f"test-{n}"))
        assert await db.read(_count_test_keys) == n


async def test_reader_pool_read_keeps_one_snapshot_while_a_write_commits(db: Database) -> None:
    looked, committed = threading.Event(), threading.Event()

    def twice(raw: sqlite3.Connection) -> tuple[int, int]:
        before = _count_test_keys(raw)
        looked.set()
        committed.wait(GUARD_S)
        return before, _count_test_keys(raw)

    reading = asyncio.create_task(db.read(twice))
    await _wait(looked)
    await db.write(_put("test-new"))
    committed.set()
    assert await reading == (0, 0)
    assert await db.read(_count_test_keys) == 1


async def test_reader_pool_never_sees_half_a_write_unit(db: Database) -> None:
    halfway, looked = threading.Event(), threading.Event()

    def two_rows(raw: sqlite3.Connection) -> None:
        _put("test-a")(raw)
        halfway.set()
        looked.wait(GUARD_S)
        _put("test-b")(raw)

    writing = asyncio.create_task(db.write(two_rows))
    await _wait(halfway)
    assert await db.read(_count_test_keys) == 0
    looked.set()
    await writing
    assert await db.read(_count_test_keys) == 2


async def test_reader_pool_refuses_a_read_that_writes(db: Database) -> None:
    with pytest.raises(sqlite3.OperationalError, match="readonly"):
        await db.read(_put("test-sneaky"))
    with pytest.raises(sqlite3.OperationalError, match="readonly"):
        await db.read(lambda raw: raw.execute("CREATE TEMP TABLE scratch(x)"))
    assert await db.read(_count_test_keys) == 0


async def test_reader_pool_shares_the_connection_set_up(db: Database) -> None:
    row = await db.read(
        lambda raw: raw.execute("SELECT sg_fts_document('Hello') AS doc").fetchone()
    )
    assert row["doc"]  # rows by name, and the registered SQL function
    timeout = await db.read(lambda raw: raw.execute("PRAGMA busy_timeout").fetchone()[0])
    assert timeout == db.busy_timeout_ms


async def test_reader_pool_closes_every_reader(tmp_path: Path) -> None:
    before = _reader_threads()
    db = await Database(tmp_path / "memory.db", backups=False, readers=2).open()
    await db.read(_count_test_keys)
    assert len(_reader_threads() - before) == 2
    await db.close()
    assert not _reader_threads() - before
    with pytest.raises(StrataGateError):
        await db.read(_count_test_keys)


async def test_database_without_readers_reads_on_the_writer(tmp_path: Path) -> None:
    async with Database(tmp_path / "memory.db", backups=False, readers=0) as db:
        await db.write(_put("test-1"))
        before = _reader_threads()
        assert await db.read(_count_test_keys) == 1
        assert _reader_threads() == before


def _reader_threads() -> set[threading.Thread]:
    return {t for t in threading.enumerate() if t.name.startswith("stratagate-reader")}


async def test_foreground_yield_returns_at_once_when_idle() -> None:
    await Foreground().yield_to()


async def test_foreground_yield_waits_for_the_request_in_flight() -> None:
    foreground = Foreground()
    with foreground.serving():
        waiting = asyncio.create_task(foreground.yield_to(max_backoff_s=GUARD_S))
        for _ in range(3):
            await asyncio.sleep(0)
        assert not waiting.done()
    await waiting  # woken by the request's end, not by the back-off
    assert foreground.busy == 0


async def test_a_worker_waits_longer_after_a_longer_job() -> None:
    """While requests keep coming, a worker waits up to ``JOB_SHARE`` times its last job (so a
    worker of 100 ms jobs takes at most a quarter of the CPU), never more than the cap."""
    foreground = Foreground()
    task = asyncio.current_task()
    assert task is not None and foreground._share(task) == 0.0  # no job yet: the plain bound
    await foreground.yield_to()
    assert task in foreground._resumed  # its next job starts now
    foreground._resumed[task] = time.monotonic() - 0.2  # a job of 0.2 s since
    assert JOB_SHARE * 0.2 <= foreground._share(task) <= MAX_SHARE_BACKOFF_S
    foreground._resumed[task] = time.monotonic() - 3600  # an hour idle: still the cap
    assert foreground._share(task) == MAX_SHARE_BACKOFF_S
