"""A huge message never freezes the app while the offline model derives it (issue 24).

After a 5 MB ``memory_record_turn`` and a seal, an MCP ``ping`` waited 77.7 s: the offline
model ran on the event loop, over the whole message. Now its computation runs on a worker
thread and reads a bounded prefix of each message (``derive_text_limit``); L5 keeps the
message whole and the block's L1 says it was derived from a prefix.
"""

import asyncio
import re
import threading
from pathlib import Path
from typing import Any

from stratagate_plugin.core.config import MemoryConfig
from stratagate_plugin.core.derivation.input import DERIVE_TEXT_LIMIT
from stratagate_plugin.core.llm.offline.model import OfflineModel
from stratagate_plugin.core.memory import StrataGate

LIMIT = 16_000
FILLER = "We talked about the garden and the kiln and the weather for a while. "
OPENING = "Alice: We decided to move the pottery launch to June 12. "
LATE = "Bob: The zebracorn budget was cancelled."


def huge_message(size: int) -> str:
    """``size`` characters: a decision first, filler, and a statement only past the prefix."""
    body = FILLER * ((size - len(OPENING) - len(LATE)) // len(FILLER))
    return OPENING + body + LATE


class ProbedModel(OfflineModel):
    """The offline model that, before each computation, asks the event loop to answer a
    probe (another request) and waits for it: the loop can answer only if it is not the
    thread computing. Records the order of probes and results, the computing threads and
    the longest message each task was given."""

    PROBE_TIMEOUT_S = 30.0  # generous: the loop answers in microseconds when it is free

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__()
        self.loop = loop
        self.order: list[str] = []
        self.threads: set[int] = set()
        self.longest: dict[str, int] = {}

    def answer(self, name: str, payload: dict[str, Any]) -> dict[str, Any]:
        self.threads.add(threading.get_ident())
        self.longest[name] = max(self.longest.get(name, 0), _longest_content(payload))
        probe = asyncio.run_coroutine_threadsafe(self._other_request(name), self.loop)
        probe.result(timeout=self.PROBE_TIMEOUT_S)
        result = super().answer(name, payload)
        self.order.append(f"{name} derived")
        return result

    async def _other_request(self, name: str) -> None:
        await asyncio.sleep(0)
        self.order.append(f"{name}: other request answered")


def _longest_content(payload: dict[str, Any]) -> int:
    blocks = [payload.get("block"), payload.get("target")]
    return max((len(m["content"]) for b in blocks if b for m in b.get("messages", [])), default=0)


async def record_huge(db_path: Path, model: OfflineModel, size: int) -> StrataGate:
    config = MemoryConfig(block_turn_size=1, derive_text_limit=LIMIT)
    memory = await StrataGate.open(db_path, config, model=model)
    await memory.blocks.append_turn("ns", "t", user=huge_message(size), assistant="Noted.")
    return memory


async def test_the_loop_answers_while_a_2mb_message_is_derived(db_path: Path) -> None:
    model = ProbedModel(asyncio.get_running_loop())
    memory = await record_huge(db_path, model, 2_000_000)
    try:
        report = await asyncio.wait_for(memory.derivation.process_pending(), timeout=300)
        assert report.failed == 0, report.errors
        assert model.order[:2] == [
            "summarize_block: other request answered",
            "summarize_block derived",
        ]
        assert "extract_event_cards derived" in model.order
        assert threading.get_ident() not in model.threads
    finally:
        await memory.close()


async def test_a_huge_message_is_kept_whole_and_derived_from_a_prefix(db_path: Path) -> None:
    model = ProbedModel(asyncio.get_running_loop())
    memory = await record_huge(db_path, model, 2_000_000)
    try:
        report = await memory.derivation.process_pending()
        assert report.failed == 0, report.errors
        [view] = await memory.blocks.views()
        [user, _] = await memory.blocks.messages(view.block.id)
        assert len(user.content) == len(huge_message(2_000_000))  # L5 is whole
        assert user.content.endswith(LATE)
        assert 0 < max(model.longest.values()) <= LIMIT  # the model saw a prefix only
        assert view.block.processing_status == "ready"
        note = re.search(r"\[derived from the first ([\d,]+) characters of a message of "
                         r"([\d,]+) characters; the whole text is kept in L5\]$",
                         view.block.l1_summary or "")  # fmt: skip
        assert note is not None, view.block.l1_summary
        assert int(note[1].replace(",", "")) <= LIMIT
        assert int(note[2].replace(",", "")) == len(user.content)
        derived = " ".join([view.block.l1_summary or "", *(view.block.l2_keypoints or [])])
        assert "zebracorn" not in derived
        [extraction] = [
            j for j in await memory.derivation.list_jobs() if j.kind == "event_extraction"
        ]
        assert extraction.detail and "derived from the first" in extraction.detail
        events = await memory.events.cards()
        assert any("June" in event.title or "June" in event.summary for event in events)
        assert all("zebracorn" not in event.summary for event in events)
    finally:
        await memory.close()


def test_the_documented_default_limit() -> None:
    assert MemoryConfig().derive_text_limit == DERIVE_TEXT_LIMIT == 64_000
