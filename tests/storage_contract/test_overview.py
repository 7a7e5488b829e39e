"""``OverviewStorage``: a space's tallies, its jobs and receipts by page, retries of
failed jobs, block settings written into every space."""

from datetime import UTC, datetime

from stratagate_plugin.core.memory import StrataGate
from tests.overview_data import adopt, failed_jobs

NS = "contract"


async def _block(engine: StrataGate, thread: str = "t") -> str:
    await engine.blocks.append_turn(NS, thread, user="Ana lives in Porto.", assistant="ok")
    receipt = await engine.blocks.append_turn(NS, thread, user="She paints.", assistant="ok")
    assert receipt.sealed_block_id is not None
    return receipt.sealed_block_id


async def test_tallies_count_by_state_and_an_unknown_space_is_empty(engine: StrataGate) -> None:
    store = engine.storage.overview
    await _block(engine)
    await engine.blocks.append_turn(NS, "u", user="Open tail.", assistant="ok")
    tallies = await store.tallies(NS)
    assert tallies.namespace == NS and tallies.blocks == {"pending": 1}
    assert tallies.jobs == {"block_summary": {"pending": 1}} and tallies.events == {}
    assert (tallies.threads, tallies.messages, tallies.open_turns) == (2, 6, 1)
    assert tallies.adoptions == 0
    empty = await store.tallies("nowhere")
    assert (empty.blocks, empty.jobs, empty.threads, empty.messages) == ({}, {}, 0, 0)


async def test_jobs_page_last_changed_first_by_status(engine: StrataGate) -> None:
    store = engine.storage.overview
    first, second = await _block(engine, "a"), await _block(engine, "b")
    every = await store.jobs(NS, None, 0, 10)
    assert [job.target_id for job in every] == [second, first]
    assert [job.target_id for job in await store.jobs(NS, None, 1, 10)] == [first]
    assert len(await store.jobs(NS, None, 0, 1)) == 1
    assert len(await store.jobs(NS, "pending", 0, 10)) == 2
    assert await store.jobs(NS, "failed", 0, 10) == []
    assert await store.jobs("nowhere", None, 0, 10) == []


async def test_failed_jobs_are_retried_once_each(engine: StrataGate) -> None:
    store = engine.storage.overview
    await _block(engine)
    [failed] = await failed_jobs(engine)
    now = datetime.now(UTC)
    assert await store.retry_failed("nowhere", now) == 0
    assert await store.retry_failed(NS, now) == 1
    [again] = await store.jobs(NS, None, 0, 10)
    assert again.id == failed.id and again.status != "failed" and again.attempts == 0
    assert await store.retry_failed(NS, now) == 0


async def test_receipts_page_newest_first_and_one_is_read_as_stored(engine: StrataGate) -> None:
    store = engine.storage.overview
    event_id = (await engine.remember.save(NS, "t", "The kiln fires on Fridays.")).event_id
    await adopt(engine, NS, [event_id], "use-1")
    await adopt(engine, NS, [], "use-2")
    newest, oldest = await store.receipts(NS, 0, 10)
    assert (newest.receipt_id, oldest.receipt_id) == ("use-2", "use-1")
    assert oldest.event_ids == [event_id] and oldest.tool == "memory_search_events"
    assert oldest.thread_id == "audit-use-1" and isinstance(oldest.audit, dict)
    assert [r.receipt_id for r in await store.receipts(NS, 1, 1)] == ["use-1"]
    assert (await store.tallies(NS)).adoptions == 1
    stored = await store.receipt(NS, "use-1")
    assert stored is not None and stored["event_ids"] == [event_id]
    assert stored["batch"]["id"] == oldest.batch_id
    assert await store.receipt(NS, "use-9") is None
    assert await store.receipt("nowhere", "use-1") is None


async def test_settings_are_written_into_every_space(engine: StrataGate) -> None:
    store = engine.storage.overview
    await engine.blocks.append_turn("one", "t", user="Hello.", assistant="ok")
    await engine.blocks.append_turn("two", "t", user="Hello.", assistant="ok")
    names = await engine.storage.spaces.names()
    assert await store.set_every_space(3, 0.4) == 2
    assert await engine.storage.spaces.names() == names
    for space in ("one", "two"):
        rows = await engine.storage.blocks.rail(space, "t", lambda total: (1, total))
        assert (rows.tail.capacity, rows.decay_lambda) == (3, 0.4)
