"""``stratagate db``: the database itself — migrate it, copy a whole memory between SQLite
and PostgreSQL.

A location is a file path or a ``postgresql://`` URL. ``db copy`` copies every table
(ids and times as they are) into a database that holds no memory yet, in one transaction,
then reads both back and compares every table; a difference fails the command.
"""

import argparse
import time
from typing import Any

from ..core.events.documents import EVENT_RULES
from ..core.store.copy import copy_between, migrate
from ..core.store.postgres.db import database_label
from ..core.store.units import is_database_url
from ..memory_plugin.runtime import DATABASE_VARIABLE
from .common import database_of


def register(commands: Any) -> None:
    parser = commands.add_parser(
        "db", help="the database: migrate it, copy a memory between SQLite and PostgreSQL"
    )
    actions = parser.add_subparsers(dest="db_action", required=True, metavar="ACTION")
    made = actions.add_parser("migrate", help="create or migrate a database to this version")
    made.add_argument(
        "location",
        nargs="?",
        default=None,
        help="a file or a postgresql:// URL (default: the profile's database:, else "
        f"${DATABASE_VARIABLE}, else $STRATAGATE_HOME/memory.db)",
    )
    made.set_defaults(handler=run_migrate)
    copied = actions.add_parser(
        "copy", help="copy a whole memory into a new file or an empty PostgreSQL database"
    )
    copied.add_argument("source", help="the memory to copy: a file or a postgresql:// URL")
    copied.add_argument("destination", help="a new file, or an empty postgresql:// database")
    copied.set_defaults(handler=run_copy)


async def run_migrate(args: argparse.Namespace) -> int:
    location = args.location or str(database_of(args))
    await migrate(location, EVENT_RULES)
    print(f"{shown(location)} is at this version's schema")
    return 0


async def run_copy(args: argparse.Namespace) -> int:
    started = time.monotonic()
    report = await copy_between(args.source, args.destination, EVENT_RULES)
    took = time.monotonic() - started
    if report.mismatched:
        print(f"error: the copy differs from the source in {', '.join(report.mismatched)}")
        return 1
    print(
        f"copied {report.total:,} rows of {len(report.rows)} tables from {shown(args.source)} "
        f"to {shown(args.destination)} in {took:.1f} s; every table checked equal"
    )
    return 0


def shown(location: str) -> str:
    """A URL as its database and host only: never a password on the screen."""
    return database_label(location) if is_database_url(location) else location
