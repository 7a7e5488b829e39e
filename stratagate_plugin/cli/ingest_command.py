"""``stratagate ingest FILE``: record a JSON list of messages (or a LoCoMo file) as turns.

The whole file is checked before anything is written, and each turn's receipt is keyed
by what it says (``core/importer/receipts.py``), so a corrected file can simply be run
again: the turns already recorded are skipped, only the fixed and the new ones are added.

Turns go to the memory space ``chat`` uses in this directory, or to ``--space``. A file is
a finished conversation: each thread's tail is sealed after its last turn in the file.
ChatGPT's and Claude's ``conversations.json`` are known by their first bytes and read one
conversation at a time (``core/importer/chat_file.py``); ``import`` hands them here too.
"""

import argparse
import sqlite3
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..bench.locomo import Session, sessions_of, turns_of
from ..bench.locomo_shape import check_samples
from ..core.errors import InvalidInput, ReceiptConflict, StrataGateError
from ..core.importer.chat_file import SniffedFile, read_sniffed
from ..core.importer.formats import chat_exports
from ..core.importer.json_document import MAX_FILE_BYTES, decode_json
from ..core.importer.message_list import group_turns, out_of_range, parse_message_list, turn_time
from ..core.importer.receipts import receipt_ids
from ..core.memory import StrataGate
from ..core.records import MessageIn, TurnReceipt
from .common import add_db_option, add_space_option, open_memory, resolve_space
from .progress import Progress


class IngestStopped(StrataGateError):
    """Recording failed midway; the message says how far it got."""


def register(commands: Any) -> None:
    parser = commands.add_parser("ingest", help="record a JSON list of messages as turns")
    add_db_option(parser)
    parser.add_argument(
        "file",
        help="JSON list of {thread, role, content, at, tool_calls?}, a LoCoMo file, or "
        "ChatGPT's or Claude's conversations.json (at most 64 MB; - reads stdin)",
    )
    add_space_option(parser)
    parser.add_argument("--block-turns", type=int, default=None, help="block size for new blocks")
    parser.set_defaults(handler=ingest)


@dataclass(frozen=True)
class PlannedTurn:
    """One turn to record; ``seal_after``: the thread's last in the file (its tail sealed)."""

    thread: str
    messages: list[MessageIn]
    receipt_id: str
    seal_after: bool = False


@dataclass
class Tally:
    """What recording has done so far: read when it stops midway, too."""

    fresh: int = 0
    replayed: int = 0
    retimed: int = 0
    sealed: int = 0
    space: str = ""

    def add(self, receipt: TurnReceipt) -> None:
        self.replayed += receipt.replayed
        self.fresh += not receipt.replayed
        self.sealed += receipt.sealed_block_id is not None


async def ingest(args: argparse.Namespace) -> int:
    read = read_sniffed(args.file, MAX_FILE_BYTES, sys.stdin.buffer)
    if read.export is None:
        document = decode_json(read.data, read.source)
        warn(*document.notes)
        read = export_of(args.file, read, document.value)
        if read.export is None:
            return await ingest_entries(args, document.value)
    print(chat_summary(await ingest_chat_export(args, read), read.export))
    return 0


async def ingest_entries(args: argparse.Namespace, entries: Any) -> int:
    """A message list or a LoCoMo file, decoded."""
    tally = await record_file(args, plan_file(args.file, entries))
    warn_retimed(args, tally)
    print(summary(tally, entries))
    return 0


def export_of(source: str, read: SniffedFile, value: Any) -> SniffedFile:
    """A chat export the first bytes did not tell (its first conversation's keys came
    late), found once the file is decoded; else ``read`` as it was."""
    kind = chat_exports.export_kind(value)
    if kind is None:
        return read
    try:
        return SniffedFile(read.source, export=chat_exports.collect(kind, value))
    except InvalidInput as error:
        raise InvalidInput(f"{source}: {error}; nothing was recorded") from None


async def ingest_chat_export(args: argparse.Namespace, read: SniffedFile) -> Tally:
    """Record a ChatGPT or Claude export read by ``read_sniffed``; what was done."""
    assert read.export is not None
    warn(*read.notes())
    try:
        plan = plan_chat_export(args.file, read.export)
    except InvalidInput as error:
        raise InvalidInput(f"{args.file}: {error}; nothing was recorded") from None
    tally = await record_file(args, plan, read.export.titles)
    warn_retimed(args, tally)
    return tally


def warn_retimed(args: argparse.Namespace, tally: Tally) -> None:
    if tally.retimed:
        warn(
            f"{args.file}: {tally.retimed} turns were recorded before with another time; "
            "the first time is kept"
        )


def chat_summary(tally: Tally, export: chat_exports.ChatExport) -> str:
    space = f" into {tally.space}" if tally.space else ""
    return (
        f"recorded {tally.fresh} turns ({tally.replayed + tally.retimed} already present) "
        f"from {export.conversations} {export.kind} conversations{space}, "
        f"sealed {tally.sealed} blocks"
    )


def summary(tally: Tally, entries: Any) -> str:
    space = f" into {tally.space}" if tally.space else ""
    if is_locomo(entries):
        return f"recorded {tally.fresh} LoCoMo turns from {len(entries)} conversations{space}"
    present = tally.replayed + tally.retimed
    return (
        f"recorded {tally.fresh} turns ({present} already present){space}, "
        f"sealed {tally.sealed} blocks"
    )


def warn(*notes: str) -> None:
    for note in notes:
        print(f"stratagate: warning: {note}", file=sys.stderr)


def is_locomo(entries: Any) -> bool:
    return (
        isinstance(entries, list)
        and bool(entries)
        and all(isinstance(e, dict) and isinstance(e.get("conversation"), dict) for e in entries)
    )


def plan_file(source: str, entries: Any) -> list[PlannedTurn]:
    """Every turn the file holds, checked whole before anything is written.

    Receipts do not name the space (the store scopes them by it), so the plan is made
    before the space is known."""
    try:
        if is_locomo(entries):
            return plan_locomo(check_samples(entries, questions=False))
        return plan_messages(source, entries)
    except InvalidInput as error:
        raise InvalidInput(f"{source}: {error}; nothing was recorded") from None


def plan_chat_export(source: str, export: chat_exports.ChatExport) -> list[PlannedTurn]:
    """A ChatGPT or Claude export's turns, one thread per conversation."""
    kind = export.kind
    if export.skipped:
        warn(
            f"{source}: {export.skipped} {kind} conversations hold no user message "
            "and were left out"
        )
    if not export.messages:
        raise InvalidInput(f"the {kind} export holds no user or assistant text")
    return plan_messages(source, export.messages)


def plan_messages(source: str, entries: Any) -> list[PlannedTurn]:
    """Every turn of a message list with its receipt; a clamped time is said on stderr."""
    messages = parse_message_list(entries)
    turns = group_turns(messages)
    clamped = out_of_range(messages)
    if clamped:
        warn(
            f"{source}: {len(clamped)} times lie outside the years 1-9999 in UTC "
            f"(first: message {clamped[0]}) and were stored as the nearest time in range"
        )
    ids = receipt_ids("ingest", (("", thread, turn) for thread, turn in turns))
    last = {thread: index for index, (thread, _) in enumerate(turns)}
    return [
        PlannedTurn(thread, messages, key, seal_after=last[thread] == index)
        for index, ((thread, messages), key) in enumerate(zip(turns, ids, strict=True))
    ]


def plan_locomo(samples: list[dict[str, Any]]) -> list[PlannedTurn]:
    """LoCoMo: every sample into the one space, a thread per session named after its
    sample (``conv-26/session_1``), each session sealed at its end."""
    turns: list[tuple[str, str, list[MessageIn]]] = []
    seals: list[bool] = []
    for number, sample in enumerate(samples):
        named = str(sample.get("sample_id") or "")
        conversation = named if named.strip() else f"sample-{number}"
        for session in sessions_of(sample["conversation"]):
            found = session_turns(session)
            thread = f"{conversation}/{session.thread_id}"
            turns += [("", thread, messages) for messages in found]
            seals += [index == len(found) - 1 for index in range(len(found))]
    ids = receipt_ids("locomo", turns)
    return [
        PlannedTurn(thread, messages, key, seal_after=seal)
        for (_, thread, messages), key, seal in zip(turns, ids, seals, strict=True)
    ]


def session_turns(session: Session) -> list[list[MessageIn]]:
    """A session's turns as messages, each dated by the session; a turn needs a user line."""
    turns = [
        [MessageIn(role=line.role, content=line.content, at=session.at) for line in turn]
        for turn in turns_of(session.lines)
    ]
    return [turn for turn in turns if any(m.role == "user" for m in turn)]


async def record_file(
    args: argparse.Namespace, plan: Sequence[PlannedTurn], titles: dict[str, str] | None = None
) -> Tally:
    """Record the checked plan of a whole file into the chosen space, then title its
    threads (a chat export's conversation titles); a failure midway says how many turns
    were recorded first."""
    tally = Tally()
    try:
        memory = await open_memory(args)
        async with memory:
            tally.space = await resolve_space(args, memory, create=True)
            await record_plan(args, memory, plan, tally)
            await memory.blocks.set_thread_titles(tally.space, titles or {})
    except (StrataGateError, OSError, ValueError, sqlite3.Error) as error:
        raise IngestStopped(
            f"{args.file}: {error}; {tally.fresh} turns recorded before the error, "
            "re-run after fixing: recorded turns are skipped"
        ) from None
    return tally


async def record_plan(
    args: argparse.Namespace, memory: StrataGate, plan: Sequence[PlannedTurn], tally: Tally
) -> None:
    if getattr(args, "block_turns", None) is not None:
        await memory.spaces.set_block_turn_size(tally.space, args.block_turns)
    with Progress("ingest", "turns", len(plan)) as progress:
        for turn in plan:
            await record_one(memory, tally.space, turn, tally)
            progress.advance()


async def record_one(memory: StrataGate, space: str, turn: PlannedTurn, tally: Tally) -> None:
    try:
        receipt = await memory.blocks.record_turn(
            space,
            turn.thread,
            turn.messages,
            at=turn_time(turn.messages),
            receipt_id=turn.receipt_id,
        )
    except ReceiptConflict:  # the same words were recorded with another time
        tally.retimed += 1
    else:
        tally.add(receipt)
    if turn.seal_after:
        tally.sealed += await memory.blocks.seal_tail(space, turn.thread) is not None
