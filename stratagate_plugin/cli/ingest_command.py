"""``stratagate ingest FILE``: record a JSON list of messages as turns."""

import argparse
import hashlib
import json
from typing import Any

from ..core.turns import group_turns, parse_message_list, turn_time
from .common import DEFAULT_NAMESPACE, add_db_option, open_memory


def register(commands: Any) -> None:
    parser = commands.add_parser("ingest", help="record a JSON list of messages as turns")
    add_db_option(parser)
    parser.add_argument("file", help="JSON list of {thread, role, content, at, tool_calls?}")
    parser.add_argument("--namespace", default=DEFAULT_NAMESPACE)
    parser.add_argument("--block-turns", type=int, default=None, help="block size for new blocks")
    parser.set_defaults(handler=ingest)


async def ingest(args: argparse.Namespace) -> int:
    with open(args.file, "rb") as handle:
        body = handle.read()
    try:
        entries = json.loads(body)
    except json.JSONDecodeError as error:
        raise ValueError(f"{args.file} is not valid JSON: {error}") from None
    turns = group_turns(parse_message_list(entries))
    file_key = hashlib.sha256(body).hexdigest()[:16]
    memory = await open_memory(args)
    async with memory:
        if args.block_turns is not None:
            await memory.set_block_turn_size(args.namespace, args.block_turns)
        replayed = sealed = 0
        for index, (thread, messages) in enumerate(turns):
            receipt = await memory.record_turn(
                args.namespace,
                thread,
                messages,
                at=turn_time(messages),
                receipt_id=f"ingest:{file_key}:{index}",
            )
            replayed += receipt.replayed
            sealed += receipt.sealed_block_id is not None
    fresh = len(turns) - replayed
    print(f"recorded {fresh} turns ({replayed} already present), sealed {sealed} blocks")
    return 0
