"""``memory_record_turn``: a completed turn recorded as the harness's after-turn hook does.

An MCP client does not report its turns, so one that wants memory to grow calls this once
per turn with the user's message and its final answer. The turn is written (L5, word for
word) in one transaction before any model runs; a full tail seals into a block at the
profile's ``block_turn_size``, and the derivation worker of this process summarises it and
extracts its events in the background, as it does in the plugin.

The user's message is also what settles a profile change. The plugin reads it before the
model acts: a change the user asked for applies at once, one the agent proposes waits for
the next message's agreement. Here the message comes only with the recorded turn, so every
change is first a proposal; recording its turn applies it when that message asked for it,
and otherwise the next recorded message agrees or refuses.

Each message is at most ``MAX_TEXT_BYTES`` (1 MB of UTF-8); a longer one is refused with a
JSON-RPC error naming the limit before anything is written.
"""

import logging
from collections.abc import Awaitable, Callable
from typing import Annotated, Any

import mcp_types as types
from mcp.shared.exceptions import MCPError
from pydantic import Field

from ..core.errors import InvalidInput
from ..harness.types import Tool, ToolCallContext
from ..memory_plugin.protocol import cleanup_steer
from .connection import Connection

SessionName = Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$")]
TurnId = Annotated[str, Field(min_length=1, max_length=128)]
AWAITING_CONSENT = "awaiting_consent"
MAX_TEXT_BYTES = 1_000_000
log = logging.getLogger(__name__)
OVER_MCP = (
    "Over MCP: if the user asked for exactly this, it is applied when you record this turn "
    "with memory_record_turn; otherwise their next recorded message agrees or refuses."
)


def record_turn_tool(connection: Connection) -> Callable[..., Awaitable[dict[str, Any]]]:
    runtime = connection.runtime

    async def memory_record_turn(
        call: ToolCallContext,
        user: str,
        assistant: str,
        session: SessionName | None = None,
        turn_id: TurnId | None = None,
    ) -> dict[str, Any]:
        """This tool is provided by the StrataGate plugin. Record one completed turn of
        this conversation as long-term memory: the user's message and your final answer,
        kept word for word, summarised and turned into events in the background. Call it
        once per turn, after answering; session names the conversation when you keep one
        across restarts (default: this connection's); turn_id, if you give one, makes a
        retried call record the turn once."""
        check_size(user=user, assistant=assistant)
        if not user.strip():
            raise InvalidInput("user is empty: a turn is recorded from the user's message")
        thread, space = connection.thread(session), connection.namespace
        key = f"turn:{thread}:{turn_id}" if turn_id else f"{call.session.id}:{call.call_id}"
        receipt = await runtime.memory.blocks.append_turn(
            space,
            thread,
            user=user,
            assistant=assistant,
            receipt_id=f"mcp:{key}",
            tools_thread=call.session.id,  # where this turn's remember and batches ran
        )
        await settle_profile(connection, call, user)
        runtime.gates.pop((call.session.id, call.turn), None)
        connection.turn += 1
        runtime.kick()
        result = {
            "recorded": not receipt.replayed,
            "namespace": space,
            "session": thread,
            "turn": receipt.thread_turn,
            "messageIds": receipt.message_ids,
            "sealedBlockId": receipt.sealed_block_id,
        }
        return result | await open_batches(connection, call)

    return memory_record_turn


def check_size(**texts: str) -> None:
    """A JSON-RPC error (invalid params) for a message over ``MAX_TEXT_BYTES``."""
    for name, text in texts.items():
        size = len(text.encode("utf-8", "surrogatepass"))
        if size > MAX_TEXT_BYTES:
            raise MCPError(
                types.INVALID_PARAMS,
                f"{name} is {size:,} bytes, over the limit of 1 MB ({MAX_TEXT_BYTES:,} bytes) "
                "per message; nothing was recorded",
            )


async def open_batches(connection: Connection, call: ToolCallContext) -> dict[str, Any]:
    """The batches this turn left open. The plugin's finish step steers the agent to close
    them before it answers; a server cannot hold a client's answer back, so it names them
    here, where the turn ends."""
    memory = connection.runtime.memory
    open_ids = [
        b.id for b in await memory.gate.unresolved_batches(connection.namespace, call.session.id)
    ]
    if not open_ids:
        return {"unresolvedBatchIds": []}
    return {"unresolvedBatchIds": open_ids, "next": cleanup_steer(open_ids)}


async def settle_profile(connection: Connection, call: ToolCallContext, user: str) -> None:
    """A proposal of this turn applies if ``user`` asked for it; an earlier one is agreed
    or refused by ``user``, as the next turn's message settles it in the plugin. Done once
    the turn is written: a failure here is logged and leaves the recorded turn alone."""
    memory = connection.runtime.memory
    try:
        if connection.proposal_turn == call.turn:
            await memory.profile.apply_requested_proposals(call.session.id, user)
        else:
            await memory.profile.settle_proposals(call.session.id, user)
    except Exception as error:  # the turn is recorded; the plugin logs this failure too
        log.error("StrataGate could not settle a profile proposal: %s", error)


def noting_proposals(connection: Connection, tool: Tool) -> Tool:
    """``memory_profile_update`` as the plugin has it, remembering the turn of a proposal
    (the server never sees the user's message, so every change starts as one)."""

    async def implementation(values: dict[str, Any], call: ToolCallContext) -> Any:
        result = await tool.implementation(values, call)
        if isinstance(result, dict) and result.get("status") == AWAITING_CONSENT:
            connection.proposal_turn = call.turn
            result["message"] += " " + OVER_MCP
        return result

    return Tool(tool.name, tool.description, tool.parameters, implementation)
