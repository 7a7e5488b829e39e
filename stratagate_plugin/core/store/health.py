"""What can go wrong with the database file, said in one line, and how to recover.

``describe`` turns a ``sqlite3`` error into a ``StorageError`` naming the file and what to
do; ``check`` runs ``PRAGMA quick_check``/``integrity_check``; ``rebuild_copy`` rebuilds
every index and the full-text tables from the tables themselves (L5 messages and events);
``backup`` copies the file with SQLite's online backup and keeps the newest few.
"""

import os
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import TypeVar

from ..errors import StorageBusy, StorageError
from ..events.storage import EventRules
from .migrations import migrate
from .search_index import ensure_index, register_functions

T = TypeVar("T")
BACKUPS_KEPT = 3
BACKUP_EVERY = timedelta(hours=24)


def describe(path: Path, error: sqlite3.Error) -> StorageError:
    """The one-line explanation of ``error`` raised while using the file at ``path``."""
    text = str(error).lower()
    doctor = f"run 'stratagate doctor --db {path}'"
    if path.is_dir():
        return StorageError(f"{path} is a directory, not a database file: pass a file with --db")
    if "readonly" in text or "read-only" in text:
        return StorageError(
            f"{path} is read-only: StrataGate needs write access to the file and to its "
            "directory (for the -wal and -shm files); fix the permissions or copy it elsewhere"
        )
    if "not a database" in text:
        return StorageError(
            f"{path} is not a StrataGate database (or is damaged beyond reading): "
            f"pass another --db, or {doctor} to restore it from a backup"
        )
    if "malformed" in text or "corrupt" in text:
        return StorageError(f"{path} is damaged ({error}): {doctor} to check and recover it")
    if "unable to open" in text:
        return StorageError(
            f"cannot open {path}: its directory is missing or not writable; check the path"
        )
    if "locked" in text or "busy" in text:
        return StorageBusy(
            f"{path} stayed locked by another process past the busy timeout; try again"
        )
    if "disk i/o" in text or "full" in text:
        return StorageError(f"cannot write {path}: {error} (is the disk full or failing?)")
    return StorageError(f"{path}: {error}")


def probe(path: Path) -> None:
    """Raise the ``StorageError`` that connecting to ``path`` would meet, if any."""
    try:
        sqlite3.connect(path).close()
    except sqlite3.Error as error:
        raise describe(path, error) from error


@dataclass(frozen=True)
class HealthReport:
    """``problems`` empty means the check found the file sound."""

    path: Path
    full: bool
    problems: list[str]

    @property
    def ok(self) -> bool:
        return not self.problems


def check(raw: sqlite3.Connection, path: Path, full: bool = True) -> HealthReport:
    """``integrity_check`` (``full``) or the faster ``quick_check``, at most 20 findings."""
    pragma = "integrity_check" if full else "quick_check"
    rows = [str(row[0]) for row in raw.execute(f"PRAGMA {pragma}(20)").fetchall()]
    problems = [] if rows == ["ok"] else rows
    return HealthReport(path, full, problems)


def on_file(path: Path, use: Callable[[sqlite3.Connection], T]) -> T:
    """``use`` over a plain connection to an existing file: no migration, no job recovery,
    so a damaged file is only read until a repair is asked for."""
    if not path.is_file():
        raise StorageError(f"{path} does not exist or is not a file")
    raw = sqlite3.connect(path, isolation_level=None)
    try:
        return use(raw)
    except sqlite3.Error as error:
        raise describe(path, error) from error
    finally:
        raw.close()


def check_readable(raw: sqlite3.Connection, path: Path, full: bool) -> HealthReport:
    """``check``, with a file too damaged for the check to run reported, not raised."""
    try:
        return check(raw, path, full)
    except sqlite3.DatabaseError as error:
        return HealthReport(path, full, [str(error)])


def rebuild_copy(path: Path, target: Path, events: EventRules) -> HealthReport:
    """Copy every stored row of ``path`` into a freshly migrated ``target`` and build all
    indexes and search tables anew there (events' stored documents by ``events``, the
    events capability's rules); ``target``'s full check is returned.

    Reads scan the tables themselves (``NOT INDEXED``), so a damaged index page cannot stop
    it; a damaged table page can, and then only a backup helps."""
    fresh = sqlite3.connect(target, isolation_level=None)
    try:
        fresh.row_factory = sqlite3.Row
        register_functions(fresh)
        migrate(fresh)
        fresh.execute("ATTACH DATABASE ? AS old", (str(path),))
        fresh.execute("BEGIN IMMEDIATE")
        for table in _copied_tables(fresh):
            _copy_table(fresh, table)
        fresh.execute("DELETE FROM main.meta WHERE key = 'fts_tokenizer_version'")
        ensure_index(fresh, events)
        fresh.execute("COMMIT")
        fresh.execute("DETACH DATABASE old")
        return check_readable(fresh, target, full=True)
    except sqlite3.Error as error:
        raise describe(path, error) from error
    finally:
        fresh.close()


def _copied_tables(raw: sqlite3.Connection) -> list[str]:
    """Plain tables in both files, search tables (rebuilt from the rows) left out."""
    query = (
        "SELECT name FROM {schema}.sqlite_master WHERE type = 'table' AND sql NOT LIKE "
        "'CREATE VIRTUAL%' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '%fts%'"
    )
    fresh = {row[0] for row in raw.execute(query.format(schema="main"))}
    old = {row[0] for row in raw.execute(query.format(schema="old"))}
    return sorted(fresh & old)


def _copy_table(raw: sqlite3.Connection, table: str) -> None:
    fresh = [row[1] for row in raw.execute(f'PRAGMA main.table_info("{table}")')]
    old = {row[1] for row in raw.execute(f'PRAGMA old.table_info("{table}")')}
    columns = ", ".join(f'"{name}"' for name in fresh if name in old)
    raw.execute(f'DELETE FROM main."{table}"')
    raw.execute(
        f'INSERT INTO main."{table}" ({columns}) SELECT {columns} FROM old."{table}" NOT INDEXED'
    )


def backup_dir(path: Path) -> Path:
    return path.parent / "backups"


def backups_of(path: Path) -> list[Path]:
    """This file's backups, newest first."""
    folder = backup_dir(path)
    if not folder.is_dir():
        return []
    return sorted(folder.glob(f"{path.stem}.*.db"), reverse=True)


def backup_due(path: Path, now: datetime) -> bool:
    newest = backups_of(path)
    if not newest:
        return True
    return now.timestamp() - newest[0].stat().st_mtime >= BACKUP_EVERY.total_seconds()


def backup(raw: sqlite3.Connection, path: Path, now: datetime) -> Path | None:
    """Copy the open database into ``backups/`` when it passes ``quick_check``; keep the
    newest ``BACKUPS_KEPT``. A damaged copy is discarded so it never replaces a good one."""
    folder = backup_dir(path)
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / f"{path.stem}.{now:%Y%m%dT%H%M%SZ}.db"
    partial = target.with_suffix(f".{os.getpid()}.partial")
    copy = sqlite3.connect(partial)
    try:
        raw.backup(copy)
        sound = check(copy, partial, full=False).ok
    finally:
        copy.close()
    if not sound:
        partial.unlink(missing_ok=True)
        return None
    partial.replace(target)
    for old in backups_of(path)[BACKUPS_KEPT:]:
        old.unlink(missing_ok=True)
    return target
