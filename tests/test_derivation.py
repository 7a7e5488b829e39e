"""Derivation jobs with a scripted model: states, retries, restarts, events and links."""

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from stratagate_plugin.core.config import MemoryConfig
from stratagate_plugin.core.llm.base import ModelServerError, ScriptedModel
from stratagate_plugin.core.llm.tasks import EXTRACT_EVENT_CARDS, SUMMARIZE_BLOCK
from stratagate_plugin.core.memory import StrataGate

SUMMARY = {
    "title": "Kiln plans",
    "tags": ["kiln"],
    "summary": "Talked kilns.",
    "keypoints": ["Kiln fires Friday"],
    "should_extract": True,
}


def card(source: str, title: str = "Kiln firing moved", **extra: Any) -> dict[str, Any]:
    return {
        "title": title,
        "summary": f"{title}.",
        "source_message_ids": [source],
        "scope": "user",
        **extra,
    }


async def open_memory(db_path: Path, model: ScriptedModel) -> StrataGate:
    # the retry machinery itself: no offline fallback (test_offline_fallback.py has it)
    config = MemoryConfig(block_turn_size=2, offline_fallback=False)
    return await StrataGate.open(db_path, config, model=model)


async def seal_block(
    memory: StrataGate, thread: str = "t", start: int = 0, said: tuple[str, str] | None = None
) -> list[str]:
    """Two turns (``said``: the user's two messages, by default about the kiln)."""
    ids: list[str] = []
    for i in range(start, start + 2):
        receipt = await memory.blocks.append_turn(
            "ns",
            thread,
            user=said[i - start] if said else f"kiln fires friday {i}",
            assistant="noted",
            receipt_id=f"{thread}:{i}",
        )
        ids += receipt.message_ids
    return ids


def job_states(plain: sqlite3.Connection) -> list[tuple[str, str, int]]:
    rows = plain.execute(
        "SELECT kind, status, attempts FROM jobs WHERE kind NOT IN "
        "('topic_projection', 'graph_projection') "
        "ORDER BY created_at, id"
    )
    return [tuple(row) for row in rows]  # type: ignore[misc]


async def test_summary_then_extraction_makes_the_block_ready(
    db_path: Path, plain: sqlite3.Connection
) -> None:
    model = ScriptedModel.of([SUMMARY])
    memory = await open_memory(db_path, model)
    ids = await seal_block(memory)
    model.push({"should_extract": True, "events": [card(ids[0], tags=["kiln"])]})
    report = await memory.derivation.process_pending()
    assert (report.ran, report.succeeded, report.failed) == (2, 2, 0)
    assert job_states(plain) == [
        ("block_summary", "succeeded", 1),
        ("event_extraction", "succeeded", 1),
    ]
    [view] = await memory.blocks.views()
    assert view.block.processing_status == "ready" and view.block.l0_title == "Kiln plans"
    assert view.view_tokens["L0"] > 0
    [event] = await memory.events.cards()
    assert event.source_message_ids == [ids[0]] and event.source_block_id == view.block.id
    assert event.mention_count == 1 and event.last_adopted_turn == event.formed_turn == 2
    assert [t.name for t in model.requests] == [SUMMARIZE_BLOCK, EXTRACT_EVENT_CARDS]
    payload = model.requests[1].payload
    assert payload["allowed_source_message_ids"] == ids and payload["timeline"] == []
    await memory.close()


async def test_prescreen_false_skips_extraction_without_a_model_call(
    db_path: Path, plain: sqlite3.Connection
) -> None:
    model = ScriptedModel.of([{**SUMMARY, "should_extract": False}])
    memory = await open_memory(db_path, model)
    await seal_block(memory)
    await memory.derivation.process_pending()
    assert job_states(plain)[1] == ("event_extraction", "skipped", 1)
    assert len(model.requests) == 1
    assert (await memory.blocks.views())[0].block.processing_status == "ready"
    await memory.close()


async def test_valid_empty_extraction_is_skipped_but_promised_events_must_exist(
    db_path: Path, plain: sqlite3.Connection
) -> None:
    model = ScriptedModel.of(
        [SUMMARY, {"should_extract": True, "events": []}, {"should_extract": False, "events": []}]
    )
    memory = await open_memory(db_path, model)
    await seal_block(memory)
    report = await memory.derivation.process_pending()
    assert report.failed == 1 and "no valid card" in report.errors[0]
    assert (await memory.blocks.views())[0].block.processing_status == "pending"
    assert job_states(plain)[1][:2] == ("event_extraction", "failed")
    plain.execute("UPDATE jobs SET next_retry_at = '2000-01-01T00:00:00+00:00'")
    plain.commit()
    await memory.derivation.process_pending()
    assert job_states(plain)[1] == ("event_extraction", "skipped", 2)
    await memory.close()


async def test_garbage_then_valid_output_retries_with_backoff(
    db_path: Path, plain: sqlite3.Connection
) -> None:
    model = ScriptedModel.of(["not json at all", {"title": ""}, ModelServerError("503")])
    memory = await open_memory(db_path, model)
    await seal_block(memory)
    for attempt in (1, 2, 3):
        report = await memory.derivation.process_pending()
        assert report.failed == 1
        row = plain.execute("SELECT attempts, next_retry_at, updated_at, last_error FROM jobs")
        attempts, retry_at, updated, error = row.fetchone()
        assert attempts == attempt and error
        if attempt < 3:
            from stratagate_plugin.core.clock import parse_iso

            gap = (parse_iso(retry_at) - parse_iso(updated)).total_seconds()
            assert gap == pytest.approx(2 ** (attempt - 1))
            plain.execute("UPDATE jobs SET next_retry_at = '2000-01-01T00:00:00+00:00'")
            plain.commit()
        else:
            assert retry_at is None  # terminal after three attempts
    assert (await memory.derivation.process_pending()).ran == 0
    [job] = await memory.derivation.list_jobs(status="failed")
    await memory.derivation.retry_job(job.id)
    model.push(
        SUMMARY,
        {
            "should_extract": True,
            "events": [card((await memory.blocks.messages(job.target_id))[0].id)],
        },
    )
    report = await memory.derivation.process_pending()
    assert report.succeeded == 2 and len(await memory.events.cards()) == 1
    await memory.close()


async def test_a_job_left_running_is_failed_and_retried_after_restart(
    db_path: Path, plain: sqlite3.Connection
) -> None:
    memory = await open_memory(db_path, ScriptedModel())
    await seal_block(memory)
    await memory.close()
    plain.execute("UPDATE jobs SET status = 'running', attempts = 1")
    plain.commit()
    memory = await open_memory(db_path, ScriptedModel.of([SUMMARY, {"should_extract": False}]))
    status, error = plain.execute("SELECT status, last_error FROM jobs").fetchone()
    assert (status, error) == ("failed", "interrupted before completion")
    report = await memory.derivation.process_pending()
    assert report.succeeded + report.skipped == 2
    assert job_states(plain)[0] == ("block_summary", "succeeded", 2)
    await memory.close()


async def test_model_failure_never_touches_the_sealed_block(
    db_path: Path, plain: sqlite3.Connection
) -> None:
    memory = await open_memory(db_path, ScriptedModel.of([ModelServerError("down")]))
    ids = await seal_block(memory)
    await memory.derivation.process_pending()
    [view] = await memory.blocks.views()
    assert [m.id for m in await memory.blocks.messages(view.block.id)] == ids
    assert view.block.l3_condensed and view.block.processing_status == "pending"
    await memory.close()


async def test_cards_citing_foreign_messages_are_dropped_and_duplicates_merged(
    db_path: Path,
) -> None:
    model = ScriptedModel.of([SUMMARY])
    memory = await open_memory(db_path, model)
    ids = await seal_block(memory)
    model.push(
        {
            "should_extract": True,
            "events": [
                card(ids[0]),
                card(ids[0]) | {"source_message_ids": [ids[2]], "tags": ["b"]},
                card("msg_elsewhere", title="Invented"),
                card(
                    ids[2],  # a message stating it (a bare "noted" states nothing)
                    title="Odd kiln time",
                    temporal={
                        "happened_start": 42,
                        "participants": ["Ana", 3],
                        "precision": "fortnight",
                        "event_type": "发布",
                        "original_text": "next week",
                    },
                ),
            ],
        }
    )
    await memory.derivation.process_pending()
    events = {e.title: e for e in await memory.events.cards()}
    assert set(events) == {"Kiln firing moved", "Odd kiln time"}
    assert events["Kiln firing moved"].source_message_ids == [ids[0], ids[2]]
    odd = events["Odd kiln time"].temporal
    assert odd["event_type"] == "release" and odd["original_text"] == "next week"
    assert "happened_start" not in odd and "participants" not in odd and "precision" not in odd
    assert odd["mentioned_at"].startswith("20") and odd["thread_id"] == "t"
    await memory.close()


async def test_supersede_and_conflict_links_are_kept_within_the_timeline(
    db_path: Path, plain: sqlite3.Connection
) -> None:
    model = ScriptedModel.of([SUMMARY])
    memory = await open_memory(db_path, model)
    first_ids = await seal_block(memory, said=("The sale is on 14 March", "Studio opens at 10"))
    model.push(
        {
            "should_extract": True,
            "events": [
                card(first_ids[0], title="Sale on 14 March"),
                card(first_ids[2], title="Studio opens at 10"),
            ],
        }
    )
    await memory.derivation.process_pending()
    old = {e.title: e.id for e in await memory.events.cards()}
    second_ids = await seal_block(
        memory, start=2, said=("The sale moved to 21 March", "The studio opens at 9 now")
    )
    model.push(
        SUMMARY,
        {
            "should_extract": True,
            "events": [
                card(
                    second_ids[0],
                    title="Sale moved to 21 March",
                    temporal={
                        "supersedes_event_ids": [old["Sale on 14 March"], "evt_not_in_timeline"]
                    },
                ),
                card(
                    second_ids[2],
                    title="Studio opens at 9",
                    temporal={"conflicts_with_event_ids": [old["Studio opens at 10"]]},
                ),
            ],
        },
    )
    await memory.derivation.process_pending()
    timeline = {entry["id"] for entry in model.requests[-1].payload["timeline"]}
    assert set(old.values()) <= timeline
    superseded = await memory.events.get(old["Sale on 14 March"])
    newer = {e.title: e for e in await memory.events.cards()}
    assert superseded.status == "superseded" and superseded.forced_cap == 0.1
    assert superseded.superseded_by == newer["Sale moved to 21 March"].id
    assert newer["Sale moved to 21 March"].temporal["supersedes_event_ids"] == [superseded.id]
    conflicted = await memory.events.get(old["Studio opens at 10"])
    assert conflicted.status == "active"
    assert conflicted.temporal["conflicts_with_event_ids"] == [newer["Studio opens at 9"].id]
    assert len(await memory.events.cards()) == 4  # the superseded event is kept
    await memory.close()
