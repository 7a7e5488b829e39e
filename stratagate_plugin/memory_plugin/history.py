"""Block views in place of native history (spec §2.9).

Once a block is ready, the host's messages for exactly its turns are replaced by one
plugin-written user message holding the block at the deepest-allowed view that is small
enough: the highest level ≤ the block's decayed level whose message fits the checkpoint
limit, saves ≥ 32 tokens and is ≤ 0.9× the original turns. Turns that cannot be matched
exactly stay native, and so does the open tail.
"""

import json
from collections.abc import Sequence

from ..core.memory import StrataGate
from ..core.records import BlockView, Message
from ..core.text.token_budget import estimate_tokens
from ..harness.types import ChatMessage

CHECKPOINT_LIMIT = 4096
MIN_SAVING = 32
MAX_RATIO = 0.9
HEADER = (
    "[StrataGate historical conversation block]\n"
    "Earlier conversation context; not a new user message or instruction."
)


def checkpoint_limit(context_window: int | None) -> int:
    return CHECKPOINT_LIMIT if not context_window else min(4096, context_window * 4 // 100)


def split_turns(
    history: Sequence[ChatMessage],
) -> tuple[list[ChatMessage], list[list[ChatMessage]]]:
    """(messages before the first human turn, one list per human turn)."""
    prefix: list[ChatMessage] = []
    turns: list[list[ChatMessage]] = []
    for message in history:
        if message.role == "user" and message.source in (None, "user"):
            turns.append([message])
        elif turns:
            turns[-1].append(message)
        else:
            prefix.append(message)
    return prefix, turns


def message_tokens(messages: Sequence[ChatMessage]) -> int:
    return sum(estimate_tokens(json.dumps(m.wire(), ensure_ascii=False)) for m in messages)


def checkpoint_message(view: BlockView, level: int, text: str) -> ChatMessage:
    block = view.block
    turns = f"{block.start_turn}-{block.end_turn}"
    header = f"{HEADER}\nBlock: {block.id} | Turns: {turns} | Level: L{level}"
    return ChatMessage(role="user", content=f"{header}\n\n{text}", source="plugin")


async def replace_with_blocks(
    memory: StrataGate,
    space: str,
    thread_id: str,
    history: list[ChatMessage],
    limit: int = CHECKPOINT_LIMIT,
) -> list[ChatMessage] | None:
    """The history with every matchable ready block folded into one checkpoint message."""
    views = [
        v
        for v in await memory.blocks.views(space, thread_id)
        if v.block.processing_status == "ready"
    ]
    if not views:
        return None
    prefix, turns = split_turns(history)
    replacements: dict[int, ChatMessage] = {}
    covered: set[int] = set()
    for view in views:
        span = range(view.block.start_turn, view.block.end_turn + 1)
        original = [m for n in span if 0 < n <= len(turns) for m in turns[n - 1]]
        if span.stop - 1 > len(turns) or not await _matches(memory, view, turns, span):
            continue
        checkpoint = await _best_checkpoint(memory, view, message_tokens(original), limit)
        if checkpoint is not None:
            replacements[span.start] = checkpoint
            covered.update(span)
    if not replacements:
        return None
    out = list(prefix)
    for number, messages in enumerate(turns, start=1):
        if number in replacements:
            out.append(replacements[number])
        if number not in covered:
            out.extend(messages)
    return out


async def _matches(
    memory: StrataGate, view: BlockView, turns: list[list[ChatMessage]], span: range
) -> bool:
    """The block's user messages must equal the host's human messages of those turns."""
    stored: list[Message] = await memory.blocks.messages(view.block.id)
    users = [m.content.strip() for m in stored if m.role == "user"]
    native = [turns[n - 1][0].text.strip() for n in span]
    return users == native


async def _best_checkpoint(
    memory: StrataGate, view: BlockView, original: int, limit: int
) -> ChatMessage | None:
    for level in range(view.current_level, -1, -1):
        text = (await memory.blocks.view(view.block.id, level)).text
        candidate = checkpoint_message(view, level, text)
        size = message_tokens([candidate])
        if size <= limit and original - size >= MIN_SAVING and size <= MAX_RATIO * original:
            return candidate
    return None
