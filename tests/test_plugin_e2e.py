"""The StrataGate plugin through real hook calls: a host, a scripted model, a real database."""

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from webapp import worker_on_request

from stratagate_plugin.core.config import MemoryConfig
from stratagate_plugin.core.llm.base import ScriptedModel
from stratagate_plugin.core.memory import StrataGate
from stratagate_plugin.core.profile.spaces import space_for
from stratagate_plugin.harness.agent import Agent, TurnResult
from stratagate_plugin.harness.chat import ChatMessage, ScriptedChatModel, tool_reply
from stratagate_plugin.harness.pm import make_plugin_manager
from stratagate_plugin.harness.profiles import Profile
from stratagate_plugin.harness.runtime import Host
from stratagate_plugin.harness.sessions import open_session
from stratagate_plugin.memory_plugin import hooks as plugin
from stratagate_plugin.memory_plugin.runtime import MemoryRuntime

SUMMARY = {
    "title": "Kiln",
    "tags": ["kiln"],
    "summary": "Kiln talk.",
    "keypoints": ["k"],
    "should_extract": True,
}


def profile(db: Path, **settings: Any) -> Profile:
    values = {"database": str(db), "block_turn_size": 2, **settings}
    return Profile(name="t", plugins=["stratagate-memory"], settings={"stratagate-memory": values})


def make_host(db: Path, cwd: Path, **settings: Any) -> Host:
    pm = make_plugin_manager([("stratagate-memory", plugin.MemoryPlugin())])
    return Host(pm, profile(db, **settings), cwd=cwd)


def runtime_of(host: Host) -> MemoryRuntime:
    memory_plugin: plugin.MemoryPlugin = host.pm.get_plugin("stratagate-memory")
    return memory_plugin.runtime


async def turn(host: Host, model: ScriptedChatModel, text: str, session: str = "s1") -> TurnResult:
    return await Agent(host, model).run_turn(open_session(session, "t", host.cwd), text)


async def seed_event(db: Path, cwd: Path, title: str = "Kiln fires on Friday") -> str:
    """An earlier conversation in another session, derived into one event."""
    space = space_for("project", cwd=str(cwd), session_id="old")
    model = ScriptedModel.of([SUMMARY])
    async with await StrataGate.open(db, MemoryConfig(block_turn_size=2), model) as memory:
        ids = []
        for i in range(2):
            receipt = await memory.blocks.append_turn(
                space,
                "old",
                user=f"the kiln fires friday {i}",
                assistant="noted",
                receipt_id=f"old:{i}",
            )
            ids += receipt.message_ids
        model.push(
            {
                "should_extract": True,
                "events": [
                    {
                        "title": title,
                        "summary": f"{title}.",
                        "source_message_ids": [ids[0]],
                        "scope": "user",
                    }
                ],
            }
        )
        await memory.derivation.process_pending()
        [event] = await memory.events.cards(space)
    return event.id


def mention_count(db: Path, event_id: str) -> int:
    conn = sqlite3.connect(db)
    count = conn.execute("SELECT mention_count FROM events WHERE id = ?", (event_id,)).fetchone()
    conn.close()
    return int(count[0])


async def test_retrieve_assess_record_answer_reinforces_once(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    event_id = await seed_event(db, tmp_path)
    ref = f"event:{event_id}"
    model = ScriptedChatModel.of(
        tool_reply("memory_search_events", {"query": "kiln friday"}, "c1"),
        tool_reply(
            "memory_assess",
            {
                "batch_id": "batch_1",
                "verdict": "sufficient",
                "evidence_refs": [ref],
                "fit": "direct",
                "missing": "",
                "next_strategy": "answer",
            },
            "c2",
        ),
        tool_reply("memory_record_use", {"batch_id": "batch_1", "evidence_refs": [ref]}, "c3"),
        "The kiln fires on Friday.",
    )
    async with make_host(db, tmp_path) as host:
        result = await turn(host, model, "When does the kiln fire?")
    assert result.ok and result.answer == "The kiln fires on Friday."
    assert ref in model.requests[1].messages[-1].text
    assert mention_count(db, event_id) == 2
    system = model.requests[0].messages[0].text
    assert system.index("[Activated long-term memory]") < system.index("[StrataGate memory proto")
    assert "Kiln fires on Friday" in system  # automatic recall from another session
    folded = result.folded
    assert folded is not None and folded.tool_calls == ()  # memory tools are never recorded


@pytest.mark.parametrize("open_batches", [1, 2, 3])
async def test_open_batches_are_closed_before_a_tool_free_answer(
    tmp_path: Path, open_batches: int
) -> None:
    db = tmp_path / "m.db"
    await seed_event(db, tmp_path)
    searches = [
        tool_reply("memory_search_raw", {"query": "kiln"}, f"s{i}") for i in range(open_batches)
    ]
    closes = [
        tool_reply(
            "memory_record_use", {"batch_id": f"batch_{i + 1}", "evidence_refs": []}, f"r{i}"
        )
        for i in range(open_batches)
    ]
    replies: list[ChatMessage | str] = [*searches, "draft answer"]
    for close in closes:
        replies += [close, "closed one"]
    model = ScriptedChatModel.of(*replies, "The kiln fires on Friday, as you said.")
    async with make_host(db, tmp_path) as host:
        result = await turn(host, model, "When does the kiln fire?")
        memory = runtime_of(host).memory
        space = runtime_of(host).session_space(open_session("s1", "t", tmp_path))
        assert await memory.gate.unresolved_batches(space, "s1") == []
    assert result.ok and result.answer == "The kiln fires on Friday, as you said."
    assert model.requests[-1].tools == []  # the recovery step runs without tools
    steers = [m for m in model.requests[-1].messages if m.source == "plugin"]
    assert len(steers) == open_batches and "batch_1" in steers[0].text
    assert "batch" not in result.answer


async def test_cleanup_without_progress_fails_the_turn(tmp_path: Path) -> None:
    model = ScriptedChatModel.of(
        tool_reply("memory_search_raw", {"query": "kiln"}, "s1"), "answer", "answer again"
    )
    async with make_host(tmp_path / "m.db", tmp_path) as host:
        result = await turn(host, model, "When does the kiln fire?")
    assert not result.ok and "made no progress" in (result.error or "")


async def test_incomplete_recovered_answers_fail_after_three_attempts(tmp_path: Path) -> None:
    model = ScriptedChatModel.of(
        tool_reply("memory_search_raw", {"query": "kiln"}, "s1"),
        "draft",
        tool_reply("memory_record_use", {"batch_id": "batch_1", "evidence_refs": []}, "r1"),
        "closed",
        "",
        "   ",
        ChatMessage(role="assistant", content="cut", finish_reason="length"),
    )
    async with make_host(tmp_path / "m.db", tmp_path) as host:
        result = await turn(host, model, "When does the kiln fire?")
    assert not result.ok and "after 3 attempts" in (result.error or "")


async def test_profile_consent_accepted_and_refused(tmp_path: Path) -> None:
    propose = tool_reply("memory_profile_update", {"field": "current_city", "value": "Porto"})
    async with make_host(tmp_path / "m.db", tmp_path) as host:
        memory = runtime_of(host).memory
        await turn(host, ScriptedChatModel.of(propose, "Shall I set Porto?"), "I fly out today.")
        assert (await memory.profile.get()).values["current_city"] == ""
        await turn(host, ScriptedChatModel.of("Done."), "同意")
        assert (await memory.profile.get()).values["current_city"] == "Porto"
        refuse = tool_reply("memory_profile_update", {"field": "home_city", "value": "Faro"})
        await turn(host, ScriptedChatModel.of(refuse, "Set Faro?"), "I like the south.")
        second = ScriptedChatModel.of("Sunny.")
        await turn(host, second, "What's the weather like?")
        assert (await memory.profile.get()).values["home_city"] == ""
        assert "Current city: Porto" in second.requests[0].messages[0].text


async def test_memory_spaces_keep_projects_apart(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    await seed_event(db, tmp_path / "a")
    search = tool_reply("memory_search_events", {"query": "kiln friday"}, "c1")
    close = tool_reply("memory_record_use", {"batch_id": "batch_1", "evidence_refs": []}, "c2")
    for folder, expected in (("a", 1), ("b", 0)):
        model = ScriptedChatModel.of(search, close, "ok")
        async with make_host(db, tmp_path / folder) as host:
            await turn(host, model, "kiln?", session=f"s-{folder}")
        assert model.requests[1].messages[-1].text.count('"title"') == expected


async def test_a_restart_between_turns_keeps_everything(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    async with make_host(db, tmp_path) as host:
        await turn(host, ScriptedChatModel.of("Noted."), "My kiln is called Bertha.")
    async with make_host(db, tmp_path) as host:
        model = ScriptedChatModel.of("Noted again.")
        await turn(host, model, "It fires on Fridays.")
        memory = runtime_of(host).memory
        space = runtime_of(host).session_space(open_session("s1", "t", tmp_path))
        blocks = await memory.blocks.views(space, "s1")
    history = [m.text for m in model.requests[0].messages]
    assert "My kiln is called Bertha." in history and "Noted." in history
    assert len(blocks) == 1 and blocks[0].block.start_turn == 1  # both turns, one block


async def test_ready_blocks_replace_their_native_turns(tmp_path: Path) -> None:
    facts = [
        "We decided to move the spring ceramics sale from the 7th to 14 March because the "
        "glaze delivery from Glazeworks is late and the kiln needs two more firing days.",
        "My sister Ines will run the evening wheel-throwing classes on Tuesdays starting next "
        "month, and the studio will open at 10am on Saturdays for drop-in visitors.",
    ]
    replies = [f"Understood. {fact} I will keep that in mind for planning." for fact in facts]
    async with make_host(tmp_path / "m.db", tmp_path) as host:
        for fact, reply in zip(facts, replies, strict=True):
            await turn(host, ScriptedChatModel.of(reply), fact)
        runtime = await worker_on_request(host)  # no pass of its own beside the test's
        await runtime.memory.derivation.process_pending()
        model = ScriptedChatModel.of("ok")
        await turn(host, model, "What did we plan?")
    sent = [m for m in model.requests[0].messages if m.role != "system"]
    assert sent[0].source == "plugin" and sent[0].text.startswith(
        "[StrataGate historical conversation block]"
    )
    assert "| Turns: 1-2 | Level: L" in sent[0].text
    assert [m.text for m in sent[1:]] == ["What did we plan?"]
    session_file = open_session("s1", "t", tmp_path).history
    assert [m.text for m in session_file][:2] == [facts[0], replies[0]]  # native log intact


async def test_registered_tools_match_the_manifest_and_say_who_provides_them(
    tmp_path: Path,
) -> None:
    async with make_host(tmp_path / "m.db", tmp_path) as host:
        assert set(host.tools) == set(plugin.TOOLS)
        for tool in host.tools.values():
            assert tool.description.startswith("This tool is provided by the StrataGate plugin.")
            assert tool.parameters["type"] == "object"
    async with make_host(tmp_path / "m.db", tmp_path, agent_memory_enabled=False) as host:
        assert set(host.tools) == set(plugin.TOOLS) - {"memory_remember"}


async def test_tool_errors_go_back_to_the_model_as_text(tmp_path: Path) -> None:
    model = ScriptedChatModel.of(
        tool_reply("memory_expand_event", {"id": "evt_missing"}, "c1"),
        tool_reply(
            "memory_assess",
            {
                "verdict": "sufficient",
                "evidence_refs": [],
                "fit": "",
                "missing": "",
                "next_strategy": "answer",
            },
            "c2",
        ),
        "I could not find it.",
    )
    async with make_host(tmp_path / "m.db", tmp_path) as host:
        result = await turn(host, model, "Show me that event")
    assert result.ok and result.answer == "I could not find it."
    assert model.requests[1].messages[-1].text.startswith("Error: memory_expand_event failed")
    assert "no retrieval batch exists" in model.requests[2].messages[-1].text.lower()


async def test_an_answer_that_reports_bookkeeping_is_asked_for_again(tmp_path: Path) -> None:
    model = ScriptedChatModel.of(
        tool_reply("memory_search_raw", {"query": "kiln"}, "s1"),
        tool_reply("memory_record_use", {"batch_id": "batch_1", "evidence_refs": []}, "r1"),
        "I closed batch_1 with an empty receipt; nothing found.",
        "I don't have anything about the kiln in memory yet.",
    )
    async with make_host(tmp_path / "m.db", tmp_path) as host:
        result = await turn(host, model, "When does the kiln fire?")
    assert result.ok and result.answer == "I don't have anything about the kiln in memory yet."
    assert model.requests[-1].tools == []
    assert "bookkeeping" in model.requests[-1].messages[-1].text


async def test_a_block_sealed_by_the_last_turn_is_derived_before_shutdown(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    async with make_host(db, tmp_path) as host:
        for text in ("We moved the sale to 14 March.", "Ines teaches on Tuesdays."):
            await turn(host, ScriptedChatModel.of("Noted."), text)
    conn = sqlite3.connect(db)
    statuses = conn.execute("SELECT processing_status FROM blocks").fetchall()
    jobs = conn.execute(
        "SELECT status FROM jobs WHERE kind NOT IN "
        "('topic_projection', 'graph_projection') "
        "ORDER BY created_at"
    ).fetchall()
    conn.close()
    assert statuses == [("ready",)]
    assert [row[0] for row in jobs] == ["succeeded", "succeeded"]


async def test_raw_search_tool_ranks_the_namespace_like_retrieve(tmp_path: Path) -> None:
    """Namespace scope finds a reply by its context (the spec's plain BM25 cannot)."""
    db = tmp_path / "m.db"
    space = space_for("project", cwd=str(tmp_path), session_id="old")
    async with await StrataGate.open(db, MemoryConfig(block_turn_size=2)) as memory:
        ids: list[str] = []
        for i, (user, assistant) in enumerate(
            [("Did you book the kiln?", "Yes, for Friday!"), ("Lunch?", "Soup.")]
        ):
            receipt = await memory.blocks.append_turn(
                space, "old", user=user, assistant=assistant, receipt_id=f"old:{i}"
            )
            ids += receipt.message_ids
        spec = [hit.message.id for hit in await memory.retrieval.search_raw(space, "kiln")]
    question, reply = ids[0], ids[1]
    assert spec == [question]
    model = ScriptedChatModel.of(tool_reply("memory_search_raw", {"query": "kiln"}, "c1"), "ok")
    async with make_host(db, tmp_path) as host:
        await turn(host, model, "What about the kiln?")
    shown = model.requests[1].messages[-1].text
    assert f":{question}:0" in shown and f":{reply}:1" in shown
