"""WAL checkpoints on their own thread and connection, off the writer's commit path.

In WAL mode the connection whose commit crosses ``wal_autocheckpoint`` pages copies the
log back into the database file and fsyncs it, inside that commit. Here a daemon thread
does it instead with ``PRAGMA wal_checkpoint(PASSIVE)``, which never blocks the writer,
every ``every_writes`` committed writes; the writer keeps a higher autocheckpoint as a
safety net for large writes or should this thread fall behind. Durability is unchanged:
the same checkpoints happen, on another core.
"""

import sqlite3
import threading
from pathlib import Path

CHECKPOINT_EVERY_WRITES = 64  # a recorded turn writes ~15 pages: ~1,000 pages a checkpoint
WRITER_SAFETY_NET_PAGES = 8000  # the writer's own autocheckpoint (~32 MB of log)


class Checkpointer:
    """Checkpoints one database's WAL from a daemon thread, nudged by the writer."""

    def __init__(
        self,
        path: Path,
        every_writes: int = CHECKPOINT_EVERY_WRITES,
        busy_timeout_ms: int = 10_000,
    ) -> None:
        self.path = path
        self._every = every_writes
        self._busy_timeout_ms = busy_timeout_ms
        self._wake = threading.Event()
        self._stopping = False
        self._writes = 0
        self.checkpoints = 0
        self._thread = threading.Thread(target=self._run, name="stratagate-checkpoint", daemon=True)
        self._thread.start()

    def wrote(self) -> None:
        """Called after each committed write; wakes the thread every ``every_writes``."""
        self._writes += 1
        if self._writes % self._every == 0:
            self._wake.set()

    def close(self) -> None:
        self._stopping = True
        self._wake.set()
        self._thread.join()

    def _run(self) -> None:
        try:
            conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        except sqlite3.Error:
            return  # e.g. a read-only location: the writer's own autocheckpoint still runs
        try:
            conn.execute(f"PRAGMA busy_timeout = {self._busy_timeout_ms}")
            while True:
                self._wake.wait()
                self._wake.clear()
                if self._stopping:
                    return
                self._checkpoint(conn)
        finally:
            conn.close()

    def _checkpoint(self, conn: sqlite3.Connection) -> None:
        try:
            conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
            self.checkpoints += 1
        except sqlite3.Error:
            pass  # busy, locked or unreadable: the next nudge (or the writer's net) retries
