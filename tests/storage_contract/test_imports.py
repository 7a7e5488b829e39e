"""``ImportsStorage``: jobs and items as analysis leaves them, decisions written once,
status moved only from the state seen, a commit written all or nothing unless its view went
stale, an undo done once."""

import json

import pytest

from stratagate_plugin.core.errors import NotFound
from stratagate_plugin.core.importer.source_block import source_block
from stratagate_plugin.core.importer.storage import BatchWrite, NewJob, Recovery, StaleCommit
from stratagate_plugin.core.memory import StrataGate

NS = "contract"
NOW = "2026-01-02T03:04:05+00:00"
LATER = "2026-01-02T03:05:00+00:00"


def _candidates(*titles: str) -> list[dict[str, object]]:
    return [{"title": t, "summary": t} for t in titles]


def _new(text: str, status: str = "processing", *titles: str) -> NewJob:
    return NewJob(
        NS, status, "v2", "unknown", text, {"recovered": False}, _candidates(*titles), NOW
    )


def _decision(action: str = "ADD") -> dict[str, object]:
    return {
        "action": action,
        "reason": "new",
        "confidence": 1.0,
        "requires_confirmation": False,
        "gate": "clear-new",
    }


async def test_jobs_are_read_with_their_items_newest_first(engine: StrataGate) -> None:
    store = engine.storage.imports
    first = await store.insert_job(_new("one", "processing", "Ana", "Bo"))
    second = await store.insert_job(_new("two", "ready"))
    job = await store.job(first)
    assert (job.namespace, job.status, job.total, job.processed) == (NS, "processing", 2, 0)
    assert [item.candidate.title for item in job.items] == ["Ana", "Bo"]
    assert [j.id for j in await store.jobs(NS, 10)] == [second, first]
    assert [j.id for j in await store.jobs(NS, 1)] == [second]
    assert [j.id for j in await store.jobs_with_text(NS, "one", ("processing",))] == [first]
    assert await store.jobs_with_text(NS, "one", ("ready",)) == []
    assert await store.job_ids_in(("processing", "ready")) == [first, second]
    assert await store.job_text(second) == "two"
    with pytest.raises(NotFound):
        await store.job("imp_unknown")
    with pytest.raises(NotFound):
        await store.job_text("imp_unknown")


async def test_a_decision_fills_its_slot_once_and_counts_once(engine: StrataGate) -> None:
    store = engine.storage.imports
    job_id = await store.insert_job(_new("text", "processing", "Ana", "Bo", "Cy"))
    assert await store.pending_indexes(job_id, 10) == [0, 1, 2]
    assert await store.pending_indexes(job_id, 2) == [0, 1]
    assert await store.record_decision(job_id, 1, _decision(), "me", NOW) == 1
    assert await store.record_decision(job_id, 1, _decision("IGNORE"), "me", NOW) is None
    assert await store.pending_indexes(job_id, 10) == [0, 2]
    job = await store.job(job_id)
    assert job.processed == 1 and job.owner == "me" and job.items[1].action == "ADD"
    await store.claim(job_id, "you", LATER)
    assert (await store.job(job_id)).owner == "you"


async def test_analysis_finishes_only_when_every_item_is_decided(engine: StrataGate) -> None:
    store = engine.storage.imports
    job_id = await store.insert_job(_new("text", "processing", "Ana", "Bo"))
    await store.record_decision(job_id, 0, _decision(), "me", NOW)
    assert await store.finish_analysis(job_id, "ready", LATER) is False
    await store.record_decision(job_id, 1, _decision(), "me", NOW)
    assert await store.finish_analysis(job_id, "ready", LATER) is True
    assert (await store.job(job_id)).status == "ready"
    assert await store.finish_analysis(job_id, "awaiting_confirmation", LATER) is False
    await store.claim(job_id, "late", LATER)  # a job past analysis is nobody's
    assert (await store.job(job_id)).owner == "me"


async def test_a_recovery_is_saved_only_while_the_job_is_extracting(engine: StrataGate) -> None:
    store = engine.storage.imports
    job_id = await store.insert_job(_new("garbled", "extracting"))
    found = Recovery(_candidates("Ana"), "processing", None, {"recovered": True}, "notes", NOW)
    assert await store.save_recovery(job_id, found) is True
    job = await store.job(job_id)
    assert (job.status, job.total, job.source_system, job.recovered) == (
        "processing",
        1,
        "notes",
        True,
    )
    again = found._replace(candidates=_candidates("Bo", "Cy"), status="failed")
    assert await store.save_recovery(job_id, again) is False
    assert (await store.job(job_id)).total == 1


async def test_events_by_words_liveness_and_cards(engine: StrataGate) -> None:
    store = engine.storage.imports
    kiln = (await engine.remember.save(NS, "t", "The kiln fires on Fridays.")).event_id
    found = await store.events_sharing_words(NS, "kiln fires Fridays", 10)
    assert [e.id for e in found] == [kiln] and found[0].status == "active"
    assert await store.events_sharing_words(NS, "kiln submarine", 10) == []
    assert await store.live_events([kiln, "evt_unknown", kiln]) == {kiln}
    assert list(await store.event_cards([kiln])) == [kiln]
    with pytest.raises(NotFound):
        await store.event_cards([kiln, "evt_unknown"])


async def test_a_commit_is_written_whole_then_undone_once(engine: StrataGate) -> None:
    store = engine.storage.imports
    text = json.dumps(
        {"schemaVersion": "stratagate.external-memory.v2", "candidates": _candidates("Ana")}
    )
    job = await engine.imports.advance((await engine.imports.preview(NS, text)).id)
    view = await store.commit_view(job.id)
    assert view.job.id == job.id and view.live == set() and view.turn >= 0
    batch = await engine.imports.commit(job.id)
    assert (await store.batch(batch.id)).event_ids == batch.event_ids
    assert [b.id for b in await store.batches(NS)] == [batch.id]
    assert [c.id for c in await store.active_cards(NS, 100)] == batch.event_ids
    removed = await store.remove_batch(batch.id, LATER)
    assert removed is not None and removed.event_ids == batch.event_ids
    assert removed.job_id == job.id and removed.namespace == NS
    assert await store.remove_batch(batch.id, LATER) is None
    assert (await store.batch(batch.id)).status == "undone"
    assert await store.active_cards(NS, 100) == []
    with pytest.raises(NotFound):
        await store.batch("blk_unknown")
    with pytest.raises(NotFound):
        await store.active_cards("no-such-space", 10)


async def test_a_write_from_a_stale_view_writes_nothing(engine: StrataGate) -> None:
    store = engine.storage.imports
    job_id = await store.insert_job(_new("the text", "processing", "Ana"))
    view = await store.commit_view(job_id)
    await store.record_decision(job_id, 0, _decision(), "me", LATER)  # the job moved on
    batch = BatchWrite(
        job_id, NS, source_block("the text"), [], [], {}, {"imported": 0}, (3, 0.3), LATER
    )
    with pytest.raises(StaleCommit):
        await store.write_batch(batch, view)
    assert await store.batches(NS) == []
    fresh = await store.commit_view(job_id)
    other_text = batch._replace(source=source_block("another text"))
    with pytest.raises(StaleCommit):
        await store.write_batch(other_text, fresh)
    written = await store.write_batch(batch, fresh)
    assert written.job_id == job_id and written.status == "committed"
    assert (await store.job(job_id)).status == "committed"
