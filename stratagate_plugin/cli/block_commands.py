"""``stratagate blocks`` (of chat's memory space here, or ``--space``) and ``stratagate expand``."""

import argparse
from typing import Any

from .common import add_db_option, add_space_option, open_memory, print_blocks, resolve_space


def register(commands: Any) -> None:
    listing = commands.add_parser("blocks", help="list blocks with their current decayed level")
    add_db_option(listing)
    add_space_option(listing)
    listing.add_argument("--thread", default=None)
    listing.add_argument("--json", action="store_true", help="machine-readable output")
    listing.set_defaults(handler=list_blocks)
    expand = commands.add_parser("expand", help="lift a ready block to a level and re-anchor")
    add_db_option(expand)
    expand.add_argument("block_id")
    expand.add_argument("level", help="L0..L5, 0..5, raw or next")
    expand.set_defaults(handler=expand_block)


async def list_blocks(args: argparse.Namespace) -> int:
    memory = await open_memory(args)
    async with memory:
        space = await resolve_space(args, memory)
        views = await memory.blocks.views(space, args.thread)
        titles = await memory.blocks.thread_titles(space)
    print_blocks(views, args.json, titles)
    return 0


async def expand_block(args: argparse.Namespace) -> int:
    memory = await open_memory(args)
    async with memory:
        view = await memory.blocks.expand(args.block_id, args.level, source="user", strict=True)
    print(f"{view.block.id} now at L{view.current_level} (anchored by user):\n")
    print(view.text)
    return 0
