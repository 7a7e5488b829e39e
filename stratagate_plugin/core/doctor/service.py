"""``stratagate doctor``'s use cases, which work on a file even when it cannot be opened.

They use a plain connection (no migration, no recovery of jobs) so a damaged file is only
read until the user chooses a repair: rebuild the indexes from the stored rows (L5 messages
and event cards are tables; every index and the full-text search can be rebuilt from
them), or restore the newest sound backup, keeping the damaged file beside it.
"""

import asyncio
import shutil
from pathlib import Path

from ..clock import utc_now
from ..errors import StorageError
from ..events.documents import EVENT_RULES
from ..store import health
from ..store.health import HealthReport
from ..store.postgres.health import ServerReport, check_server


async def diagnose(path: Path, full: bool = True) -> HealthReport:
    """``integrity_check`` (``full``) or ``quick_check`` of the file at ``path``."""
    return await asyncio.to_thread(
        health.on_file, path, lambda raw: health.check_readable(raw, path, full)
    )


async def diagnose_server(url: str) -> ServerReport:
    """The schema's version, invalid indexes, and search rows out of step with what they
    index, for a memory on a PostgreSQL server."""
    return await asyncio.to_thread(check_server, url)


async def rebuild_indexes(path: Path) -> tuple[HealthReport, Path | None]:
    """Rebuild the file from its stored rows into a new file with fresh indexes and search
    tables; when that copy is sound it takes the file's place and the damaged file is kept
    beside it (returned). A copy with problems is left as ``<name>.rebuilt`` for a look."""
    if not path.is_file():
        raise StorageError(f"{path} does not exist or is not a file")
    target = path.with_name(f"{path.name}.rebuilt")
    target.unlink(missing_ok=True)
    try:
        report = await asyncio.to_thread(health.rebuild_copy, path, target, EVENT_RULES)
    except StorageError as error:
        target.unlink(missing_ok=True)
        raise StorageError(
            f"{error}; a table is damaged, not only an index: restore a backup with "
            f"'stratagate doctor --db {path} --restore'"
        ) from None
    if not report.ok:
        return report, None
    aside = _aside(path)
    await asyncio.to_thread(_swap_in, path, target, aside)
    target.unlink(missing_ok=True)
    return HealthReport(path, report.full, []), aside


def backups(path: Path) -> list[Path]:
    """The file's automatic backups, newest first."""
    return health.backups_of(path)


async def restore_backup(path: Path, backup: Path | None = None) -> tuple[Path, Path]:
    """Put ``backup`` (default: the newest) in place of ``path``; the damaged file and its
    ``-wal``/``-shm`` move to ``<name>.damaged-<time>``. Returns (backup used, kept aside)."""
    chosen = backup or next(iter(health.backups_of(path)), None)
    if chosen is None or not chosen.is_file():
        raise StorageError(f"no backup of {path} to restore (looked in {health.backup_dir(path)})")
    aside = _aside(path)
    await asyncio.to_thread(_swap_in, path, chosen, aside)
    return chosen, aside


def _aside(path: Path) -> Path:
    return path.with_name(f"{path.name}.damaged-{utc_now():%Y%m%dT%H%M%SZ}")


def _swap_in(path: Path, backup: Path, aside: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        current = Path(f"{path}{suffix}")
        if current.exists():
            current.replace(Path(f"{aside}{suffix}"))
    shutil.copyfile(backup, path)
