"""The import engine over a real database (spec §11.3–11.4): the five actions, the 0.85
bar, recovery, idempotent re-import, resuming after a restart, and bad commits."""

import asyncio
import json
import sqlite3
from pathlib import Path

import pytest
from imports import (
    COFFEE,
    NS,
    TEA,
    analysed,
    candidate,
    counts,
    decision,
    document,
    imported,
    seed,
    stored,
)

from stratagate_plugin.core.errors import InvalidInput, NotFound
from stratagate_plugin.core.importer.decider import NO_TARGET
from stratagate_plugin.core.llm.base import ModelServerError, ScriptedModel
from stratagate_plugin.core.memory import StrataGate
from stratagate_plugin.memory_plugin.runtime import MemoryRuntime
from stratagate_plugin.memory_plugin.settings import DEFAULT_SETTINGS


def links(plain: sqlite3.Connection, event_id: str, key: str) -> list[str]:
    row = stored(plain, event_id)
    assert row is not None
    found: list[str] = json.loads(row["temporal_json"]).get(key, [])
    return found


async def test_a_clear_new_candidate_is_added_citing_the_source_block(
    memory: StrataGate, plain: sqlite3.Connection
) -> None:
    text = document(
        candidate(
            "Lives in Lyon",
            "The user lives in Lyon.",
            category="identity",
            quotes=["I live in Lyon"],
        )
    )
    batch = await imported(memory, text)
    [event_id] = batch.event_ids
    row = stored(plain, event_id)
    assert row is not None and row["status"] == "active" and row["criticality"] == "identity"
    block = plain.execute("SELECT * FROM blocks WHERE id = ?", (batch.id,)).fetchone()
    assert block["thread_id"] == f"external-import:{batch.id}"
    assert block["processing_status"] == "ready" and block["should_extract"] == 0
    assert block["l0_tags_json"] == '["external-memory-import"]'
    [message] = plain.execute("SELECT * FROM messages WHERE block_id = ?", (batch.id,)).fetchall()
    assert message["role"] == "user" and message["content"] == text
    cited = plain.execute(
        "SELECT message_id FROM event_sources WHERE event_id = ?", (event_id,)
    ).fetchall()
    assert [r[0] for r in cited] == [message["id"]]
    assert (
        plain.execute("SELECT COUNT(*) FROM jobs WHERE target_id = ?", (batch.id,)).fetchone()[0]
        == 0
    )
    queued = plain.execute(
        "SELECT b.priority FROM graph_batch_events e JOIN graph_batches b ON b.id = e.batch_id "
        "WHERE e.event_id = ?",
        (event_id,),
    ).fetchall()
    assert [r[0] for r in queued] == [2000]


@pytest.mark.parametrize("action", ["ADD", "MERGE", "SUPERSEDE", "CONFLICT", "IGNORE"])
async def test_each_of_the_five_actions_is_applied(
    memory: StrataGate, plain: sqlite3.Connection, action: str
) -> None:
    await seed(memory, "evt_tea", TEA)
    memory.model = ScriptedModel.of([decision(action, ["evt_tea"])])
    job = await analysed(memory, document(candidate(COFFEE)))
    [item] = job.items
    assert item.action == action and item.confidence == 0.95 and not item.requires_confirmation
    [asked] = memory.model.requests  # type: ignore[attr-defined]
    assert "another AI's export" in asked.instructions
    assert [e["event_id"] for e in asked.payload["existing"]] == ["evt_tea"]
    assert [m.id for m in item.matches] == ["evt_tea"]
    batch = await memory.imports.commit(job.id)
    old = stored(plain, "evt_tea")
    assert old is not None
    if action == "IGNORE":
        assert batch.event_ids == [] and old["status"] == "active"
        return
    [new] = batch.event_ids
    if action in ("MERGE", "SUPERSEDE"):
        assert (old["status"], old["superseded_by"], old["forced_cap"]) == ("superseded", new, 0.1)
        assert links(plain, new, "supersedes_event_ids") == ["evt_tea"]
    else:
        assert old["status"] == "active"
    if action == "CONFLICT":
        assert links(plain, new, "conflicts_with_event_ids") == ["evt_tea"]
        assert links(plain, "evt_tea", "conflicts_with_event_ids") == [new]


@pytest.mark.parametrize(("confidence", "asks"), [(0.84, True), (0.85, False)])
async def test_below_085_the_user_decides_and_silence_is_ignore(
    memory: StrataGate, confidence: float, asks: bool
) -> None:
    await seed(memory, "evt_tea", TEA)
    memory.model = ScriptedModel.of([decision("SUPERSEDE", ["evt_tea"], confidence)])
    job = await analysed(memory, document(candidate(COFFEE)))
    assert job.items[0].requires_confirmation is asks
    assert job.status == ("awaiting_confirmation" if asks else "ready")
    batch = await memory.imports.commit(job.id)
    assert len(batch.event_ids) == (0 if asks else 1)


async def test_the_users_choice_decides_a_low_confidence_item(
    memory: StrataGate, plain: sqlite3.Connection
) -> None:
    await seed(memory, "evt_tea", TEA)
    memory.model = ScriptedModel.of([decision("SUPERSEDE", ["evt_tea"], 0.5)])
    job = await analysed(memory, document(candidate(COFFEE)))
    batch = await memory.imports.commit(job.id, {0: "conflict"})
    [new] = batch.event_ids
    assert links(plain, new, "conflicts_with_event_ids") == ["evt_tea"]
    assert (await memory.imports.job(job.id)).items[0].choice == "CONFLICT"


async def test_unknown_and_targetless_decisions_are_ignored(memory: StrataGate) -> None:
    await seed(memory, "evt_tea", TEA)
    memory.model = ScriptedModel.of(
        [decision("DELETE", ["evt_tea"]), decision("MERGE", ["evt_elsewhere"], 0.99)]
    )
    job = await analysed(memory, document(candidate(COFFEE), candidate(COFFEE + " and tea")))
    unknown, targetless = job.items
    assert unknown.action == "IGNORE" and "unknown action 'DELETE'" in unknown.reason
    assert (targetless.action, targetless.confidence, targetless.reason) == (
        "IGNORE",
        0.5,
        NO_TARGET,
    )
    assert targetless.requires_confirmation


async def test_a_failing_model_falls_back_to_the_offline_rule_and_asks(memory: StrataGate) -> None:
    await seed(memory, "evt_tea", TEA)
    memory.model = ScriptedModel.of([ModelServerError("503 from provider")])
    job = await analysed(memory, document(candidate(COFFEE)))
    [item] = job.items
    assert item.requires_confirmation and "503 from provider" in item.reason
    assert item.action == "SUPERSEDE"  # the offline rule: a change cue over a strong overlap


async def test_exact_duplicates_are_ignored_with_confidence_one(memory: StrataGate) -> None:
    await seed(memory, "evt_agent", "Has a dog called Rex", pool="agent")
    text = document(
        candidate("  has a DOG called rex "), candidate("Owns a bike"), candidate("owns a bike")
    )
    job = await analysed(memory, text)
    live, fresh, repeated = job.items
    assert (live.action, live.confidence, live.target_ids) == ("IGNORE", 1.0, ["evt_agent"])
    assert fresh.action == "ADD"
    assert (repeated.action, repeated.confidence) == ("IGNORE", 1.0)
    assert "candidate 1" in repeated.reason


async def test_importing_the_same_file_again_is_all_ignore(memory: StrataGate) -> None:
    text = document(
        candidate("Lives in Lyon"), candidate("Works at Acme", "Data engineer at Acme.")
    )
    first = await imported(memory, text)
    again = await analysed(memory, text)
    assert [i.action for i in again.items] == ["IGNORE", "IGNORE"]
    assert {t for i in again.items for t in i.target_ids} == set(first.event_ids)
    assert (await memory.imports.commit(again.id)).event_ids == []


async def test_recovered_items_all_need_confirmation(
    memory: StrataGate, plain: sqlite3.Connection
) -> None:
    job = await memory.imports.preview(NS, "Saved memories:\nLikes hiking. Has a dog named Rex.\n")
    assert (job.status, job.total) == ("extracting", 0)
    job = await memory.imports.advance(job.id)
    assert job.recovered and job.status == "awaiting_confirmation"
    assert job.source_system == "recovered"
    assert [i.candidate.summary for i in job.items] == [  # the heading is not a memory
        "Likes hiking.",  # the text's own order
        "Has a dog named Rex.",
    ]
    assert all(i.requires_confirmation and i.action == "ADD" for i in job.items)
    batch = await memory.imports.commit(job.id, {1: "ADD"})
    assert [stored(plain, e)["title"] for e in batch.event_ids] == ["Has a dog named Rex"]  # type: ignore[index]
    final = (await memory.imports.job(job.id)).status
    assert final == "committed"


async def test_broken_json_is_recovered_offline_from_its_pairs(memory: StrataGate) -> None:
    broken = '{"candidates": [{"title": "Lives in Lyon", "summary": "The user lives in Lyon"},'
    job = await memory.imports.advance((await memory.imports.preview(NS, broken)).id)
    assert job.recovered and [i.candidate.title for i in job.items] == ["Lives in Lyon"]


async def test_the_models_recovery_is_used_when_it_answers(memory: StrataGate) -> None:
    memory.model = ScriptedModel.of([{"candidates": [{"summary": "Prefers tea; since 2020"}]}])
    job = await memory.imports.advance(
        (await memory.imports.preview(NS, "tea person, since 2020")).id
    )
    assert [(i.candidate.title, i.requires_confirmation) for i in job.items] == [
        ("Prefers tea", True)
    ]


async def test_recovering_nothing_fails_the_job(memory: StrataGate) -> None:
    job = await memory.imports.advance((await memory.imports.preview(NS, "---\n***\n# \n")).id)
    assert job.status == "failed" and job.error
    with pytest.raises(InvalidInput, match="failed"):
        await memory.imports.commit(job.id)


async def test_a_job_resumes_after_the_database_is_reopened(db_path: Path) -> None:
    text = document(
        *(candidate(f"Fact number {i}", f"A distinct fact {i} about item{i}") for i in range(4))
    )
    async with await StrataGate.open(db_path) as memory:
        job = await memory.imports.preview(NS, text)
        job = await memory.imports.advance(job.id, max_items=1)
        assert (job.status, job.processed, job.total) == ("processing", 1, 4)
        first = job.items[0]
    async with await StrataGate.open(db_path) as memory:
        again = await memory.imports.job(job.id)
        assert again.processed == 1 and again.items[0] == first and again.items[1].action is None
        assert await memory.imports.advance_pending() == 3
        done = await memory.imports.job(job.id)
    assert (done.status, done.processed) == ("ready", 4)
    assert done.items[0] == first


async def test_concurrent_advances_decide_each_index_once(memory: StrataGate) -> None:
    text = document(
        *(candidate(f"Fact number {i}", f"A distinct fact {i} about item{i}") for i in range(5))
    )
    job = await memory.imports.preview(NS, text)
    await asyncio.gather(memory.imports.advance(job.id), memory.imports.advance(job.id))
    done = await memory.imports.job(job.id)
    assert (done.status, done.processed, done.total) == ("ready", 5, 5)
    assert (await memory.imports.advance(done.id)).items == done.items


async def test_bad_commits_are_one_line_errors_and_write_nothing(
    memory: StrataGate, plain: sqlite3.Connection
) -> None:
    job = await memory.imports.preview(NS, document(candidate("Lives in Lyon")))
    before = counts(plain)
    with pytest.raises(InvalidInput, match="still processing"):
        await memory.imports.commit(job.id)
    await memory.imports.advance(job.id)
    for choices, problem in (
        ({5: "ADD"}, "item 5 is not in import"),
        ({0: "DROP"}, "unknown action"),
    ):
        with pytest.raises(InvalidInput, match=problem):
            await memory.imports.commit(job.id, choices)
    with pytest.raises(NotFound):
        await memory.imports.commit("imp_missing")
    assert counts(plain) == before
    batch = await memory.imports.commit(job.id)
    with pytest.raises(InvalidInput, match=f"already committed as batch {batch.id}"):
        await memory.imports.commit(job.id)


async def test_a_failure_mid_commit_leaves_nothing(
    memory: StrataGate, plain: sqlite3.Connection, monkeypatch: pytest.MonkeyPatch
) -> None:
    from stratagate_plugin.core.store.sqlite import imports as service

    job = await analysed(memory, document(candidate("Lives in Lyon"), candidate("Works at Acme")))
    before = counts(plain)

    def broken(*args: object) -> list[str]:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(service.graph_jobs, "queue_events", broken)
    with pytest.raises(RuntimeError, match="disk on fire"):
        await memory.imports.commit(job.id)
    assert counts(plain) == before
    assert (await memory.imports.job(job.id)).status == "ready"
    monkeypatch.undo()
    assert len((await memory.imports.commit(job.id)).event_ids) == 2


async def test_bad_previews_are_refused_before_a_job_exists(
    memory: StrataGate, plain: sqlite3.Connection
) -> None:
    many = document(*(candidate(f"c{i}") for i in range(201)))
    for text, problem in ((many, "201 candidates"), ("PK\x03\x04zip", "binary")):
        with pytest.raises(InvalidInput, match=problem):
            await memory.imports.preview(NS, text)
    with pytest.raises(InvalidInput, match="unknown import format"):
        await memory.imports.preview(NS, document(), "csv")
    assert plain.execute("SELECT COUNT(*) FROM import_jobs").fetchone()[0] == 0


async def test_jobs_are_listed_newest_first_per_space(memory: StrataGate) -> None:
    first = await memory.imports.preview(NS, document(candidate("a b")))
    second = await memory.imports.preview(NS, document(candidate("c d")))
    await memory.imports.preview("other", document(candidate("e f")))
    assert [j.id for j in await memory.imports.jobs(NS)] == [second.id, first.id]
    with pytest.raises(NotFound):
        await memory.imports.job("imp_nothing")
    empty = await memory.imports.preview(NS, document())
    assert (empty.status, empty.total) == ("ready", 0)


async def test_the_plugin_worker_advances_pending_imports(tmp_path: Path) -> None:
    settings = {**DEFAULT_SETTINGS, "database": str(tmp_path / "m.db")}
    runtime = await MemoryRuntime.start(settings, tmp_path)
    try:
        await asyncio.wait_for(runtime.idle.wait(), timeout=10)
        text = document(candidate("Lives in Lyon"), candidate("Works at Acme"))
        job = await runtime.memory.imports.preview(NS, text)
        plain = await runtime.memory.imports.preview(NS, "They like hiking, I think.")
        runtime.kick()
        await asyncio.wait_for(runtime.idle.wait(), timeout=10)
        done = await runtime.memory.imports.job(job.id)
        recovered = await runtime.memory.imports.job(plain.id)
    finally:
        await runtime.stop(grace_s=0)
    assert (done.status, done.processed) == ("ready", 2)
    assert (recovered.status, recovered.recovered) == ("awaiting_confirmation", True)


async def test_a_lone_surrogate_is_stored_as_a_replacement_character(memory: StrataGate) -> None:
    text = document(candidate("Tea \ud800 time", "Likes tea \udfff a lot"))
    job = await analysed(memory, text)
    batch = await memory.imports.commit(job.id)
    [card] = [await memory.events.get(i) for i in batch.event_ids]
    assert (card.title, card.summary) == ("Tea \ufffd time", "Likes tea \ufffd a lot")


async def test_a_pasted_list_of_saved_memories_is_read_as_lines_not_recovered(
    memory: StrataGate,
) -> None:
    listed = "Here is what I remember about you:\n- Likes hiking\n- Has a dog named Rex\n"
    job = await memory.imports.advance((await memory.imports.preview(NS, listed)).id)
    assert (job.format, job.recovered, job.status) == ("lines", False, "ready")
    # the introduction line is a heading (it ends in a colon), not a memory
    assert sorted(i.candidate.summary for i in job.items) == ["Has a dog named Rex", "Likes hiking"]
    assert all(i.action == "ADD" and not i.requires_confirmation for i in job.items)
