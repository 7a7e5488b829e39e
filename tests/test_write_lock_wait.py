"""A write waits for another process's SQLite write lock by trying again every few ms (not
SQLite's own handler, which sleeps up to 100 ms between tries), and past its wait fails
with the one-line locked error, having written nothing."""

import asyncio
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from stratagate_plugin.core.errors import StorageError
from stratagate_plugin.core.store import Database
from stratagate_plugin.core.store.db import begin_immediate

pytestmark = pytest.mark.sqlite_only(
    reason="SQLite's write lock, held by a raw connection (BEGIN IMMEDIATE)"
)


class Scripted:
    """A connection whose ``BEGIN IMMEDIATE`` fails with the given codes, then succeeds."""

    def __init__(self, *codes: int) -> None:
        self.codes = list(codes)
        self.statements: list[str] = []

    def execute(self, sql: str) -> None:
        self.statements.append(sql)
        if sql == "BEGIN IMMEDIATE" and self.codes:
            error = sqlite3.OperationalError("scripted")
            error.sqlite_errorcode = self.codes.pop(0)
            raise error


def begins(connection: Scripted) -> int:
    return connection.statements.count("BEGIN IMMEDIATE")


def test_a_busy_begin_is_tried_again_and_the_wait_restored() -> None:
    connection = Scripted(sqlite3.SQLITE_BUSY, sqlite3.SQLITE_BUSY | 256)  # and an extended code
    begin_immediate(connection, 10_000)  # type: ignore[arg-type]
    assert begins(connection) == 3
    assert connection.statements[0] == "PRAGMA busy_timeout = 0"
    assert connection.statements[-1] == "PRAGMA busy_timeout = 10000"


def test_any_other_error_is_raised_at_once() -> None:
    connection = Scripted(sqlite3.SQLITE_IOERR)
    with pytest.raises(sqlite3.OperationalError):
        begin_immediate(connection, 10_000)  # type: ignore[arg-type]
    assert begins(connection) == 1
    assert connection.statements[-1] == "PRAGMA busy_timeout = 10000"


def _count(raw: sqlite3.Connection) -> int:
    return int(raw.execute("SELECT count(*) FROM meta WHERE key = 'lock-test'").fetchone()[0])


def _insert(raw: sqlite3.Connection) -> None:
    raw.execute("INSERT INTO meta(key, value) VALUES ('lock-test', '1')")


async def test_a_write_waits_for_another_connection_then_commits(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    async with Database(path) as db:
        holder = sqlite3.connect(path, isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")
        write = asyncio.create_task(db.write(_insert))
        await asyncio.sleep(0.05)  # a write that did not wait would have failed by now
        assert not write.done()
        holder.execute("COMMIT")
        holder.close()
        await write
        assert await db.read(_count) == 1
        timeout: Any = await db.exclusive(lambda raw: raw.execute("PRAGMA busy_timeout").fetchone())
        assert timeout[0] == db.busy_timeout_ms


async def test_a_lock_held_past_the_wait_is_the_locked_error_and_nothing_is_written(
    tmp_path: Path,
) -> None:
    path = tmp_path / "m.db"
    async with Database(path, busy_timeout_ms=100) as db:
        holder = sqlite3.connect(path, isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")
        try:
            with pytest.raises(StorageError, match="locked"):
                await db.write(_insert)
        finally:
            holder.execute("ROLLBACK")
            holder.close()
        assert await db.read(_count) == 0
        await db.write(_insert)  # the writer is usable again
        assert await db.read(_count) == 1
