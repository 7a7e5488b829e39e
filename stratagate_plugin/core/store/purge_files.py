"""The copies of the words that are not rows: free pages, the WAL, and the daily backups.

SQLite keeps the old text of a changed row in places a ``SELECT`` never sees: the freed
space of a page (unless ``secure_delete`` zeroes it), the WAL until a checkpoint copies it
back and truncates it, and the copies under ``backups/``. A purge runs with
``secure_delete`` on, ends with ``wal_checkpoint(TRUNCATE)``, scans the file's bytes and
runs ``VACUUM`` when any remain (text freed before the purge, with ``secure_delete`` off,
may still sit in free pages); each backup holding the words gets the same purge on a copy
that replaces it, or is deleted when that copy still holds them.
"""

import os
import shutil
import sqlite3
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from ..purge.storage import Words as Needles
from .health import backup_dir, backups_of
from .purge_rows import Rederivers, erase_words, leftovers, plan_words
from .search_index import register_functions
from .space_purge_rows import delete_space, space_rows

CHUNK_BYTES = 8 << 20
OVERLAP_BYTES = 64 << 10  # longer than any words a purge is given


def database_files(path: Path) -> list[Path]:
    """The database file and its ``-wal`` and ``-shm`` companions (those that exist)."""
    found = [path, Path(f"{path}-wal"), Path(f"{path}-shm")]
    return [p for p in found if p.exists()]


def byte_hits(path: Path, needles: Needles) -> int:
    """Occurrences in the file's raw bytes, read in chunks (a large file is never read
    whole); a match across two chunks is counted once, in the chunk where it ends."""
    total, tail = 0, b""
    try:
        with path.open("rb") as handle:
            while chunk := handle.read(CHUNK_BYTES):
                data = tail + chunk
                total += sum(1 for m in needles.byte_pattern.finditer(data) if m.end() > len(tail))
                tail = data[-OVERLAP_BYTES:]
    except FileNotFoundError:
        return 0
    return total


def scan(path: Path, needles: Needles) -> dict[str, int]:
    """Occurrences of the words in the raw bytes of the database, its WAL and shm, and
    every backup: what ``purge --check`` and the byte tests read."""
    files = [*database_files(path), *stale_copies(path)]
    for backup in backups_of(path):
        files += [backup, *(p for p in companions(backup) if p.exists())]
    return {str(p): byte_hits(p, needles) for p in files}


def stale_copies(path: Path) -> list[Path]:
    """Copies a purge killed mid-rewrite left in ``backups/`` (they may hold the words)."""
    folder = backup_dir(path)
    return sorted(folder.glob("*.purging")) if folder.is_dir() else []


def remove_stale_copies(path: Path) -> list[str]:
    gone = stale_copies(path)
    for copy in gone:
        copy.unlink(missing_ok=True)
    return [str(p) for p in gone]


def backups_holding(path: Path, needles: Needles) -> dict[str, int]:
    return {str(p): n for p in backups_of(path) if (n := byte_hits(p, needles))}


def set_secure_delete(raw: sqlite3.Connection, on: bool) -> None:
    raw.execute(f"PRAGMA secure_delete = {'ON' if on else 'OFF'}")


def checkpoint(raw: sqlite3.Connection) -> tuple[int, int, int]:
    """``wal_checkpoint(TRUNCATE)``: the log copied back, then cut to zero bytes. (busy,
    log pages, pages checkpointed); busy 1 means a reader kept the log from being cut."""
    row = raw.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    return int(row[0]), int(row[1]), int(row[2])


def compact(raw: sqlite3.Connection) -> None:
    """``VACUUM`` (outside any transaction) and cut the log it wrote."""
    raw.execute("VACUUM")
    checkpoint(raw)


def scrub_backup(path: Path, needles: Needles, now: datetime, rederive: Rederivers) -> str:
    """The purge applied to a copy of the backup, which then replaces it ("rewritten");
    a copy that cannot be purged or still holds the words is deleted with it ("deleted")."""

    def purge(raw: sqlite3.Connection) -> None:
        erase_words(raw, needles, plan_words(raw, needles), now, rederive)

    def clean(raw: sqlite3.Connection, work: Path) -> bool:
        return not leftovers(raw, needles) and byte_hits(work, needles) == 0

    return rewrite_backup(path, purge, clean)


def space_in_backups(path: Path, space: str) -> dict[str, int]:
    """Each backup holding rows of the space, with how many."""
    found = {}
    for backup in backups_of(path):
        try:
            raw = sqlite3.connect(f"file:{backup}?immutable=1", uri=True)  # no -wal, -shm
            try:
                rows = sum(space_rows(raw, space).values())
            finally:
                raw.close()
        except sqlite3.Error:
            rows = 1  # unreadable: it is rewritten or deleted like one holding the space
        if rows:
            found[str(backup)] = rows
    return found


def delete_space_in_backup(path: Path, space: str) -> str:
    """The space deleted from a copy of the backup, which replaces it; else deleted."""
    return rewrite_backup(
        path,
        lambda raw: delete_space(raw, space),
        lambda raw, _work: not space_rows(raw, space),
    )


def rewrite_backup(
    path: Path,
    change: Callable[[sqlite3.Connection], object],
    clean: Callable[[sqlite3.Connection, Path], bool],
) -> str:
    """``change`` applied to a copy of the backup in one transaction (``secure_delete``
    on, then ``VACUUM``); the copy replaces the backup when ``clean`` ("rewritten"), else
    both are deleted ("deleted")."""
    work = path.with_suffix(".purging")
    shutil.copyfile(path, work)
    try:
        ok = _change_file(work, change, clean)
    except sqlite3.Error:
        ok = False
    for stale in companions(path):  # a log beside the old file must not meet the new one
        stale.unlink(missing_ok=True)
    if ok:
        _fsync(work)
        os.replace(work, path)
        return "rewritten"
    work.unlink(missing_ok=True)
    path.unlink(missing_ok=True)
    return "deleted"


def companions(path: Path) -> list[Path]:
    return [Path(f"{path}-wal"), Path(f"{path}-shm"), Path(f"{path}-journal")]


def _change_file(
    path: Path,
    change: Callable[[sqlite3.Connection], object],
    clean: Callable[[sqlite3.Connection, Path], bool],
) -> bool:
    raw = sqlite3.connect(path, isolation_level=None)
    try:
        raw.row_factory = sqlite3.Row
        register_functions(raw)
        raw.execute("PRAGMA journal_mode = DELETE")
        set_secure_delete(raw, True)
        raw.execute("BEGIN IMMEDIATE")
        try:
            change(raw)
        except BaseException:
            raw.execute("ROLLBACK")
            raise
        raw.execute("COMMIT")
        raw.execute("VACUUM")
        return clean(raw, path)
    finally:
        raw.close()


def _fsync(path: Path) -> None:
    with path.open("rb+") as handle:
        os.fsync(handle.fileno())
