"""Raw-message search and the raw retrieval channel through a real database file."""

import sqlite3
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from stratagate_plugin.core.config import MemoryConfig
from stratagate_plugin.core.facade import StrataGate
from stratagate_plugin.core.records import MessageIn
from stratagate_plugin.core.retrieval import retrieve_raw, search_raw

START = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
NS = "space"


async def _turn(sg: StrataGate, thread: str, user: str, assistant: str, hour: int) -> list[str]:
    at = START + timedelta(hours=hour)
    messages = [
        MessageIn(role="user", content=user),
        MessageIn(role="assistant", content=assistant),
    ]
    receipt = await sg.record_turn(NS, thread, messages, at=at)
    return receipt.message_ids


@pytest.fixture
async def world(tmp_path: Path) -> AsyncIterator[tuple[StrataGate, dict[str, str]]]:
    """Two-turn blocks: thread t1 has 2 sealed turns and 1 open; t2 has 2 sealed turns."""
    sg = await StrataGate.open(tmp_path / "memory.db", MemoryConfig(block_turn_size=2))
    ids: dict[str, str] = {}
    turns = [
        ("t1", "I adopted a puppy named Rex", "What breed is the puppy?", 0),
        ("t1", "A beagle, he loves the park", "Parks are great for beagles", 1),
        ("t1", "Rex chewed my violin case", "Oh no, the violin!", 2),
        ("t2", "My sister plays violin", "Lovely instrument", 3),
        ("t2", "She performs on Friday", "Good luck to her", 4),
    ]
    for thread, user, assistant, hour in turns:
        first, second = await _turn(sg, thread, user, assistant, hour)
        ids[user], ids[assistant] = first, second
    yield sg, ids
    await sg.close()


async def test_search_raw_finds_only_sealed_messages(
    world: tuple[StrataGate, dict[str, str]],
) -> None:
    sg, ids = world
    hits = await search_raw(sg.db, NS, "violin")
    assert [hit.message.id for hit in hits] == [ids["My sister plays violin"]]
    assert await search_raw(sg.db, NS, "chewed") == []


async def test_search_raw_hit_carries_block_turns_and_neighbours(
    world: tuple[StrataGate, dict[str, str]],
) -> None:
    sg, ids = world
    [hit] = await search_raw(sg.db, NS, "breed")
    assert hit.message.id == ids["What breed is the puppy?"]
    assert hit.message.role == "assistant" and hit.message.thread_id == "t1"
    assert hit.turn_range == (1, 2)
    assert hit.previous is not None and hit.previous.id == ids["I adopted a puppy named Rex"]
    assert hit.next is not None and hit.next.id == ids["A beagle, he loves the park"]
    assert hit.score > 0


async def test_search_raw_thread_scope(world: tuple[StrataGate, dict[str, str]]) -> None:
    sg, _ = world
    assert await search_raw(sg.db, NS, "violin", thread_id="t1") == []
    scoped = await search_raw(sg.db, NS, "beagle", thread_id="t1")
    assert {hit.message.thread_id for hit in scoped} == {"t1"}
    assert await search_raw(sg.db, "other", "beagle") == []


@pytest.mark.parametrize("query", ["", "   ", "?!", "xylophone"])
async def test_search_raw_no_match_is_empty(
    world: tuple[StrataGate, dict[str, str]], query: str
) -> None:
    sg, _ = world
    assert await search_raw(sg.db, NS, query) == []
    assert await retrieve_raw(sg.db, NS, query, 10) == []


async def test_search_raw_ties_prefer_newer_messages(tmp_path: Path) -> None:
    async with await StrataGate.open(tmp_path / "m.db", MemoryConfig(block_turn_size=1)) as sg:
        old = await _turn(sg, "t", "same words here", "x", 0)
        new = await _turn(sg, "t", "same words here", "y", 5)
        hits = await search_raw(sg.db, NS, "words")
    assert [hit.message.id for hit in hits] == [new[0], old[0]]


async def test_search_raw_without_fts_table_gives_the_same_order(
    world: tuple[StrataGate, dict[str, str]],
) -> None:
    sg, _ = world
    query = "the puppy beagle park violin"
    with_index = await search_raw(sg.db, NS, query, limit=10)
    plain = sqlite3.connect(sg.db.path)
    plain.execute("DROP TABLE message_fts")
    plain.commit()
    plain.close()
    scanned = await search_raw(sg.db, NS, query, limit=10)
    assert len(with_index) > 2
    assert [h.message.id for h in scanned] == [h.message.id for h in with_index]
    assert [h.score for h in scanned] == pytest.approx([h.score for h in with_index])


async def test_retrieve_raw_adds_neighbours_of_matches(
    world: tuple[StrataGate, dict[str, str]],
) -> None:
    sg, ids = world
    ranked = await retrieve_raw(sg.db, NS, "what breed is the puppy", 10)
    found = [message_id for message_id, _ in ranked]
    assert found[0] == ids["What breed is the puppy?"]
    assert ids["A beagle, he loves the park"] in found
    assert ids["Rex chewed my violin case"] not in found
    assert all(score > 0 for _, score in ranked)
    assert len(await retrieve_raw(sg.db, NS, "violin", 1)) == 1
