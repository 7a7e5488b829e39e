"""The agent's topic tools and the injected directory: bounds, paging, navigation only —
listing or expanding a topic opens no evidence batch and reinforces no event."""

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from cards import event_card
from topic_data import EN_TURNS, ZH_TURNS, add_events, conversation, new_space

from stratagate_plugin.core.errors import InvalidInput, NotFound
from stratagate_plugin.core.events.documents import EVENT_RULES
from stratagate_plugin.core.memory import StrataGate
from stratagate_plugin.core.store import event_rows
from stratagate_plugin.core.text.token_budget import estimate_tokens
from stratagate_plugin.harness.types import Session, ToolCallContext
from stratagate_plugin.memory_plugin.hooks import DIRECTORY_SECTION, _memory_sections
from stratagate_plugin.memory_plugin.tools import memory_tools

NS = "ns"


class Runtime:
    """What the tools read of the plugin's running state."""

    def __init__(self, memory: StrataGate) -> None:
        self.memory = memory
        self.settings = {"agent_memory_enabled": False}

    def session_space(self, session: Session) -> str:
        return NS


def tools(memory: StrataGate) -> dict[str, Any]:
    return {tool.__name__: tool for tool in memory_tools(Runtime(memory))}  # type: ignore[arg-type]


CALL = ToolCallContext(
    session=Session(id="s1", profile="default", cwd=Path("."), created_at=datetime.now(UTC)),
    turn=1,
    call_id="c1",
)


async def weights(memory: StrataGate) -> list[tuple[str, int, int, str]]:
    events = await memory.events.cards(NS, include_hidden=True)
    return [(e.id, e.mention_count, e.last_adopted_turn, e.updated_at.isoformat()) for e in events]


async def test_listing_and_expanding_topics_are_navigation_only(tmp_path: Path) -> None:
    async with await StrataGate.open(tmp_path / "m.db") as memory:
        await conversation(memory, NS, EN_TURNS)
        tool = tools(memory)
        before = await weights(memory)
        page = await tool["memory_list_topics"](CALL)
        assert page["navigationOnly"] is True and page["total"] == 2 and page["nextOffset"] is None
        assert [t["title"] for t in page["topics"]] == ["Caroline", "Melanie"]
        assert {c["id"] for c in page["categories"]} == {
            "preferences",
            "decisions",
            "work",
            "relationships",
            "other",
        }
        topic_id = page["topics"][0]["id"]
        shown = await tool["memory_expand_topic"](CALL, id=topic_id)
        assert shown["navigationOnly"] is True and shown["sections"]
        assert estimate_tokens(json.dumps(shown, ensure_ascii=False)) <= 2400
        assert shown["eventRetrieval"]["topic_id"] == topic_id
        assert "batchId" not in page and "batchId" not in shown
        assert await memory.gate.unresolved_batches(NS, "s1") == []
        assert await weights(memory) == before  # nothing reinforced, nothing touched
        found = await tool["memory_search_events"](CALL, query="", topic_id=topic_id)
        assert [r["id"] for r in found["results"]] == shown["sourceEventIds"]
        assert found["batchId"]  # the events themselves are evidence: a batch
        within = await tool["memory_search_events"](CALL, query="adoption", topic_id=topic_id)
        assert [r["title"] for r in within["results"]] == ["Caroline wants to give a kid a home"]
        melanie = await tool["memory_search_events"](
            CALL, query="adoption", topic_id=page["topics"][1]["id"]
        )
        assert melanie["results"] == []


async def test_the_page_is_bounded_paged_searchable_and_by_category(tmp_path: Path) -> None:
    async with await StrataGate.open(tmp_path / "m.db") as memory:
        await new_space(memory, NS)
        ids = await add_events(memory, NS, 25)  # fallback entries: no topic pass yet
        page = await memory.topics.catalog(NS)
        assert page["total"] == 25 and len(page["topics"]) == 12 and page["nextOffset"] == 12
        assert [t["id"] for t in page["topics"]] == [f"fallback:{i}" for i in ids[:12]]
        last = await memory.topics.catalog(NS, offset=24, limit=20)
        assert [t["id"] for t in last["topics"]] == [f"fallback:{ids[24]}"]
        assert last["nextOffset"] is None
        assert all(t["isFallback"] and t["category"] == "other" for t in page["topics"])
        found = await memory.topics.catalog(NS, query="chess")
        assert found["total"] == 3 and all("chess" in t["title"] for t in found["topics"])
        assert (await memory.topics.catalog(NS, category="work"))["total"] == 0
        for bad in ({"limit": 0}, {"limit": 21}, {"offset": -1}, {"category": "nope"}):
            with pytest.raises(InvalidInput):
                await memory.topics.catalog(NS, **bad)  # type: ignore[arg-type]
        await memory.topics.process()
        page = await memory.topics.catalog(NS, limit=20)
        assert page["total"] == 7 and not any(t["isFallback"] for t in page["topics"])
        chess = await memory.topics.catalog(NS, query="chess")
        assert [t["title"] for t in chess["topics"]] == ["chess"]
        shown = await memory.topics.expand(NS, f"fallback:{ids[0]}")  # gone into a chapter
        assert shown["sourceEventIds"] == [ids[0]]
        with pytest.raises(NotFound):
            await memory.topics.expand(NS, "topic_nope")
        with pytest.raises(NotFound):
            await memory.topics.expand("elsewhere", page["topics"][0]["id"])


async def test_the_directory_is_injected_between_profile_and_recall(tmp_path: Path) -> None:
    async with await StrataGate.open(tmp_path / "m.db") as memory:
        runtime = Runtime(memory)
        text = await memory.topics.directory(NS)
        empty = await _memory_sections(runtime, "recall", text)  # type: ignore[arg-type]
        assert DIRECTORY_SECTION not in {s.id for s in empty}  # nothing to navigate
        await new_space(memory, NS)
        await add_events(memory, NS, 500, distinct=True)
        await add_events(memory, NS, 3, start=500, criticality="preference")
        await memory.topics.process()
        assert len((await memory.topics.book(NS))["chapters"]) == 503
        text = await memory.topics.directory(NS)
        built = await _memory_sections(runtime, "recall", text)  # type: ignore[arg-type]
        sections = {s.id: s for s in built}
        directory = sections[DIRECTORY_SECTION].text
        assert sections["stratagate:auto-memory"].order > sections[DIRECTORY_SECTION].order
        assert directory == await memory.topics.directory(NS)
        assert estimate_tokens(directory) <= 400
        assert "503 entries in 2 categories" in directory and "memory_list_topics" in directory
        assert "- other (Other experiences): 500" in directory
        assert "- preferences (Preferences and requirements): 3" in directory
        page = await memory.topics.catalog(NS, category="preferences")
        assert [t["title"] for t in page["topics"]] == ["guitar", "chess", "cooking"]


async def test_a_long_section_is_paged_through_the_expand_tool(tmp_path: Path) -> None:
    async with await StrataGate.open(tmp_path / "m.db") as memory:
        await new_space(memory, NS)
        cards = [
            event_card(f"evt_pot_{n:02d}", title=f"Pottery class {n}", tags=["pottery"])
            for n in range(30)
        ]
        await memory.db.write(
            lambda raw: [event_rows.insert_event(raw, c, EVENT_RULES) for c in cards]
        )
        await memory.topics.process()
        tool = tools(memory)
        [chapter] = (await tool["memory_list_topics"](CALL))["topics"]
        shown = await tool["memory_expand_topic"](CALL, id=chapter["id"])
        assert estimate_tokens(json.dumps(shown, ensure_ascii=False)) <= 2400
        [section] = [s for s in shown["sections"] if s["nextOffset"] is not None]
        assert len(section["eventIds"]) == 9 and section["sourceEventCount"] > 9
        seen, offset = list(section["eventIds"]), section["nextOffset"]
        while offset is not None:
            page = await tool["memory_expand_topic"](
                CALL, id=chapter["id"], section=section["number"], offset=offset
            )
            assert page["navigationOnly"] is True and "batchId" not in page
            seen += page["section"]["eventIds"]
            offset = page["section"]["nextOffset"]
        assert len(seen) == len(set(seen)) == section["sourceEventCount"]
        with pytest.raises(InvalidInput, match="section must be"):
            await memory.topics.expand(NS, chapter["id"], section=99)


async def test_the_directory_speaks_the_space_s_language_or_the_profile_s(
    tmp_path: Path,
) -> None:
    async with await StrataGate.open(tmp_path / "m.db") as memory:
        await conversation(memory, "zh", ZH_TURNS)
        await conversation(memory, NS, EN_TURNS)
        chinese = await memory.topics.directory("zh")
        assert chinese.startswith("[StrataGate 记忆目录]\n仅供导航") and "小明" in chinese
        assert "：" in chinese.splitlines()[2] and estimate_tokens(chinese) <= 400
        english = await memory.topics.directory(NS)
        assert english.startswith("[StrataGate memory directory]\nNavigation only")
        await memory.profile.update("preferred_language", "简体中文")
        assert (await memory.topics.directory(NS)).startswith("[StrataGate 记忆目录]")
        await memory.profile.update("preferred_language", "English")
        assert (await memory.topics.directory("zh")).startswith("[StrataGate memory directory]")
