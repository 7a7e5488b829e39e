"""The MCP server: the plugin's memory tools, unchanged, behind the protocol's tool calls.

The tools are the plugin's typed functions (``memory_plugin.tools``) made ``Tool``s by the
harness's own builder, so the names, JSON schemas, descriptions, argument checks and the
evidence gate are the ones the agent sees in ``stratagate chat``; ``memory_record_turn``
is added for clients that want their turns remembered. The SDK's low-level ``Server``
carries them (its ``MCPServer`` would derive schemas from the signatures again and expose
the host-filled call context as an argument).

Failures follow the protocol: an unknown tool is a JSON-RPC error (invalid params); bad
arguments and refusals (a ref from another batch, an unknown id) are tool results marked
``isError`` whose text is the one line the plugin's agent would read.
"""

import logging
from collections.abc import Mapping
from importlib import metadata
from typing import Any

import mcp_types as types
from mcp.server import Server
from mcp.shared.exceptions import MCPError

from ..core.foreground import serving
from ..core.text.clean import valid_text
from ..harness.tools import ToolArgumentsError, as_tool, result_text
from ..harness.types import Tool
from ..memory_plugin.protocol import PROTOCOL
from ..memory_plugin.tools import memory_tools
from .connection import Connection
from .recording import noting_proposals, record_turn_tool
from .transport import checked_stdio

SERVER_NAME = "stratagate"
PROFILE_TOOL = "memory_profile_update"
INSTRUCTIONS = (
    PROTOCOL
    + """
Over MCP: this server does not see the conversation. To have it remembered, call
memory_record_turn once per turn with the user's message and your final answer. A profile
change is first a proposal here: when the user asked for it, recording the turn applies it;
when you propose it yourself, say the field and value, and the user's next recorded message
agrees or refuses."""
)

log = logging.getLogger(__name__)


def served_tools(connection: Connection) -> dict[str, Tool]:
    """The plugin's tools over this connection's runtime, then ``memory_record_turn``."""
    tools = [as_tool(function) for function in memory_tools(connection.runtime)]
    tools.append(as_tool(record_turn_tool(connection)))
    served = {tool.name: tool for tool in tools}
    served[PROFILE_TOOL] = noting_proposals(connection, served[PROFILE_TOOL])
    return served


def build_server(connection: Connection) -> Server[Any]:
    tools = served_tools(connection)
    listing = types.ListToolsResult(
        tools=[
            types.Tool(name=tool.name, description=tool.description, input_schema=tool.parameters)
            for tool in tools.values()
        ]
    )

    async def list_tools(
        ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return listing

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        return await run_tool(tools, connection, params.name, params.arguments or {})

    return Server(
        SERVER_NAME,
        version=_version(),
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


async def run_tool(
    tools: Mapping[str, Tool], connection: Connection, name: str, arguments: dict[str, Any]
) -> types.CallToolResult:
    tool = tools.get(name)
    if tool is None:
        known = ", ".join(sorted(tools))
        raise MCPError(types.INVALID_PARAMS, f"unknown tool {name!r} (available tools: {known})")
    try:
        with serving():  # the worker in this process yields to tool calls
            result = await tool.implementation(arguments, connection.call())
    except MCPError:  # a protocol error the tool raised itself (an over-long message)
        raise
    except ToolArgumentsError as error:
        return _error(f"invalid arguments for {name}: {error}")
    except Exception as error:  # as the harness does: the model reads one line and goes on
        log.warning("tool %s failed: %s", name, error)
        log.debug("tool %s traceback", name, exc_info=True)
        return _error(f"{name} failed: {error}")
    structured = result if isinstance(result, dict) else None
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=valid_text(result_text(result)))],
        structured_content=structured,
    )


def _error(text: str) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=f"Error: {text}")], is_error=True
    )


async def serve_stdio(connection: Connection) -> None:
    """Serve until the client closes stdin; stdout carries protocol messages only (fd 1
    points at stderr while serving, so a stray print cannot break a frame), and every line
    that is not one valid message is answered with its JSON-RPC error (``wire``)."""
    server = build_server(connection)
    async with checked_stdio() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def _version() -> str:
    try:
        return metadata.version("stratagate-memory")
    except metadata.PackageNotFoundError:
        return "0"
