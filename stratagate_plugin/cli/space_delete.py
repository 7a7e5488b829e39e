"""``stratagate spaces delete NAME``: a whole memory space erased, after showing what goes.

Every row of the space (messages, blocks, events, graph, topics, receipts, jobs, the search
index's rows), its rows in every backup (each rewritten without them, or deleted), and the
session files of its conversations; the file is vacuumed after. Nothing changes without
``--yes`` or a "y" typed at a terminal.
"""

import argparse
import json
import sys
from typing import Any

from ..core.curation.receipts import count
from ..harness.session_purge import delete_session_files, session_files_of
from .common import add_db_option, open_memory, pick_space
from .purge_command import confirmed


def register(actions: Any) -> None:
    text = "delete a memory space and every copy of it (plan first, then --yes)"
    parser = actions.add_parser("delete", help=text, description=text[0].upper() + text[1:] + ".")
    add_db_option(parser)
    parser.add_argument("name", help="the space: its name as `stratagate spaces` lists it")
    parser.add_argument("--yes", "-y", action="store_true", help="delete without asking")
    parser.add_argument("--json", action="store_true", help="machine-readable receipt")
    parser.set_defaults(handler=delete_space)


async def delete_space(args: argparse.Namespace) -> int:
    memory = await open_memory(args)
    async with memory:
        space = pick_space(args.name, await memory.spaces.summaries())
        plan = await memory.purge.space_deletion_plan(space)
        sessions = session_files_of(plan.threads)
        out = sys.stderr if args.json else sys.stdout
        print(f"Deleting memory space {space} erases, for good:", file=out)
        print("  " + ", ".join(f"{table} {n}" for table, n in plan.rows.items()), file=out)
        for name, rows in plan.backups.items():
            print(f"  backup to rewrite without it (or delete): {name} ({rows} rows)", file=out)
        for path in sessions:
            print(f"  session file to delete: {path}", file=out)
        if not args.yes and not confirmed(f"space {space}"):
            print("nothing was changed", file=sys.stderr)
            return 1
        deleted_sessions = delete_session_files(sessions)
        done = await memory.purge.delete_space(space, sessions=deleted_sessions)
    if args.json:
        print(json.dumps(done.model_dump(mode="json"), ensure_ascii=False, indent=2))
        return 0
    rows = sum(done.deleted.values())
    print(
        f"deleted memory space {space}: {count(rows, 'row')}, "
        f"{count(len(deleted_sessions), 'session file')}; "
        f"{count(len(done.backups), 'backup')} rewritten (receipt {done.receipt.id})"
    )
    return 0
