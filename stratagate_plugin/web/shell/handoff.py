"""One-time hand-offs from a page to the post that confirms it, in any web process.

The purge page keeps the words it will erase on the server under a one-time token (no page,
URL or hidden field repeats them); the confirm post may reach another of ``serve``'s web
processes than the one that showed the plan. With a ``folder`` (``serve`` makes one private
directory for all its processes, on tmpfs where there is one: the words never reach a
disk) each hand-off is a file there, read and removed by whichever process takes it; without
one, a dict in this process (one process, the tests' in-process app). Either way a token is
taken once, within ``ttl_s``, and at most ``limit`` wait at a time (the oldest go first).
"""

import os
import pickle
import secrets
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

TTL_S = 600
LIMIT = 32
TMPFS = Path("/dev/shm")


class Handoff:
    """Values waiting for their confirming post, by one-time token."""

    def __init__(self, folder: Path | None = None, ttl_s: float = TTL_S, limit: int = LIMIT):
        self.folder = folder
        self.ttl_s = ttl_s
        self.limit = limit
        self._here: dict[str, tuple[float, Any]] = {}

    def put(self, value: Any) -> str:
        """Keep ``value``; the token that takes it back."""
        self._forget_stale()
        token = secrets.token_urlsafe(16)
        if self.folder is None:
            self._here[token] = (time.time(), value)
        else:
            self._write(token, value)
        return token

    def take(self, token: str) -> Any | None:
        """The value of ``token``, once, while fresh (else None)."""
        if self.folder is None:
            created, value = self._here.pop(token, (0.0, None))
        else:
            created, value = self._read(token)
        return value if time.time() - created <= self.ttl_s else None

    def _write(self, token: str, value: Any) -> None:
        assert self.folder is not None
        partial = self.folder / f"{token}.partial"
        fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as file:
            pickle.dump(value, file)
        partial.replace(self.folder / token)

    def _read(self, token: str) -> tuple[float, Any]:
        """Claimed by renaming it away first: of two processes taking one token, one wins."""
        assert self.folder is not None
        if not token.replace("-", "").replace("_", "").isalnum():
            return 0.0, None
        claimed = self.folder / f"{token}.taken-{os.getpid()}"
        try:
            (self.folder / token).rename(claimed)
        except OSError:
            return 0.0, None
        try:
            created = claimed.stat().st_mtime
            with claimed.open("rb") as file:
                return created, pickle.load(file)  # written by this serve's own processes
        except OSError:
            return 0.0, None
        finally:
            claimed.unlink(missing_ok=True)

    def _forget_stale(self) -> None:
        now = time.time()
        if self.folder is None:
            for token in [t for t, (at, _) in self._here.items() if now - at > self.ttl_s]:
                del self._here[token]
            while len(self._here) >= self.limit:
                del self._here[next(iter(self._here))]
            return
        waiting = sorted((p for p in self.folder.iterdir() if "." not in p.name), key=_modified)
        excess = len(waiting) - self.limit + 1  # room for the one being put
        for index, path in enumerate(waiting):
            if index < excess or now - _modified(path) > self.ttl_s:
                path.unlink(missing_ok=True)


def _modified(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except FileNotFoundError:
        return 0.0


PREFIX = "stratagate-serve-"


def private_folder(base: Path | None = None) -> Path:
    """A directory only this user reads, on tmpfs when the machine has one, named for this
    process; the folders of ``serve`` processes that died without removing theirs (SIGKILL)
    are removed first, so unconfirmed plans do not outlive their server until reboot."""
    if base is None:
        base = TMPFS if TMPFS.is_dir() and os.access(TMPFS, os.W_OK) else None
    parent = base or Path(tempfile.gettempdir())
    remove_orphans(parent)
    return Path(tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-", dir=parent))


def remove_orphans(parent: Path) -> list[Path]:
    """This user's hand-off folders in ``parent`` whose serving process is gone, removed."""
    removed = []
    for folder in parent.glob(f"{PREFIX}*"):
        owner = _owner_pid(folder)
        if owner is None or _alive(owner) or folder.stat().st_uid != os.getuid():
            continue
        remove_folder(folder)
        removed.append(folder)
    return removed


def _owner_pid(folder: Path) -> int | None:
    """The pid in ``stratagate-serve-<pid>-<random>``; None for another name (left alone)."""
    parts = folder.name[len(PREFIX) :].split("-", 1)
    return int(parts[0]) if len(parts) == 2 and parts[0].isdigit() else None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process: alive, and not ours to judge
    return True


def remove_folder(folder: Path) -> None:
    """What is left in it (plans never confirmed, folders of them), then the directory."""
    shutil.rmtree(folder, ignore_errors=True)
