"""Ready blocks in place of the native turns they hold (``memory_plugin.history``): each
block's checkpoint is its view at the deepest level that fits, the same text a block view
of that level gives, and the whole history is worked out from one read of the thread's
ready blocks, however many there are."""

import json
import re
from typing import Any

import pytest

from stratagate_plugin.core.memory import StrataGate
from stratagate_plugin.core.text.token_budget import estimate_tokens
from stratagate_plugin.harness.chat import ToolCall
from stratagate_plugin.harness.types import ChatMessage
from stratagate_plugin.memory_plugin.history import HEADER, message_tokens, replace_with_blocks

SPACE, THREAD = "home", "long-chat"
TOPICS = ["pottery", "marathon", "garden", "violin", "sourdough", "kayak", "chess", "tiles"]
CHECKPOINT = re.compile(r"Block: (\S+) \| Turns: (\d+)-(\d+) \| Level: L(\d)\n\n(.*)", re.S)


def said(n: int) -> str:
    topic = TOPICS[n % len(TOPICS)]
    return (
        f"Turn {n}: about my {topic} plans, I want to write down every detail so that later "
        f"we can come back to the {topic} schedule, the people involved and the costs."
    )


async def record(memory: StrataGate, turns: int) -> list[ChatMessage]:
    """``turns`` turns recorded and derived (blocks of three), and the host's history."""
    history: list[ChatMessage] = []
    for n in range(1, turns + 1):
        answer = f"Noted: {said(n)}"
        await memory.blocks.append_turn(SPACE, THREAD, user=said(n), assistant=answer)
        history += [ChatMessage(role="user", content=said(n))]
        history += [ChatMessage(role="assistant", content=answer)]
    await memory.derivation.process_pending()
    return history


def checkpoints(history: list[ChatMessage]) -> list[tuple[str, int, int, int, str]]:
    found = []
    for message in history:
        if message.source == "plugin":
            assert message.text.startswith(HEADER)
            match = CHECKPOINT.search(message.text)
            assert match is not None
            block, first, last, level, text = match.groups()
            found.append((block, int(first), int(last), int(level), text))
    return found


async def test_every_matching_block_becomes_its_view(memory: StrataGate) -> None:
    history = await record(memory, 9)
    history.append(ChatMessage(role="user", content="What did I plan?"))
    replaced = await replace_with_blocks(memory, SPACE, THREAD, history)
    assert replaced is not None
    found = checkpoints(replaced)
    assert [(first, last) for _, first, last, _, _ in found] == [(1, 3), (4, 6), (7, 9)]
    for block, _, _, level, text in found:
        assert text == (await memory.blocks.view(block, level)).text
        assert level <= (await memory.blocks.view(block)).current_level
    assert [m.text for m in replaced if m.source != "plugin"] == ["What did I plan?"]


async def test_a_block_the_host_holds_otherwise_stays_native(memory: StrataGate) -> None:
    history = await record(memory, 9)
    history[8] = ChatMessage(role="user", content="Something else was said here.")  # turn 5
    replaced = await replace_with_blocks(memory, SPACE, THREAD, history)
    assert replaced is not None
    assert [(f, last) for _, f, last, _, _ in checkpoints(replaced)] == [(1, 3), (7, 9)]
    native = [m.text for m in replaced if m.source != "plugin" and m.role == "user"]
    assert native == [said(4), "Something else was said here.", said(6)]


async def test_the_history_reads_the_threads_blocks_once(
    memory: StrataGate, monkeypatch: pytest.MonkeyPatch
) -> None:
    history = await record(memory, 24)
    reads: dict[str, int] = {}
    store = memory.storage.blocks
    for name in ("parts", "block", "messages", "rail"):
        monkeypatch.setattr(store, name, counted(getattr(store, name), name, reads))
    replaced = await replace_with_blocks(memory, SPACE, THREAD, history)
    assert replaced is not None and len(checkpoints(replaced)) == 8
    assert reads == {"parts": 1}


def counted(read: Any, name: str, reads: dict[str, int]) -> Any:
    async def counting(*args: Any, **kwargs: Any) -> Any:
        reads[name] = reads.get(name, 0) + 1
        return await read(*args, **kwargs)

    return counting


def tool_call() -> ToolCall:
    return ToolCall(id="c1", name="memory_search", arguments='{"query": "kiln"}')


WEIGHED = [
    ChatMessage(role="user", content='plain words, 中文 and "quotes"\n'),
    ChatMessage(role="assistant", content='plain words, 中文 and "quotes"\n'),
    ChatMessage(role="user", content=[{"type": "text", "text": "a part"}]),
    ChatMessage(role="assistant", content=None, tool_calls=(tool_call(),)),
    ChatMessage(role="tool", content='{"ok": true}', tool_call_id="c1", name="memory_search"),
    ChatMessage(role="user", content="steered", source="plugin"),
]


@pytest.mark.parametrize("message", WEIGHED, ids=lambda m: f"{m.role}-{type(m.content).__name__}")
def test_a_message_weighs_its_wire_form_whether_kept_or_not(message: ChatMessage) -> None:
    """Plain messages' tokens are kept between turns; every message still weighs what its
    wire JSON weighs, the first time and after."""
    wire = estimate_tokens(json.dumps(message.wire(), ensure_ascii=False))
    assert message_tokens([message]) == wire
    assert message_tokens([message, message]) == 2 * wire
