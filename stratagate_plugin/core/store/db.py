"""One aiosqlite writer connection, a pool of read-only connections, whole units in one
thread hop.

Writes, ``exclusive`` work, migrations and opening run on the writer, serialised; reads
run on ``readers`` read-only connections (``readers.py``), each in its own snapshot, so
reads do not queue behind each other or behind a write. WAL checkpoints run on a separate
thread (``checkpoint.py``), not inside a writer's commit.

Every write is a plain function over a ``sqlite3.Connection`` run inside
``BEGIN IMMEDIATE … COMMIT`` on aiosqlite's worker thread; an exception rolls the
whole unit back. aiosqlite has no public call for "run this function on your thread",
so ``Connection._execute`` is used here and nowhere else (the version range is pinned
in pyproject and ``tests/test_store.py`` exercises it).

A ``sqlite3`` error about the file itself (read-only, not a database, damaged, locked) is
raised as a one-line ``StorageError`` naming the file (``health.describe``); an open that
fails closes what it opened, so no worker thread is left to hang the process. The first
open of a day copies the file into ``backups/`` (``health.backup``).
"""

import asyncio
import logging
import os
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import aiosqlite

from ..clock import utc_now
from ..errors import StorageError, StrataGateError
from ..events.storage import EventRules
from ..rebuilds import RebuildReport, default_report
from . import event_chunks, health
from .checkpoint import WRITER_SAFETY_NET_PAGES, Checkpointer
from .migrations import migrate
from .readers import ReaderPool
from .search_index import register_functions
from .units import is_database_url, shown_location

T = TypeVar("T")
logger = logging.getLogger(__name__)
BUSY_TIMEOUT_MS = 10_000
DEFAULT_READERS = 4  # reads at once; STRATAGATE_READERS overrides, 0 reads on the writer
IN_MEMORY = ("", ":memory:")  # private to one connection: readers would see another file


def stratagate_home() -> Path:
    return Path(os.environ.get("STRATAGATE_HOME") or Path.home() / ".stratagate")


def default_database_path() -> Path:
    return stratagate_home() / "memory.db"


class Database:
    """An open StrataGate database file."""

    def __init__(
        self,
        path: Path | str,
        backups: bool = True,
        busy_timeout_ms: int | None = None,
        events: EventRules | None = None,
        readers: int | None = None,
        on_rebuild: RebuildReport | None = None,
    ) -> None:
        """``busy_timeout_ms``: how long a write waits for another process's lock (default
        ``BUSY_TIMEOUT_MS``; a batch command can afford to wait longer than a chat turn).
        ``events``: the events capability's rules, for the stored search documents of an
        index rebuilt at open (without them it stores none, and search tokenises).
        ``readers``: read-only connections (default ``reader_count()``). ``on_rebuild``:
        told when an index is rebuilt at open (default: the process's, ``rebuilds``).
        A server's URL is refused: as a path it would make a SQLite file of that name."""
        if is_database_url(path):
            raise StrataGateError(
                f"{shown_location(path)} is a server: open it with StrataGate.open, not as a file"
            )
        self.path = Path(path)
        self.events = events
        self.backups = backups
        self.busy_timeout_ms = busy_timeout_ms or BUSY_TIMEOUT_MS
        self.readers = reader_count() if readers is None else readers
        self.on_rebuild = on_rebuild
        self._conn: aiosqlite.Connection | None = None
        self._pool: ReaderPool | None = None
        self._checkpointer: Checkpointer | None = None
        self._write_lock = asyncio.Lock()

    @property
    def shown(self) -> str:
        """What output shows of it: the file's path."""
        return str(self.path)

    async def open(self) -> "Database":
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise StorageError(f"cannot create {self.path.parent}: {error}") from None
        await asyncio.to_thread(health.probe, self.path)  # a failed aiosqlite connect leaks
        self._conn = await aiosqlite.connect(  # its thread, so errors are found before it
            str(self.path), isolation_level=None, timeout=self.busy_timeout_ms / 1000
        )
        try:
            await self._call(_prepare_connection, self.busy_timeout_ms)
            report = self.on_rebuild or default_report()
            await self._call(lambda raw: migrate(raw, events=self.events, report=report))
            if self.backups and health.backup_due(self.path, utc_now()):
                await self._daily_backup()
            self._pool = await self._open_readers()
        except BaseException:
            await self.close()
            raise
        self._checkpointer = Checkpointer(self.path, busy_timeout_ms=self.busy_timeout_ms)
        return self

    async def _open_readers(self) -> ReaderPool | None:
        if self.readers <= 0 or str(self.path) in IN_MEMORY:
            return None
        prepare = _prepare_reader(self.busy_timeout_ms)
        try:
            return await ReaderPool(self.path, self.readers, prepare).open()
        except sqlite3.Error as error:
            raise health.describe(self.path, error) from error

    async def _daily_backup(self) -> None:
        """Copy the file to ``backups/``; a copy failing ``quick_check`` is the daily sign
        that the file is damaged, so the user is told (once a day) what to run."""
        if await self._call(health.backup, self.path, utc_now()) is None:
            logger.warning(
                "%s failed its daily integrity check (no backup was made over the good ones): "
                "run 'stratagate doctor --db %s'",
                self.path,
                self.path,
            )

    async def close(self) -> None:
        """Checkpointer, readers, then the writer: the writer's thread is not a daemon, so
        it is closed even when closing the others failed or was cancelled."""
        try:
            if self._checkpointer is not None:
                checkpointer, self._checkpointer = self._checkpointer, None
                await asyncio.to_thread(checkpointer.close)
            if self._pool is not None:
                pool, self._pool = self._pool, None
                await pool.close()
        finally:
            if self._conn is not None:
                conn, self._conn = self._conn, None
                await conn.close()

    async def __aenter__(self) -> "Database":
        return await self.open()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def write(self, unit: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``unit`` as one ``BEGIN IMMEDIATE`` transaction; the only way to write."""
        async with self._write_lock:
            result: T = await self._call(_in_transaction, unit, self.busy_timeout_ms)
        if self._checkpointer is not None:
            self._checkpointer.wrote()
        return result

    async def exclusive(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``fn`` under the write lock but outside a transaction: what cannot run in
        one (``VACUUM``, ``wal_checkpoint(TRUNCATE)``, ``PRAGMA secure_delete``)."""
        async with self._write_lock:
            return await self._call(fn)

    async def read(self, query: Callable[[sqlite3.Connection], T]) -> T:
        """Run a read-only function in one snapshot on a free reader (on the writer's
        thread when there are no readers). ``query`` must not write, not even temp tables."""
        if self._pool is None:
            return await self._call(query)
        try:
            return await self._pool.read(query)
        except sqlite3.Error as error:
            raise self._translated(error, reader=True) from error

    async def _call(self, fn: Callable[..., T], *args: Any) -> T:
        if self._conn is None:
            raise StrataGateError("database is not open")
        conn = self._conn

        def on_worker() -> T:
            return fn(conn._conn, *args)

        try:
            result: T = await conn._execute(on_worker)  # type: ignore[no-untyped-call]
        except sqlite3.Error as error:
            raise self._translated(error) from error
        return result

    def _translated(self, error: sqlite3.Error, reader: bool = False) -> Exception:
        """``error`` itself when it is a bug in the caller (on a reader, a write attempt
        is one: the writer already proved the file writable), else the file's problem."""
        if isinstance(error, sqlite3.IntegrityError | sqlite3.ProgrammingError):
            return error
        if reader and "readonly" in str(error):
            return error
        return health.describe(self.path, error)


def reader_count() -> int:
    """``STRATAGATE_READERS`` when set (a count; 0 reads on the writer), else the default."""
    configured = os.environ.get("STRATAGATE_READERS", "").strip()
    return int(configured) if configured.isdigit() else DEFAULT_READERS


def _prepare_connection(raw: sqlite3.Connection, busy_timeout_ms: int) -> None:
    _prepare_common(raw, busy_timeout_ms)
    raw.execute("PRAGMA journal_mode = WAL")


def _prepare_common(raw: sqlite3.Connection, busy_timeout_ms: int) -> None:
    """What the writer and every reader share: rows by name, the wait, SQL functions."""
    raw.row_factory = sqlite3.Row
    raw.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
    raw.execute("PRAGMA synchronous = NORMAL")
    raw.execute(f"PRAGMA wal_autocheckpoint = {WRITER_SAFETY_NET_PAGES}")  # see checkpoint.py
    raw.execute("PRAGMA foreign_keys = ON")
    register_functions(raw)


def _prepare_reader(busy_timeout_ms: int) -> Callable[[sqlite3.Connection], None]:
    return lambda raw: _prepare_common(raw, busy_timeout_ms)


def _in_transaction(
    raw: sqlite3.Connection, unit: Callable[[sqlite3.Connection], T], wait_ms: int
) -> T:
    begin_immediate(raw, wait_ms)
    try:
        with event_chunks.held_appends(raw):  # the unit's new postings written together
            result = unit(raw)
    except BaseException:
        raw.execute("ROLLBACK")
        raise
    raw.execute("COMMIT")
    return result


FIRST_PAUSE_S, LAST_PAUSE_S = 0.0005, 0.002


def begin_immediate(raw: sqlite3.Connection, wait_ms: int) -> None:
    """``BEGIN IMMEDIATE``, waiting up to ``wait_ms`` for another process's write lock by
    trying again every 0.5–2 ms. SQLite's own busy handler sleeps 1, 2, 5, 10, 15, 20, 25 …
    100 ms between tries while newcomers take the lock, so with many processes writing a
    waiter slept tens of ms after the lock was free (8 processes, 2 ms transactions: p95
    wait 80 ms against 33 polling). Past ``wait_ms`` SQLite's "database is locked" stands."""
    raw.execute("PRAGMA busy_timeout = 0")
    try:
        deadline = time.monotonic() + wait_ms / 1000
        pause = FIRST_PAUSE_S
        while True:
            try:
                raw.execute("BEGIN IMMEDIATE")
                return
            except sqlite3.OperationalError as error:
                busy = error.sqlite_errorcode & 0xFF == sqlite3.SQLITE_BUSY  # extended codes too
                if not busy or time.monotonic() >= deadline:
                    raise
            time.sleep(pause)
            pause = min(2 * pause, LAST_PAUSE_S)
    finally:
        raw.execute(f"PRAGMA busy_timeout = {int(wait_ms)}")
