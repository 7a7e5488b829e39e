"""``stratagate ingest FILE``: record a JSON list of messages as turns."""

import argparse
import hashlib
import json
from typing import Any

from ..bench.locomo import Session, sessions_of, turns_of
from ..core.importer.message_list import group_turns, parse_message_list, turn_time
from ..core.memory import StrataGate
from ..core.records import MessageIn
from .common import DEFAULT_NAMESPACE, add_db_option, open_memory


def register(commands: Any) -> None:
    parser = commands.add_parser("ingest", help="record a JSON list of messages as turns")
    add_db_option(parser)
    parser.add_argument(
        "file", help="JSON list of {thread, role, content, at, tool_calls?}, or a LoCoMo file"
    )
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
    file_key = hashlib.sha256(body).hexdigest()[:16]
    if is_locomo(entries):
        return await ingest_locomo(args, entries, file_key)
    turns = group_turns(parse_message_list(entries))
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


def is_locomo(entries: Any) -> bool:
    return (
        isinstance(entries, list)
        and bool(entries)
        and all(isinstance(e, dict) and isinstance(e.get("conversation"), dict) for e in entries)
    )


async def ingest_locomo(args: argparse.Namespace, samples: list[Any], file_key: str) -> int:
    """LoCoMo: one namespace per sample, one thread per session, each session sealed."""
    memory = await open_memory(args)
    recorded = 0
    async with memory:
        for number, sample in enumerate(samples):
            namespace = str(sample.get("sample_id") or f"{args.namespace}-{number}")
            if args.block_turns is not None:
                await memory.set_block_turn_size(namespace, args.block_turns)
            for session in sessions_of(sample["conversation"]):
                recorded += await _record_session(memory, namespace, session, file_key)
    print(f"recorded {recorded} LoCoMo turns from {len(samples)} conversations")
    return 0


async def _record_session(
    memory: StrataGate, namespace: str, session: Session, file_key: str
) -> int:
    count = 0
    for index, turn in enumerate(turns_of(session.lines)):
        messages = [MessageIn(role=line.role, content=line.content, at=session.at) for line in turn]
        if not any(m.role == "user" for m in messages):
            continue
        receipt = await memory.record_turn(
            namespace,
            session.thread_id,
            messages,
            at=session.at,
            receipt_id=f"locomo:{file_key}:{namespace}:{session.thread_id}:{index}",
        )
        count += not receipt.replayed
    await memory.seal_tail(namespace, session.thread_id)
    return count
