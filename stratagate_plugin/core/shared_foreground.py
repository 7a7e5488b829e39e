"""The processes of this machine on one database: their requests in flight, and whose
background pass runs.

``foreground.py`` lets a worker yield to its own process's requests. But processes that
open one database side by side (an MCP server per agent client, a chat, ``serve``) each
run a worker, and every worker's jobs (write transactions, CPU on shared cores) slowed the
others' tool calls: 8 MCP servers on the 500k corpus answered p95 1.7 s while the
back-fill ran (issue 29). So the processes of one database share a board, two small files
in the user's runtime folder named by a hash of the database:

- a slot per process (its pid and its requests in flight): a worker yields while any
  other process is serving, as it yields to its own (``Foreground.yield_to``);
- one pass at a time: a worker runs its derivation pass holding the board's lock
  (``flock``), so one process's jobs run at once. A pass claims every due job, whoever
  queued it, so nothing waits for its own process's turn, and the next worker's pass
  starts as soon as the lock is free.

A slot whose process is gone is taken by the next to join and never counted: a slot holds
its process's start time beside its pid, so a pid the system has since given to another
process does not keep a dead slot counted. The lock is the kernel's, released when its
holder ends however it ends. Standard library only.
"""

import asyncio
import contextlib
import fcntl
import hashlib
import logging
import mmap
import os
import stat
import struct
import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from urllib.parse import urlsplit

SLOTS = 128
SLOT = struct.Struct("iiQ")  # a process id, its requests in flight, its start time
BOARD_VERSION = 2  # in the files' names: a board of another slot layout is another file
PASS_POLL_S = 0.05  # how often a worker waiting for the pass lock tries again

log = logging.getLogger(__name__)


def board_folder() -> Path:
    """This user's folder for boards: the runtime folder (a tmpfs) when there is one. One
    another user made, or could write to, is refused: whoever holds a board's pass lock
    holds back every worker on the database."""
    base = os.environ.get("XDG_RUNTIME_DIR") or tempfile.gettempdir()
    folder = Path(base) / f"stratagate-{os.getuid()}"
    folder.mkdir(mode=0o700, exist_ok=True)
    found = os.lstat(folder)
    if found.st_uid != os.getuid() or found.st_mode & 0o077 or not stat.S_ISDIR(found.st_mode):
        raise PermissionError(f"{folder} is not this user's alone: no shared board")
    return folder


def database_key(database: Path | str) -> str:
    """A name for the database, the same in every process that opens it: a file's real
    path; a server URL without its password (never written anywhere)."""
    if isinstance(database, Path):
        named = os.path.realpath(database)
    else:
        parts = urlsplit(database)
        host = parts.hostname or ""
        named = f"{parts.scheme}://{parts.username or ''}@{host}:{parts.port or ''}"
        named += f"{parts.path}?{parts.query}"
    return hashlib.sha256(named.encode()).hexdigest()[:24]


class SharedBoard:
    """This process's slot on one database's board, and the board's pass lock."""

    def __init__(self, folder: Path, key: str) -> None:
        self.key, self.pid, self.started = key, os.getpid(), start_time(os.getpid())
        self.users = 0  # runtimes of this process on the database (tests open several)
        self.passing = False  # a pass of this process holds the lock
        named = f"{key}.v{BOARD_VERSION}"
        self.busy_path, self.pass_path = folder / f"{named}.busy", folder / f"{named}.pass"
        self.busy_fd = _open_locked(self.busy_path)  # the board's files, as they are now
        try:
            self.lock_fd = os.open(self.pass_path, os.O_RDWR | os.O_CREAT, 0o600)
            if os.fstat(self.busy_fd).st_size < SLOTS * SLOT.size:
                os.ftruncate(self.busy_fd, SLOTS * SLOT.size)
            self.map = mmap.mmap(self.busy_fd, SLOTS * SLOT.size)
            self.slot = self._free_slot()
        finally:
            fcntl.flock(self.busy_fd, fcntl.LOCK_UN)

    def publish(self, count: int) -> None:
        """This process's requests in flight, for the other processes' workers to see."""
        if self.slot is not None:
            SLOT.pack_into(self.map, self.slot * SLOT.size, self.pid, count, self.started)

    def others(self) -> int:
        """Requests in flight in the other live processes on the database."""
        total = 0
        for pid, count, started in self._slots():
            if count > 0 and pid != self.pid and _alive(pid, started):
                total += count
        return total

    @contextlib.asynccontextmanager
    async def one_pass(self) -> AsyncIterator[None]:
        """Hold the database's pass lock for the ``async with`` block, waiting for it."""
        while self.passing or not self._try_lock():
            await asyncio.sleep(PASS_POLL_S)
        self.passing = True
        try:
            yield
        finally:
            self.passing = False
            fcntl.flock(self.lock_fd, fcntl.LOCK_UN)

    def close(self) -> None:
        """Give the slot back; the last live process on the board removes its files, so
        boards of databases long gone do not pile up (the pass lock goes with its file)."""
        with _locked(self.busy_fd):
            if self.slot is not None:
                SLOT.pack_into(self.map, self.slot * SLOT.size, 0, 0, 0)
            live = (pid and _alive(pid, started) for pid, _, started in self._slots())
            if not any(live):
                for path in (self.pass_path, self.busy_path):
                    path.unlink(missing_ok=True)
        self.map.close()
        os.close(self.busy_fd)
        os.close(self.lock_fd)

    def _try_lock(self) -> bool:
        try:
            fcntl.flock(self.lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True

    def _free_slot(self) -> int | None:
        """A slot never used, or whose process is gone (taken under the board file's lock,
        so two processes joining at once take two); None when all are live: no sharing."""
        for slot, (pid, _, started) in enumerate(self._slots()):
            if pid in (0, self.pid) or not _alive(pid, started):
                SLOT.pack_into(self.map, slot * SLOT.size, self.pid, 0, self.started)
                return slot
        return None

    def _slots(self) -> list[tuple[int, int, int]]:
        """Every slot, read whole: an unfinished ``iter_unpack`` holds the map open."""
        return list(SLOT.iter_unpack(self.map))


_JOINED: dict[str, SharedBoard] = {}


def join(database: Path | str) -> SharedBoard | None:
    """This process's board for ``database`` (one per process, counted per user); None when
    the runtime folder cannot be used (the worker then yields to its own process only)."""
    key = database_key(database)
    board = _JOINED.get(key)
    if board is None:
        try:
            board = _JOINED[key] = SharedBoard(board_folder(), key)
        except OSError as error:
            log.warning("StrataGate's worker yields to this process only: %s", error)
            return None
    board.users += 1
    return board


def leave(board: SharedBoard) -> None:
    """One user fewer; the last gives the slot back."""
    board.users -= 1
    if board.users <= 0 and _JOINED.get(board.key) is board:
        del _JOINED[board.key]
        board.close()


def _open_locked(path: Path) -> int:
    """The board file at ``path``, opened and locked; opened again should the last process
    of the board have removed it meanwhile (a joiner never keeps a board nobody finds)."""
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        fcntl.flock(fd, fcntl.LOCK_EX)
        with contextlib.suppress(FileNotFoundError):
            if os.stat(path).st_ino == os.fstat(fd).st_ino:
                return fd
        os.close(fd)


@contextlib.contextmanager
def _locked(fd: int) -> Iterator[None]:
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)


def start_time(pid: int) -> int:
    """When the process started, in clock ticks since boot (``/proc/PID/stat``'s 22nd
    field); 0 where it cannot be read (no ``/proc``: then the pid alone is checked)."""
    try:
        stat_line = Path(f"/proc/{pid}/stat").read_bytes()
        return int(stat_line.rsplit(b")", 1)[1].split()[19])
    except (OSError, IndexError, ValueError):
        return 0


def _alive(pid: int, started: int) -> bool:
    """``pid`` runs and is the process that took the slot (not a later one given its pid)."""
    if started and start_time(pid) not in (0, started):
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: alive
        return True
    return True
