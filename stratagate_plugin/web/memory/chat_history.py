"""The import page's "chat history": a ChatGPT or Claude ``conversations.json`` recorded as
turns, the same way ``stratagate ingest FILE`` records it.

Same messages, same receipt keys (``ingest`` and the turn's words), so the page and the CLI
skip each other's turns on a re-run; each conversation's tail is sealed after its last
turn, and the worker derives the sealed blocks as after any ingest. The whole file is
checked before a turn is written. An upload is read from its temporary file one
conversation at a time (``core/importer/chat_file.py``), up to 64 MB.
"""

from typing import Any

from ...core.errors import InvalidInput, ReceiptConflict
from ...core.importer.formats import chat_exports
from ...core.importer.formats.json_text import try_json, unfenced
from ...core.importer.message_list import group_turns, parse_message_list, turn_time
from ...core.importer.receipts import receipt_ids

KIND = "chat-history"


def export_of_text(text: str) -> chat_exports.ChatExport:
    """The export pasted as ``text``."""
    parsed, value = try_json(unfenced(text))
    kind = chat_exports.export_kind(value) if parsed else None
    if kind is None:
        raise InvalidInput("a chat history is ChatGPT's or Claude's conversations.json export")
    return chat_exports.collect(kind, value)


async def record_chat_history(memory: Any, space: str, export: chat_exports.ChatExport) -> str:
    """Record ``export`` into ``space``; the line that says what was done."""
    kind = export.kind
    if not export.messages:
        raise InvalidInput(f"the {kind} export holds no user or assistant text")
    turns = group_turns(parse_message_list(export.messages))
    keys = receipt_ids("ingest", (("", thread, turn) for thread, turn in turns))
    last = {thread: index for index, (thread, _) in enumerate(turns)}
    fresh = present = sealed = 0
    for index, ((thread, turn), key) in enumerate(zip(turns, keys, strict=True)):
        try:
            receipt = await memory.blocks.record_turn(
                space, thread, turn, at=turn_time(turn), receipt_id=key
            )
        except ReceiptConflict:  # the same words recorded before with another time
            present += 1
        else:
            present += receipt.replayed
            fresh += not receipt.replayed
            sealed += receipt.sealed_block_id is not None
        if last[thread] == index:
            sealed += await memory.blocks.seal_tail(space, thread) is not None
    await memory.blocks.set_thread_titles(space, export.titles)
    return (
        f"recorded {fresh} turns ({present} already present) from {export.conversations} {kind} "
        f"conversations into {space}, sealed {sealed} blocks"
    )
