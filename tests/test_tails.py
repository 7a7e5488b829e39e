"""Open tails (issue #14): found from every other session of the space from the next turn
on, whatever the session's length, and sealed when the session ends, its file ends, or it
has been idle past ``seal_idle_minutes``."""

import asyncio
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from test_plugin_e2e import make_host, runtime_of

from stratagate_plugin.cli.main import main
from stratagate_plugin.core.config import MemoryConfig
from stratagate_plugin.core.memory import StrataGate
from stratagate_plugin.core.retrieval.recall import HEADING, RecallConfig
from stratagate_plugin.core.text.token_budget import estimate_tokens
from stratagate_plugin.harness.agent import Agent
from stratagate_plugin.harness.sessions import open_session
from stratagate_plugin.memory_plugin.offline_agent import OfflineAgent

NS = "space"
MONDAY = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)


async def told(memory: StrataGate, thread: str, text: str, minutes: int = 0) -> list[str]:
    at = MONDAY + timedelta(minutes=minutes)
    receipt = await memory.blocks.append_turn(NS, thread, user=text, assistant="Noted.", at=at)
    return receipt.message_ids


# -- raw search and recall -----------------------------------------------------------------


async def test_a_one_turn_tail_is_found_by_another_sessions_raw_search(
    memory: StrataGate,
) -> None:
    [said, _] = await told(memory, "monday", "We moved the spring sale to 14 March.")
    hits = await memory.retrieval.search_raw_ranked(
        NS, "When is the spring sale?", current_thread="tuesday"
    )
    assert hits[0].message.id == said  # then its reply, a neighbour
    assert hits[0].block_id is None and hits[0].turn_range == (1, 1)
    assert hits[0].next is not None and hits[0].next.content == "Noted."
    own = await memory.retrieval.search_raw_ranked(NS, "spring sale", current_thread="monday")
    assert own == []  # the session's own tail is in its conversation already


async def test_a_tail_ranks_as_it_will_once_sealed(memory: StrataGate) -> None:
    for i in range(3):  # one sealed block (block size 3) about something else
        await told(memory, "old", f"The kiln fires on Friday, batch {i}.", i)
    [sale, _] = await told(memory, "monday", "The spring sale moved to 14 March.", 10)
    [kiln, _] = await told(memory, "monday", "The kiln needs a new spring.", 11)
    open_hits = await memory.retrieval.search_raw_ranked(
        NS, "spring sale kiln", current_thread="tuesday"
    )
    assert open_hits[0].message.id == sale and kiln in {hit.message.id for hit in open_hits}
    assert {hit.block_id for hit in open_hits if hit.message.thread_id == "monday"} == {None}
    await memory.blocks.seal_tail(NS, "monday")  # its tail is a block of its own when ranked
    sealed = await memory.retrieval.search_raw_ranked(
        NS, "spring sale kiln", current_thread="tuesday"
    )
    assert [h.message.id for h in sealed] == [h.message.id for h in open_hits]
    assert [h.score for h in sealed] == pytest.approx([h.score for h in open_hits])
    assert all(hit.block_id is not None for hit in sealed)


async def test_automatic_recall_shows_other_sessions_tail_messages(memory: StrataGate) -> None:
    [said, _] = await told(memory, "monday", "The glaze supplier raised prices by 12%.")
    await told(memory, "tuesday", "Unrelated: the van is booked for Monday.")
    context = await memory.retrieval.auto_context(NS, "tuesday", "What about the glaze supplier?")
    assert [message.id for message in context.messages] == [said]
    assert "RecentMessages:" in context.text and '"session":"monday"' in context.text
    assert "van is booked" not in context.text  # the asking session's own tail
    from_monday = await memory.retrieval.auto_context(NS, "monday", "glaze supplier")
    assert from_monday.messages == [] and "RecentMessages:" not in from_monday.text
    tight = RecallConfig(token_budget=estimate_tokens("\n".join(HEADING)) + 5)
    assert (
        await memory.retrieval.auto_context(NS, "tuesday", "glaze", config=tight)
    ).messages == []


# -- sealing idle, ended and imported tails ------------------------------------------------


async def test_idle_tails_are_sealed_whole_and_only_those(memory: StrataGate) -> None:
    await told(memory, "quiet", "first", 0)
    await told(memory, "quiet", "second", 5)
    await told(memory, "busy", "still talking", 40)
    assert await memory.blocks.seal_idle_tails(MONDAY + timedelta(minutes=5)) == []  # not before
    [block] = await memory.blocks.seal_idle_tails(MONDAY + timedelta(minutes=30))
    [view] = await memory.blocks.views(NS, "quiet")
    assert view.block.id == block and (view.block.start_turn, view.block.end_turn) == (1, 2)
    assert await memory.blocks.open_tail(NS, "quiet") == []
    assert len(await memory.blocks.open_tail(NS, "busy")) == 2
    assert await memory.blocks.seal_idle_tails(MONDAY + timedelta(minutes=30)) == []
    assert [job.kind for job in await memory.derivation.list_jobs(status="pending")] == [
        "block_summary"
    ]


async def test_an_ended_interactive_session_is_sealed_and_derived(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    async with make_host(db, tmp_path, block_turn_size=6) as host:
        agent, session = Agent(host, OfflineAgent()), open_session("monday", "t", tmp_path)
        await agent.start(session)
        await agent.run_turn(session, "We decided to move the spring sale to 14 March.")
        runtime = runtime_of(host)
        space = runtime.session_space(session)
        assert await runtime.memory.blocks.views(space) == []
        assert await agent.end(session) == []
        [view] = await runtime.memory.blocks.views(space)
        await runtime.idle.wait()  # the worker derives it in the background
        events = await runtime.memory.events.cards(space)
    assert (view.block.start_turn, view.block.end_turn) == (1, 1)
    assert any("spring sale" in event.summary for event in events)


async def test_a_tail_left_open_is_sealed_at_the_next_start_once_idle(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    async with make_host(db, tmp_path) as host:
        agent, session = Agent(host, OfflineAgent()), open_session("monday", "t", tmp_path)
        await agent.run_turn(session, "The glaze supplier raised prices by 12% last week.")
        space = runtime_of(host).session_space(session)
    async with make_host(db, tmp_path) as host:  # 30 idle minutes have not passed
        await runtime_of(host).idle.wait()
        assert await runtime_of(host).memory.blocks.views(space) == []
    async with make_host(db, tmp_path, seal_idle_minutes=0) as host:
        runtime = runtime_of(host)
        await runtime.idle.wait()
        [view] = await runtime.memory.blocks.views(space)
    assert view.block.processing_status == "ready"


async def test_the_idle_time_is_read_on_the_runtimes_clock(tmp_path: Path) -> None:
    async with make_host(tmp_path / "m.db", tmp_path) as host:
        agent, session = Agent(host, OfflineAgent()), open_session("monday", "t", tmp_path)
        result = await agent.run_turn(session, "The studio opens at 10am on Saturdays.")
        assert result.folded is not None
        runtime = runtime_of(host)
        ended = result.folded.ended_at
        runtime.clock = lambda: ended + timedelta(minutes=29)
        assert await runtime.seal_idle_tails() == []
        runtime.clock = lambda: ended + timedelta(minutes=31)
        assert len(await runtime.seal_idle_tails()) == 1


async def test_the_worker_looks_for_idle_tails_while_the_process_runs(tmp_path: Path) -> None:
    async with make_host(tmp_path / "m.db", tmp_path) as host:
        agent, session = Agent(host, OfflineAgent()), open_session("monday", "t", tmp_path)
        result = await agent.run_turn(session, "The van is booked for Monday.")
        assert result.folded is not None
        runtime, ended = runtime_of(host), result.folded.ended_at
        runtime.idle_check_s = 0.01
        runtime.kick()  # a pass (nothing is idle yet), then waits of the short interval
        await runtime.idle.wait()
        runtime.clock = lambda: ended + timedelta(hours=1)
        space = runtime.session_space(session)
        for _ in range(1000):  # no turn, no kick: only the periodic check can seal it
            if await runtime.memory.blocks.views(space):
                break
            await asyncio.sleep(0.01)
        assert len(await runtime.memory.blocks.views(space)) == 1


def test_ingest_seals_each_threads_tail_at_the_end_of_its_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    entries = [
        {
            "thread": thread,
            "role": role,
            "content": f"{thread} {role} {i}",
            "at": MONDAY.isoformat(),
        }
        for thread, turns in (("short", 2), ("long", 8))
        for i in range(turns)
        for role in ("user", "assistant")
    ]
    file, db = tmp_path / "chat.json", str(tmp_path / "m.db")
    file.write_text(json.dumps(entries), encoding="utf-8")
    assert main(["ingest", str(file), "--db", db, "--space", NS]) == 0
    assert "recorded 10 turns (0 already present) into space, sealed 3 blocks" in (
        capsys.readouterr().out
    )
    assert main(["blocks", "--db", db, "--space", NS, "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert sorted((r["thread"], r["turns"]) for r in rows) == [
        ("long", [1, 6]),
        ("long", [7, 8]),
        ("short", [1, 2]),
    ]


def test_process_seals_tails_idle_past_the_profile_setting(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "m.db"
    asyncio.run(_one_open_turn(db))
    assert main(["process", "--db", str(db)]) == 0
    assert "0 blocks became ready" in capsys.readouterr().out  # not idle for 30 minutes yet
    (tmp_path / "home" / "profiles" / "default.yml").write_text(
        "plugins: [stratagate-memory]\nsettings: {stratagate-memory: {seal_idle_minutes: 0}}\n",
        encoding="utf-8",
    )
    assert main(["process", "--db", str(db)]) == 0
    assert "1 blocks became ready" in capsys.readouterr().out


async def _one_open_turn(db: Path) -> None:
    async with await StrataGate.open(db, MemoryConfig(block_turn_size=6)) as memory:
        await memory.blocks.append_turn(NS, "monday", user="The van is booked.", assistant="Noted.")
