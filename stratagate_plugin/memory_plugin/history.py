"""Block views in place of native history (spec §2.9).

Once a block is ready, the host's messages for exactly its turns are replaced by one
plugin-written user message holding the block at the deepest-allowed view that is small
enough: the highest level ≤ the block's decayed level whose message fits the checkpoint
limit, saves ≥ 32 tokens and is ≤ 0.9× the original turns. Turns that cannot be matched
exactly stay native, and so does the open tail.
"""

import json
from collections.abc import Sequence
from functools import lru_cache

from ..core.blocks.rules import render_level
from ..core.blocks.storage import BlockParts
from ..core.blocks.views import current_level
from ..core.memory import StrataGate
from ..core.records import Block
from ..core.text.token_budget import estimate_tokens
from ..harness.types import ChatMessage

CHECKPOINT_LIMIT = 4096
TOKEN_CACHE = 16_384
"""Plain messages whose tokens are kept (the host's history holds their texts anyway): a
chat of 1,250 turns weighs 2,500 each turn, and an LRU smaller than a chat keeps none."""
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
    """The messages' tokens as sent (their wire JSON estimated)."""
    return sum(_tokens(message) for message in messages)


def _tokens(message: ChatMessage) -> int:
    """A plain text message (its wire form is just role and content) through
    ``_plain_tokens``: every turn weighs the whole history again, message by message."""
    plain = not message.tool_calls and message.tool_call_id is None and message.role != "tool"
    if plain and isinstance(message.content, str):
        return _plain_tokens(message.role, message.content)
    return estimate_tokens(json.dumps(message.wire(), ensure_ascii=False))


@lru_cache(maxsize=TOKEN_CACHE)
def _plain_tokens(role: str, content: str) -> int:
    return estimate_tokens(json.dumps({"role": role, "content": content}, ensure_ascii=False))


def checkpoint_message(block: Block, level: int, text: str) -> ChatMessage:
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
    """The history with every matchable ready block folded into one checkpoint message.

    The thread's ready blocks and their messages are read once (``ready_parts``); each
    block's match and each level's text are worked out from them. (A read a block for its
    messages and one a level tried, each with the thread's ready position, took 3–5 s a
    turn for a chat of 1,250 turns in a space of 21,000 blocks.)"""
    ready = [parts for parts in await memory.blocks.ready_parts(space, thread_id) if parts.messages]
    if not ready:
        return None
    prefix, turns = split_turns(history)
    replacements: dict[int, ChatMessage] = {}
    covered: set[int] = set()
    for parts in ready:
        block = parts.block
        span = range(block.start_turn, block.end_turn + 1)
        original = [m for n in span if 0 < n <= len(turns) for m in turns[n - 1]]
        if span.stop - 1 > len(turns) or not _matches(parts, turns, span):
            continue
        checkpoint = _best_checkpoint(parts, message_tokens(original), limit)
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


def _matches(parts: BlockParts, turns: list[list[ChatMessage]], span: range) -> bool:
    """The block's user messages must equal the host's human messages of those turns."""
    users = [m.content.strip() for m in parts.messages if m.role == "user"]
    native = [turns[n - 1][0].text.strip() for n in span]
    return users == native


def _best_checkpoint(parts: BlockParts, original: int, limit: int) -> ChatMessage | None:
    """The deepest view from the block's decayed level down that fits and saves enough."""
    block, messages = parts.block, parts.messages
    now, _ = current_level(block, parts.latest_ready, parts.decay_lambda)
    for level in range(now, -1, -1):
        candidate = checkpoint_message(block, level, render_level(block, level, messages))
        size = message_tokens([candidate])
        if size <= limit and original - size >= MIN_SAVING and size <= MAX_RATIO * original:
            return candidate
    return None
