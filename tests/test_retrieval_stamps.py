"""Retrieval stamps are written behind the search (``core/events/stamps.py``): a search never
waits for a write, every noted stamp is written by ``close``, a forgotten event gets none,
and a failed write is dropped with a warning, never raised into a search."""

import asyncio
import logging
import threading
from collections.abc import Mapping
from pathlib import Path

import pytest

from stratagate_plugin.core.config import MemoryConfig
from stratagate_plugin.core.events.stamps import RetrievalStamps
from stratagate_plugin.core.memory import StrataGate

NS = "ns"


async def _remember(memory: StrataGate, *texts: str) -> list[str]:
    return [(await memory.remember.save(NS, "t", text)).event_id for text in texts]


async def _stamp_of(memory: StrataGate, event_id: str) -> str | None:
    card = await memory.storage.events.card(event_id)
    return card.last_retrieved_at.isoformat() if card.last_retrieved_at else None


async def test_a_search_returns_while_its_stamp_write_waits(memory: StrataGate) -> None:
    """The stamp is written behind the search: with the stamp write held, the search
    answers, nothing is stamped yet, and the stamp lands once the write goes on."""
    [kiln] = await _remember(memory, "The kiln fires on Fridays.")
    go, written = asyncio.Event(), []

    async def held_write(stamps: Mapping[str, str]) -> None:
        await go.wait()
        written.append(dict(stamps))
        await memory.storage.events.stamp_retrieved(stamps)

    memory.events.stamps = RetrievalStamps(held_write)
    hits = await asyncio.wait_for(memory.events.search(NS, "kiln"), timeout=20)
    assert [hit.card.id for hit in hits] == [kiln]
    assert memory.events.stamps.pending == 0 and await _stamp_of(memory, kiln) is None
    go.set()
    await memory.events.stamps.flush()
    assert list(written[0]) == [kiln] and await _stamp_of(memory, kiln) is not None


async def test_a_search_returns_while_the_writer_is_held(memory: StrataGate) -> None:
    """No search waits for the writer (SQLite's one write lock; on PostgreSQL writes run
    side by side anyway): with a write unit holding it, the search answers, and its stamp
    lands once the writer is free."""
    [kiln] = await _remember(memory, "The kiln fires on Fridays.")
    held, release = threading.Event(), threading.Event()

    def hold(_raw: object) -> None:
        held.set()
        release.wait(timeout=30)

    holding = asyncio.create_task(memory.db.write(hold))
    await asyncio.to_thread(held.wait, 30)
    try:
        hits = await asyncio.wait_for(memory.events.search(NS, "kiln"), timeout=20)
        assert [hit.card.id for hit in hits] == [kiln]
    finally:
        release.set()
        await holding
    await memory.events.stamps.flush()
    assert memory.events.stamps.pending == 0
    assert await _stamp_of(memory, kiln) is not None


async def test_close_writes_the_stamps_still_pending(db_path: Path) -> None:
    memory = await StrataGate.open(db_path, MemoryConfig(block_turn_size=3))
    [kiln, oven] = await _remember(memory, "The kiln fires on Fridays.", "The oven is new.")
    assert [hit.card.id for hit in await memory.events.search(NS, "kiln")] == [kiln]
    await memory.close()
    reopened = await StrataGate.open(db_path, MemoryConfig(block_turn_size=3))
    try:
        assert await _stamp_of(reopened, kiln) is not None
        assert await _stamp_of(reopened, oven) is None
    finally:
        await reopened.close()


async def test_an_event_forgotten_before_the_write_gets_no_stamp(memory: StrataGate) -> None:
    [kiln] = await _remember(memory, "The kiln fires on Fridays.")
    await memory.storage.events.stamp_retrieved({kiln: "2026-01-02T03:04:05+00:00"})
    first = await _stamp_of(memory, kiln)
    await memory.gate.forget_event(kiln)
    await memory.storage.events.stamp_retrieved({kiln: "2026-05-06T07:08:09+00:00"})
    assert await _stamp_of(memory, kiln) == first


async def test_each_event_keeps_its_newest_noted_time() -> None:
    written: list[dict[str, str]] = []

    async def write(stamps: Mapping[str, str]) -> None:
        written.append(dict(stamps))

    stamps = RetrievalStamps(write)
    stamps.note(["a", "b"], "2026-01-02T00:00:00+00:00")
    stamps.note(["a"], "2026-01-03T00:00:00+00:00")
    stamps.note(["b"], "2026-01-01T00:00:00+00:00")  # older than b's: kept out
    await stamps.flush()
    assert written == [{"a": "2026-01-03T00:00:00+00:00", "b": "2026-01-02T00:00:00+00:00"}]
    stamps.note(["c"], "2026-01-04T00:00:00+00:00")
    await stamps.flush()
    assert written[1:] == [{"c": "2026-01-04T00:00:00+00:00"}]


async def test_a_failed_write_is_dropped_with_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    calls: list[dict[str, str]] = []

    async def broken(stamps: Mapping[str, str]) -> None:
        calls.append(dict(stamps))
        raise OSError("disk I/O error")

    stamps = RetrievalStamps(broken)
    with caplog.at_level(logging.WARNING, logger="stratagate_plugin.core.events.stamps"):
        stamps.note(["a"], "2026-01-02T00:00:00+00:00")
        await stamps.flush()
    assert calls == [{"a": "2026-01-02T00:00:00+00:00"}] and stamps.pending == 0
    assert "retrieval stamps of 1 events not written: disk I/O error" in caplog.text
