"""``stratagate spaces``: every memory space with its name and what it holds.

Memory is kept per space, and by default a space per working directory (the profile's
``namespace_mode``), so a chat started elsewhere sees none of it; this lists them all and
marks with ``*`` the one ``chat`` uses here.
"""

import argparse
import json
from dataclasses import asdict
from typing import Any

from ..core.errors import InvalidInput
from ..core.profile.spaces import SpaceSummary
from . import space_delete
from .common import add_db_option, chat_space, open_memory


def register(commands: Any) -> None:
    parser = commands.add_parser("spaces", help="list memory spaces and what each holds")
    add_db_option(parser)
    parser.add_argument("--profile", default=None, help="profile whose chat space is marked")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.set_defaults(handler=list_spaces)
    space_delete.register(parser.add_subparsers(dest="spaces_action", metavar="ACTION"))


async def list_spaces(args: argparse.Namespace) -> int:
    memory = await open_memory(args)
    async with memory:
        spaces = await memory.spaces.summaries()
    here = current_space(args)
    if args.json:
        rows = [space_json(space, space.namespace == here) for space in spaces]
        print(json.dumps(rows, ensure_ascii=False, indent=2))
        return 0
    print_spaces(spaces, here)
    return 0


def current_space(args: argparse.Namespace) -> str | None:
    """Chat's space here, or None when the profile keeps one per session."""
    try:
        return chat_space(args)
    except InvalidInput:
        return None


def space_json(space: SpaceSummary, here: bool) -> dict[str, Any]:
    return {"name": space.display_name, **asdict(space), "here": here}


def print_spaces(spaces: list[SpaceSummary], here: str | None) -> None:
    if not spaces:
        print("(no memory spaces yet)")
    for space in spaces:
        mark = "*" if space.namespace == here else " "
        print(f"{mark} {space.display_name:<20} {space.namespace}")
        print(f"    {space.holdings()}; last used {space.updated_at[:16].replace('T', ' ')}")
    if here is not None and all(space.namespace != here for space in spaces):
        print(f"* chat here would use {here} (empty)")
