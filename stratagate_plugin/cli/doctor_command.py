"""``stratagate doctor``: check the database file and say how to recover it; with
``--fix-profile``, rewrite a profile without its wrong or unknown settings."""

import argparse
import shutil
from pathlib import Path
from typing import Any

from ..core.doctor import service as doctor
from ..core.errors import InvalidInput
from ..core.store.health import HealthReport
from ..core.store.postgres.health import ServerReport
from ..harness.errors import HostError
from ..harness.profiles import (
    DEFAULT_PROFILE,
    Profile,
    profile_path,
    read_profile_data,
    repaired,
    save_profile,
)
from ..memory_plugin.settings import SETTINGS_ID, without_bad_settings
from .common import add_db_option, database_of

SERVER_REPAIRS = (
    "--restore and --rebuild-indexes repair a SQLite file; on PostgreSQL, restore a pg_dump "
    "with pg_restore and rebuild an index with REINDEX (README: Running on PostgreSQL)"
)


def register(commands: Any) -> None:
    parser = commands.add_parser(
        "doctor", help="check the database file (integrity, backups) and repair it"
    )
    add_db_option(parser)
    parser.add_argument("--quick", action="store_true", help="quick_check instead of a full check")
    repair = parser.add_mutually_exclusive_group()
    repair.add_argument(
        "--rebuild-indexes",
        action="store_true",
        help="rebuild every index and the search tables from the stored messages and events",
    )
    repair.add_argument(
        "--restore",
        nargs="?",
        const="newest",
        metavar="BACKUP",
        help="put a backup (default: the newest) in place; the damaged file is kept aside",
    )
    repair.add_argument(
        "--fix-profile",
        action="store_true",
        help="rewrite --profile without its wrong or unknown settings (their defaults apply); "
        "the original is kept as NAME.yml.bak",
    )
    parser.add_argument(
        "--profile",
        default=DEFAULT_PROFILE,
        help="the profile --fix-profile repairs, and whose database: the check reads",
    )
    parser.set_defaults(handler=run_doctor)


async def run_doctor(args: argparse.Namespace) -> int:
    if args.fix_profile:
        return fix_profile(args.profile)
    where = database_of(args)
    if isinstance(where, str):
        if args.restore or args.rebuild_indexes:
            raise InvalidInput(SERVER_REPAIRS)
        return _server_report(await doctor.diagnose_server(where))
    path: Path = where
    if args.restore:
        chosen = None if args.restore == "newest" else Path(args.restore)
        used, aside = await doctor.restore_backup(path, chosen)
        print(f"restored {path} from {used}; the damaged file is kept as {aside}")
        return _report(await doctor.diagnose(path))
    if args.rebuild_indexes:
        print(f"rebuilding {path} from its stored rows…")
        report, kept = await doctor.rebuild_indexes(path)
        if kept is not None:
            print(f"rebuilt {path}; the damaged file is kept as {kept}")
        return _report(report)
    return _report(await doctor.diagnose(path, full=not args.quick))


def fix_profile(name: str) -> int:
    """Drop each wrong or unknown field of the profile and of the memory plugin's section,
    keeping the file as it was beside it; one line per field removed."""
    path = profile_path(name)
    if not path.exists():
        raise HostError(f"no profile {path}")
    data, removed = repaired(read_profile_data(path))
    sections = data.get("settings") or {}
    if isinstance(sections.get(SETTINGS_ID), dict):
        sections[SETTINGS_ID], dropped = without_bad_settings(sections[SETTINGS_ID])
        removed += [f"settings.{SETTINGS_ID}.{line}" for line in dropped]
    if not removed:
        print(f"{path}: ok, nothing to fix")
        return 0
    backup = path.with_name(f"{path.name}.bak")
    shutil.copy2(path, backup)
    save_profile(Profile.model_validate({**data, "name": name}))
    print(f"{path}: removed {len(removed)} wrong setting(s), their defaults apply now:")
    for line in removed:
        print(f"  {line}")
    print(f"the original is kept as {backup}")
    return 0


def _report(report: HealthReport) -> int:
    check = "integrity_check" if report.full else "quick_check"
    if report.ok:
        print(f"{report.path}: ok ({check})")
    else:
        print(f"{report.path}: {len(report.problems)} problem(s) found by {check}:")
        for problem in report.problems:
            print(f"  {problem}")
        print(_advice(report.path))
    _print_backups(report.path)
    return 0 if report.ok else 1


def _server_report(report: ServerReport) -> int:
    """A server database: its checks, and backups as the server's business."""
    if report.ok:
        held = ", ".join(f"{n:,} {what}" for what, n in report.counts.items())
        checked = "indexes valid, search rows in step"
        print(f"{report.name}: ok (schema {report.version}, {checked}; {held})")
    else:
        print(f"{report.name}: {len(report.problems)} problem(s):")
        for problem in report.problems:
            print(f"  {problem}")
        print(
            "To recover: `stratagate db copy URL memory.db` keeps every row in a file; "
            "REINDEX rebuilds an invalid index (see README, Running on PostgreSQL)"
        )
    print(
        "backups: the server's own — pg_dump --format=custom --file=memory.dump 'URL'; "
        "restore with pg_restore --dbname='URL' memory.dump"
    )
    return 0 if report.ok else 1


def _advice(path: Path) -> str:
    return (
        "To recover:\n"
        f"  stratagate doctor --db {path} --rebuild-indexes   rebuilds every index and the "
        "search tables from the stored messages and events (fixes damaged index pages)\n"
        f"  stratagate doctor --db {path} --restore           if problems remain: puts the "
        "newest backup in place, keeping the damaged file beside it"
    )


def _print_backups(path: Path) -> None:
    found = doctor.backups(path)
    if not found:
        print("backups: none yet (one is made at the first open of each day)")
        return
    print("backups (newest first):")
    for backup in found:
        print(f"  {backup}")
