"""The topic catalog through the real engine: built in the background by the offline
grouper, invalidated by a changed source and never by adoption or decay, the historical
budget and leases of §5.3, and a garbage answer rejected before anything is written."""

import sqlite3
from collections import deque
from datetime import timedelta
from pathlib import Path

import pytest
from topic_data import EN_TURNS, ZH_TURNS, TopicScript, add_events, at, conversation, new_space

from stratagate_plugin.core.config import MemoryConfig
from stratagate_plugin.core.errors import NotFound
from stratagate_plugin.core.llm.base import ModelError
from stratagate_plugin.core.memory import StrataGate
from stratagate_plugin.core.store import topic_jobs
from stratagate_plugin.core.text.token_budget import estimate_tokens
from stratagate_plugin.core.topics.model import PENDING_TITLE

NS = "ns"


def chapters(book: dict[str, object]) -> list[dict[str, object]]:
    return list(book["chapters"])  # type: ignore[call-overload]


async def test_the_offline_grouper_builds_chapters_of_an_english_and_a_chinese_talk(
    tmp_path: Path,
) -> None:
    async with await StrataGate.open(tmp_path / "m.db") as memory:
        await conversation(memory, NS, EN_TURNS)
        await conversation(memory, "zh", ZH_TURNS)
        events = {e.id: e for e in await memory.events.cards(NS)}
        book = await memory.topics.book(NS)
        titles = [c["title"] for c in chapters(book)]  # named by their people (and subjects)
        assert [t.split(":")[0] for t in titles] == ["Caroline", "Melanie"], titles
        held = [i for c in chapters(book) for i in c["eventIds"]]  # type: ignore[attr-defined]
        assert sorted(held) == sorted(events) and book["fallbackEntries"] == 0
        for chapter in chapters(book):
            person = chapter["title"].split(":")[0]
            members = chapter["eventIds"]
            assert all(events[i].temporal["participants"][0] == person for i in members)  # type: ignore[attr-defined]
            sectioned = [i for s in chapter["sections"] for i in s["eventIds"]]  # type: ignore[attr-defined]
            assert sorted(sectioned) == sorted(members)  # type: ignore[arg-type]
            for paragraph in chapter["overview"]:  # type: ignore[attr-defined]
                assert 1 <= len(paragraph["event_ids"]) <= 12
                assert set(paragraph["event_ids"]) <= set(members)  # type: ignore[arg-type]
        zh = chapters(await memory.topics.book("zh"))
        assert {c["title"].split("：")[0] for c in zh} == {"小明", "小红"}
        sections = {s["title"] for c in zh for s in c["sections"]}  # type: ignore[attr-defined]
        assert sections <= {"决定与计划", "偏好与要求", "工作与结果", "交流与协作", "其他经历"}
        directory = await memory.topics.directory("zh")
        assert "小明" in directory and estimate_tokens(directory) <= 400
        again = await memory.derivation.process_pending()
        assert again.topics.ran == 0  # nothing new: no job


async def test_a_changed_or_forgotten_source_invalidates_and_the_chapter_is_rebuilt(
    tmp_path: Path,
) -> None:
    async with await StrataGate.open(tmp_path / "m.db") as memory:
        await conversation(memory, NS, EN_TURNS)
        [caroline, melanie] = chapters(await memory.topics.book(NS))
        edited = caroline["eventIds"][0]  # type: ignore[index]

        def edit(raw: sqlite3.Connection) -> None:
            raw.execute(
                "UPDATE events SET summary = 'Caroline said the group was cancelled.', "
                "updated_at = '2030-01-01T00:00:00+00:00' WHERE id = ?",
                (edited,),
            )

        await memory.db.write(edit)
        shown = await memory.topics.expand(NS, str(caroline["id"]))
        assert shown["status"] == "pending" and shown["title"] == PENDING_TITLE
        assert shown["overview"] == [] and shown["sections"] == []
        assert PENDING_TITLE in await memory.topics.directory(NS)
        report = await memory.topics.process()
        assert report.succeeded >= 1 and report.failed == 0
        rebuilt = {c["id"]: c for c in chapters(await memory.topics.book(NS))}
        assert rebuilt[caroline["id"]]["status"] == "ready"  # same id, words again
        assert rebuilt[caroline["id"]]["title"] == "Caroline"
        assert edited in rebuilt[caroline["id"]]["eventIds"]  # type: ignore[operator]

        gone = melanie["eventIds"][0]  # type: ignore[index]
        await memory.gate.forget_event(gone)
        assert (await memory.topics.expand(NS, str(melanie["id"])))["status"] == "pending"
        await memory.topics.process()
        after = {c["id"]: c for c in chapters(await memory.topics.book(NS))}
        assert gone not in after[melanie["id"]]["eventIds"]  # type: ignore[operator]
        assert after[melanie["id"]]["status"] == "ready"


async def test_adoption_pinning_and_decay_never_invalidate(tmp_path: Path) -> None:
    async with await StrataGate.open(tmp_path / "m.db") as memory:
        await conversation(memory, NS, EN_TURNS)
        before = await memory.topics.book(NS)
        event_id = str(chapters(before)[0]["eventIds"][0])  # type: ignore[index]
        old = await memory.events.get(event_id)
        batch = await memory.gate.open_batch(
            NS, "t9", "memory_search_events", [f"event:{event_id}"]
        )
        ref = f"event:{event_id}"
        await memory.gate.assess(NS, "t9", batch.id, "sufficient", [ref], "direct", "", "answer")
        await memory.gate.record_use(NS, "t9", batch.id, [ref], "receipt-1")
        await memory.gate.pin_event(event_id)
        for n in range(8):  # later turns and blocks: the event decays
            await memory.blocks.append_turn(NS, "t2", user=f"unrelated chatter {n}", assistant="ok")
        adopted = await memory.events.get(event_id)
        assert adopted.mention_count == old.mention_count + 1 and adopted.pinned
        assert adopted.updated_at > old.updated_at
        assert all(e["status"] == "ready" for e in chapters(await memory.topics.book(NS)))
        report = await memory.topics.process()
        assert report.ran == 0
        assert chapters(await memory.topics.book(NS)) == chapters(before)


async def test_a_garbage_answer_fails_the_job_and_writes_nothing(tmp_path: Path) -> None:
    bad = {"topics": [{"title": "Half", "event_ids": ["evt_not_in_batch"]}]}
    model = TopicScript(answers=deque([bad, ModelError("timeout"), {"topics": []}]))
    # the default is the embedded grouper; the failure path itself: no offline fallback
    config = MemoryConfig(topic_projector="model", offline_fallback=False)
    async with await StrataGate.open(tmp_path / "m.db", config, model) as memory:
        memory.topics.clock = lambda: at(0)  # type: ignore[method-assign]
        await new_space(memory, NS)
        await add_events(memory, NS, 3)
        report = await memory.topics.process()
        assert report.failed == 1 and "not a batch event" in report.errors[0]
        book = await memory.topics.book(NS)
        assert book["chapters"] == [] and book["fallbackEntries"] == 3
        [pending] = book["pending"]
        assert pending["status"] == "failed" and pending["attempts"] == 1
        assert pending["nextRetryAt"] == at(0.5).isoformat()  # 30 s backoff
        memory.topics.clock = lambda: at(0.5)  # type: ignore[method-assign]
        await memory.topics.process()
        [pending] = (await memory.topics.book(NS))["pending"]
        assert pending["nextRetryAt"] == at(1.5).isoformat()  # then 60 s
        memory.topics.clock = lambda: at(2)  # type: ignore[method-assign]
        await memory.topics.process()
        [pending] = (await memory.topics.book(NS))["pending"]
        assert pending["attempts"] == 3 and pending["nextRetryAt"] is None
        memory.topics.clock = lambda: at(60)  # type: ignore[method-assign]
        assert (await memory.topics.process()).ran == 0  # exhausted: no automatic retry
        assert await memory.topics.retry(NS) == 1
        report = await memory.topics.process()  # a fresh job; offline answers now
        assert report.succeeded == 1
        book = await memory.topics.book(NS)
        assert book["pending"] == [] and book["fallbackEntries"] == 0
        assert len(model.topic_tasks) == 3  # scripted answers; the fresh job got the grouper
        payload = model.topic_tasks[0].payload
        assert [e["id"] for e in payload["events"]] == [f"evt_ns_000{n}" for n in range(3)]
        assert payload["candidates"] == [] and "quotes" not in payload["events"][0]
        assert model.topic_tasks[0].max_output_tokens == 32_768  # §5.3, cut to the window


async def test_historical_batches_wait_for_the_budget_across_reopen(tmp_path: Path) -> None:
    """With a paid topic model (the offline grouper is free: tests/test_topics_finish.py)."""
    path, paid = tmp_path / "m.db", MemoryConfig(topic_projector="model")
    async with await StrataGate.open(path) as memory:
        await new_space(memory, NS)
        await add_events(memory, NS, 30)  # written before any topic pass: an old space

        def forget_state(raw: sqlite3.Connection) -> None:
            raw.execute("DELETE FROM topic_state")

        await memory.db.write(forget_state)
    async with await StrataGate.open(path, paid, TopicScript()) as memory:  # first open
        memory.topics.clock = lambda: at(0)  # type: ignore[method-assign]
        report = await memory.topics.process()
        assert report.succeeded == 2  # 12 + 12 of 30; the third historical batch waits
        waiting = (await memory.topics.book(NS))["pending"]
        assert [(p["status"], len(p["eventIds"])) for p in waiting] == [("pending", 6)]
        await new_space(memory, "other")
        await add_events(memory, "other", 2)  # new events are not historical: they run
        assert (await memory.topics.process()).succeeded == 1
    async with await StrataGate.open(path, paid, TopicScript()) as memory:
        memory.topics.clock = lambda: at(5)  # type: ignore[method-assign]
        assert (await memory.topics.process()).ran == 0  # the ledger was persisted
        memory.topics.clock = lambda: at(10)  # type: ignore[method-assign]
        assert (await memory.topics.process()).succeeded == 1
        book = await memory.topics.book(NS)
        assert book["pending"] == [] and book["fallbackEntries"] == 0
        assert sum(len(c["eventIds"]) for c in chapters(book)) == 30  # type: ignore[misc, arg-type]


async def test_one_running_topic_job_per_space_under_a_five_minute_lease(tmp_path: Path) -> None:
    async with await StrataGate.open(tmp_path / "m.db") as memory:
        for space in (NS, "other"):
            await new_space(memory, space)
        await add_events(memory, NS, 20)  # two batches
        await add_events(memory, "other", 1)
        await memory.db.write(lambda raw: topic_jobs_sync(raw))

        def claim(minutes: float, owner: str) -> object:
            return memory.db.write(
                lambda raw: topic_jobs.claim(
                    raw, at(minutes), owner, timedelta(minutes=5), lambda _: (True, "{}")
                )
            )

        first = await claim(0, "a")
        second = await claim(0, "b")
        assert first is not None and second is not None
        assert {first.namespace, second.namespace} == {NS, "other"}  # type: ignore[attr-defined]
        assert await claim(1, "c") is None  # NS's second batch waits for its running one
        assert await claim(4.9, "c") is None
        taken = await claim(5, "c")  # the lease ran out: taken back, claimed again
        assert taken is not None and taken.namespace == NS  # type: ignore[attr-defined]


def topic_jobs_sync(raw: sqlite3.Connection) -> None:
    from stratagate_plugin.core.store.sqlite.topics import SqliteTopicsTransaction
    from stratagate_plugin.core.topics.sync import sync_space

    tx = SqliteTopicsTransaction(raw)
    for space in tx.all_spaces():
        sync_space(tx, space, at(0))


async def test_agent_weight_zero_hides_chapters_with_agent_events(tmp_path: Path) -> None:
    async with await StrataGate.open(tmp_path / "m.db") as memory:
        await new_space(memory, NS)
        passive, _ = await add_events(memory, NS, 2)  # gardening, pottery
        [agent] = await add_events(memory, NS, 1, start=7, pool="agent")  # gardening too
        await memory.topics.process()
        book = {c["title"]: c for c in chapters(await memory.topics.book(NS))}
        assert set(book) == {"gardening", "pottery"}
        assert book["gardening"]["eventIds"] == [passive, agent]
    config = memory.config.model_copy(update={"agent_memory_weight": 0.0})
    async with await StrataGate.open(tmp_path / "m.db", config=config) as memory:
        page = await memory.topics.catalog(NS)
        ids = [t["id"] for t in page["topics"]]
        assert ids == [book["pottery"]["id"], f"fallback:{passive}"]  # the agent event: none
        directory = await memory.topics.directory(NS)
        assert str(book["gardening"]["id"]) not in directory and f"fallback:{passive}" in directory
        with pytest.raises(NotFound, match="no topic"):
            await memory.topics.expand(NS, str(book["gardening"]["id"]))
        assert (await memory.topics.book(NS))["chapters"][0]["hidden"] is True


@pytest.mark.parametrize("weight", [1.0, 0.0])
async def test_a_book_window_holds_those_chapters_of_the_whole_book(
    tmp_path: Path, weight: float
) -> None:
    """The topics page reads its 20 chapters, not every chapter's sections and overview:
    a window's chapters are the whole book's at those places, with the counts of all."""
    config = MemoryConfig(agent_memory_weight=weight)
    async with await StrataGate.open(tmp_path / "m.db", config=config) as memory:
        await new_space(memory, NS)
        await add_events(memory, NS, 2)
        await add_events(memory, NS, 1, start=7, pool="agent")
        await memory.topics.process()
        whole = chapters(await memory.topics.book(NS))
        assert len(whole) == 2 and "chapterCount" not in await memory.topics.book(NS)
        for offset, count in [(0, 20), (0, 1), (1, 1), (2, 5), (0, 0)]:
            window = await memory.topics.book(NS, window=(offset, count))
            assert chapters(window) == whole[offset : offset + count]
            assert window["chapterCount"] == 2
            assert window["listedChapters"] == sum(1 for c in whole if not c["hidden"])
