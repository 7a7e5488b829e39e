"""Read-only connections beside the writer, so reads run in parallel with each other and
with a write.

WAL lets any number of readers work while one writer commits: each reader here is its own
``sqlite3`` connection on its own thread (``sqlite3`` releases the GIL while SQL runs), so
two pages or tool calls no longer queue on the writer's single thread. A read unit runs in
one deferred transaction (``BEGIN … COMMIT``) and so sees one snapshot, as it did on the
single connection; a read that starts after a write committed sees that write. Readers are
``PRAGMA query_only``: a read callback that writes fails loudly instead of racing the
writer (temp tables count as writes; a per-connection cache must not assume the writer).
"""

import asyncio
import sqlite3
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")
Prepare = Callable[[sqlite3.Connection], None]


@dataclass(frozen=True)
class Reader:
    """One read-only connection and the single thread that owns it."""

    conn: sqlite3.Connection
    thread: ThreadPoolExecutor


class ReaderPool:
    """``size`` readers of the file at ``path``; a read waits for a free one."""

    def __init__(self, path: Path, size: int, prepare: Prepare) -> None:
        self.path = path
        self.size = size
        self._prepare = prepare
        self._readers: list[Reader] = []
        self._free: asyncio.Queue[Reader] = asyncio.Queue()

    async def open(self) -> "ReaderPool":
        """Connect every reader; on a failure close those already open and raise."""
        try:
            for index in range(self.size):
                self._readers.append(await self._connect(index))
        except BaseException:
            await self.close()
            raise
        for reader in self._readers:
            self._free.put_nowait(reader)
        return self

    async def _connect(self, index: int) -> Reader:
        thread = ThreadPoolExecutor(1, thread_name_prefix=f"stratagate-reader-{index}")
        try:
            conn = await asyncio.get_running_loop().run_in_executor(thread, self._new_connection)
        except BaseException:
            thread.shutdown(wait=True)
            raise
        return Reader(conn, thread)

    def _new_connection(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, isolation_level=None)
        try:
            self._prepare(conn)
            conn.execute("PRAGMA query_only = ON")
        except BaseException:
            conn.close()
            raise
        return conn

    async def read(self, query: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``query`` on a free reader inside one read transaction."""
        reader = await self._free.get()
        try:
            loop = asyncio.get_running_loop()
            return await loop.run_in_executor(reader.thread, in_snapshot, reader.conn, query)
        finally:  # a cancelled read's unit may still run: its thread runs one unit at a time
            self._free.put_nowait(reader)

    async def close(self) -> None:
        """Close every reader on its own thread and stop the threads (waits for a read
        still running on one)."""
        readers, self._readers = self._readers, []
        self._free = asyncio.Queue()
        for reader in readers:
            await asyncio.to_thread(_close_reader, reader)


def in_snapshot(raw: sqlite3.Connection, query: Callable[[sqlite3.Connection], T]) -> T:
    """``query`` inside one deferred transaction: every statement sees the same snapshot."""
    raw.execute("BEGIN")
    try:
        return query(raw)
    finally:
        if raw.in_transaction:
            raw.execute("ROLLBACK")  # nothing to keep: a reader never writes


def _close_reader(reader: Reader) -> None:
    reader.thread.submit(reader.conn.close).result()
    reader.thread.shutdown(wait=True)
