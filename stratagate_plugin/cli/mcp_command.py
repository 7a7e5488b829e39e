"""``stratagate mcp``: the memory tools served to an MCP client (Claude Desktop, Cursor, …)
over stdio.

The client starts this command and talks JSON-RPC on its stdin and stdout, so nothing else
is written there: the one line naming the memory space and every log go to stderr. The
memory is the one ``chat`` uses (the profile's database, block size and model), in the
space a chat started in this directory uses unless ``--space`` names another (a new name
starts a new space). The derivation worker runs in this process; the server stops when
the client closes stdin.
"""

import argparse
import logging
import sys
from pathlib import Path
from typing import Any

from ..core.profile.spaces import display_name
from ..memory_plugin.settings import derivation_model
from .common import (
    add_db_option,
    add_space_option,
    pick_space,
    plugin_settings,
    profile_model,
    settle_heap,
)


def register(commands: Any) -> None:
    parser = commands.add_parser(
        "mcp",
        help="serve the memory tools to an MCP client over stdio",
        description="Serve the memory tools to an MCP client (Claude Desktop, Cursor, ...) "
        "over stdio; the client starts this command. A --space name that no space has "
        "yet starts a new space.",
    )
    add_space_option(parser)
    add_db_option(parser)
    parser.set_defaults(handler=run_mcp)


async def run_mcp(args: argparse.Namespace) -> int:
    # Imported here: the MCP SDK takes longer to import than the rest of the CLI together,
    # and no other command needs it.
    from ..mcp_server.connection import Connection
    from ..mcp_server.server import serve_stdio

    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="%(message)s")
    settings = plugin_settings(args)
    settings["model"] = derivation_model(settings, profile_model(args))
    if args.db is not None:
        settings["database"] = str(args.db)
    connection = await Connection.open(settings, Path.cwd(), args.profile)
    try:
        if args.space is not None:
            spaces = await connection.runtime.memory.spaces.summaries()
            connection.runtime.space = pick_space(args.space, spaces, create=True)
        space = connection.namespace
        print(
            f"StrataGate MCP server on stdio: memory space {display_name(space)!r} "
            f"({space}), session {connection.session.id}",
            file=sys.stderr,
            flush=True,
        )
        settle_heap()
        await serve_stdio(connection)
    finally:
        await connection.close()
    return 0
