"""Units that must run alone, on PostgreSQL: two engines on one database at once.

SQLite's single writer runs every write alone; PostgreSQL's READ COMMITTED writes run side
by side, so a unit that decides on what it read (a topic claim, a sync queueing what no
batch holds, a projection resolving names, a memory merged into the events it re-reads)
holds an advisory lock keyed by the unit and its space (``store/units.alone``). Each test
races two engines over one database and counts the work: none done twice.
"""

import asyncio
import json
import sqlite3
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg
import pytest
from cards import event_card
from test_event_term_index import stored_and_recomputed

from stratagate_plugin.core.config import MemoryConfig
from stratagate_plugin.core.events.cards import EventCard
from stratagate_plugin.core.events.documents import EVENT_RULES
from stratagate_plugin.core.memory import StrataGate
from stratagate_plugin.core.purge.words import Needles
from stratagate_plugin.core.store import event_rows, graph_writes, import_batch_rows
from stratagate_plugin.core.topics.storage import QueuedBatch

SPACES = ("north", "south", "east")
T0 = datetime(2024, 1, 1, tzinfo=UTC)
LEASE = timedelta(minutes=5)
SAID = (
    "My sister Ana lives in Porto.",
    "Ana adopted a dog named Biscuit.",
    "Ana moved to Lisbon.",
    "The kiln fires on Fridays.",
    "Bruno repairs bicycles in Braga.",
    "Bruno's shop opens at nine.",
)


@pytest.fixture
async def engines(pg_url: str) -> AsyncIterator[tuple[StrataGate, StrataGate]]:
    """Two engines (as two app processes would open) on one fresh database."""
    config = MemoryConfig(block_turn_size=2)
    first = await StrataGate.open(pg_url, config)
    second = await StrataGate.open(pg_url, config)
    yield first, second
    await first.close()
    await second.close()


async def _said(engine: StrataGate, *spaces: str) -> None:
    for space in spaces:
        for text in SAID:
            await engine.remember.save(space, "t", text)


async def _repeated(engine: StrataGate, table: str, key: str) -> list[tuple[object, ...]]:
    """The values of ``key`` that more than one row of ``table`` holds."""
    sql = f"SELECT {key} FROM {table} GROUP BY {key} HAVING count(*) > 1"
    return await _rows(engine, sql)


async def _rows(engine: StrataGate, sql: str) -> list[tuple[object, ...]]:
    return await engine.db.read(lambda raw: [tuple(row) for row in raw.execute(sql)])


async def test_two_engines_claiming_at_once_start_one_topic_job_per_space(
    engines: tuple[StrataGate, StrataGate],
) -> None:
    first = engines[0]
    saved = {
        space: [(await first.remember.save(space, "t", text)).event_id for text in SAID[:2]]
        for space in SPACES
    }
    await first.topics.process()  # what the saves queued, done
    for space, event_ids in saved.items():  # then two batches waiting in each space
        for event_id in event_ids:
            batch = QueuedBatch(False, None, [event_id])
            await first.storage.topics.write(lambda tx, b=batch, s=space: tx.queue_batch(s, b, T0))
    claims = [
        engine.storage.topics.claim(T0, f"owner{n}", LEASE, None)
        for n in range(8)
        for engine in engines
    ]
    claimed = [job for job in await asyncio.gather(*claims) if job is not None]
    assert sorted(job.namespace for job in claimed) == sorted(SPACES)  # one each, no more
    running = await _rows(
        first,
        "SELECT namespace, claims FROM jobs WHERE kind = 'topic_projection' AND status = 'running'",
    )
    assert sorted(running) == sorted((space, 1) for space in SPACES)  # each claimed once


async def test_two_engines_filing_topics_at_once_queue_and_place_each_event_once(
    engines: tuple[StrataGate, StrataGate],
) -> None:
    first, second = engines
    await _said(first, *SPACES)
    await asyncio.gather(first.topics.process(), second.topics.process())
    await asyncio.gather(first.topics.process(), second.topics.process())
    assert await _repeated(first, "topic_members", "event_id") == []  # in one chapter each
    left = await _rows(first, "SELECT count(*) FROM topic_queue")
    assert left == [(0,)]
    runs = await _rows(first, "SELECT max(claims) FROM jobs WHERE kind = 'topic_projection'")
    assert runs == [(1,)]  # no batch ran twice
    placed = await _rows(first, "SELECT count(DISTINCT event_id) FROM topic_members")
    spare = await _rows(first, "SELECT count(*) FROM topic_spare")
    events = await _rows(first, "SELECT count(*) FROM events")
    assert placed[0][0] > 0 and spare[0][0] + placed[0][0] >= events[0][0]
    counted = await _rows(first, "SELECT coalesce(sum(n), 0) FROM topic_spare_counts")
    assert counted == spare


async def test_two_engines_projecting_one_space_at_once_make_each_node_once(
    engines: tuple[StrataGate, StrataGate],
) -> None:
    first, second = engines
    await _said(first, "north")
    await asyncio.gather(first.derivation.process_pending(), second.derivation.process_pending())
    assert await _repeated(first, "graph_nodes", "namespace, name_key") == []
    names = await _rows(first, "SELECT name FROM graph_nodes WHERE name_key = 'ana'")
    assert names == [("Ana",)]


async def test_two_engines_remembering_the_same_words_at_once_make_one_event(
    engines: tuple[StrataGate, StrataGate],
) -> None:
    first = engines[0]
    text = "The studio's kiln fires every Friday at noon."
    saves = [engine.remember.save("north", "t", text) for engine in engines for _ in range(3)]
    done = await asyncio.gather(*saves)
    stored = await _rows(first, "SELECT id FROM events WHERE status = 'active'")
    assert len(stored) == 1  # the others reinforced it or were ignored as its duplicate
    assert {d.event_id for d in done} - {None} == {stored[0][0]}


async def test_a_purge_across_spaces_beside_another_engines_topic_work_never_deadlocks(
    engines: tuple[StrataGate, StrataGate],
) -> None:
    """The purge syncs each touched space and re-files between them in one transaction,
    while the other engine syncs and re-files: one queue lock before the re-filing's, in
    every unit, so neither waits for the other in a circle (PostgreSQL would abort one).
    Row versions a snapshot open beside the purge could still see outlive its compaction
    (as a reader keeps SQLite's log from being cut): the next one takes them."""
    first, second = engines
    await _said(first, *SPACES)
    for space in SPACES:
        await first.blocks.append_turn(space, "t", user="Bruno repairs bicycles in Braga.")

    async def topic_work() -> None:  # words of their own, none of them purged
        for round_ in range(3):
            for space in SPACES:
                await second.remember.save(space, "t", f"The kiln fires {round_} times a week.")
            await second.topics.process()

    purged, _ = await asyncio.gather(first.purge.words(Needles(["Braga"])), topic_work())
    assert purged.erased["messages"] == len(SPACES)
    await first.storage.purge.compact()  # old versions a snapshot beside it still saw
    await first.storage.purge.checkpoint()
    assert not any((await first.purge.check(Needles(["Braga"]))).values())


async def test_an_event_write_does_not_wait_for_another_units_event_index_totals(
    engines: tuple[StrataGate, StrataGate],
) -> None:
    """The event index's totals row, which every event write moves, is moved as a write's
    last statement: a unit that wrote an event and is still open holds no lock on it, so
    the other engine's event write commits meanwhile (and neither can deadlock on it)."""
    first, second = engines
    await first.blocks.append_turn("north", "t", user="hello")
    wrote, other_done = threading.Event(), threading.Event()

    def store(raw: sqlite3.Connection, event_id: str) -> None:
        card = event_card(event_id, title="kiln glaze", summary="kiln", namespace="north")
        event_rows.insert_event(raw, card, EVENT_RULES)

    def slow(raw: sqlite3.Connection) -> None:
        store(raw, "slow")
        wrote.set()
        assert other_done.wait(5), "the other engine's event write waited for this unit"

    slow_write = asyncio.create_task(first.db.write(slow))
    assert await asyncio.to_thread(wrote.wait, 5)
    await asyncio.wait_for(second.db.write(lambda raw: store(raw, "quick")), 5)
    other_done.set()
    await slow_write
    stored, recomputed = await stored_and_recomputed(first)
    assert stored == recomputed and stored["totals"][0][0] == 2


async def test_a_restatement_beside_the_graphs_write_back_keeps_both_fields(
    engines: tuple[StrataGate, StrataGate], pg_url: str
) -> None:
    """Both rewrite an event's temporal fields whole: the graph's ``participant_node_ids``
    and a restatement's ``last_mentioned_at``. The restatement starts while the graph's unit
    holds its write uncommitted; once that commits, the event keeps both (read and written
    back without the row locked, the restatement wrote the temporal fields it had read
    before, and the participants were lost: 2 runs in 14 of the scrambled derivation test)."""
    first, second = engines
    await _stored(first, event_card("pixel", title="grey cat Pixel", namespace="north"))

    def restated(raw: sqlite3.Connection) -> None:
        event_rows.add_mention(raw, "pixel", [], 3, "2026-03-03T09:02:00+00:00", "now")

    fields = await _beside_a_held_write_back(first, pg_url, second.db.write(restated))
    assert fields["participant_node_ids"] == ["node-pixel"]
    assert fields["last_mentioned_at"] == "2026-03-03T09:02:00+00:00"


async def test_a_conflicts_resolution_beside_the_graphs_write_back_keeps_both(
    engines: tuple[StrataGate, StrataGate], pg_url: str
) -> None:
    """A resolution reads both cards whole and writes their temporal fields back: it waits
    for the graph's write-back in flight and keeps its participants."""
    first, second = engines
    await _stored(first, event_card("kiln", title="the kiln fires Fridays", namespace="north"))
    links = {"conflicts_with_event_ids": ["kiln"]}
    await _stored(
        first, event_card("pixel", title="kiln Mondays", namespace="north", temporal=links)
    )
    resolving = second.curation.resolve_conflict("pixel", "kiln", "keep_both")
    fields = await _beside_a_held_write_back(first, pg_url, resolving)
    assert fields["participant_node_ids"] == ["node-pixel"]
    assert "conflicts_with_event_ids" not in fields


async def test_an_imports_undo_beside_the_graphs_write_back_keeps_both(
    engines: tuple[StrataGate, StrataGate], pg_url: str
) -> None:
    """An undo takes the removed event's id out of every other event's links, rewriting
    their temporal fields whole: it waits for the graph's write-back in flight."""
    first, second = engines
    await _stored(first, event_card("gone", title="the kiln fires Fridays", namespace="north"))
    links = {"conflicts_with_event_ids": ["gone"]}
    await _stored(
        first, event_card("pixel", title="kiln Mondays", namespace="north", temporal=links)
    )

    def undone(raw: sqlite3.Connection) -> None:
        import_batch_rows.remove_events(raw, ["gone"], "2026-03-03T09:02:00+00:00")

    fields = await _beside_a_held_write_back(first, pg_url, second.db.write(undone))
    assert fields["participant_node_ids"] == ["node-pixel"]
    assert "conflicts_with_event_ids" not in fields


def _tagged(raw: sqlite3.Connection) -> None:
    """A projection's tag on Ana's node: its list read, then written back whole."""
    tags = graph_writes.node_tags(raw, "node-ana")
    graph_writes.set_tags(raw, "node-ana", [*tags, "kiln"], "2026-03-03T09:02:00+00:00")


def _forgotten(raw: sqlite3.Connection) -> None:
    graph_writes.strip_event_provenance(raw, ["gone"])


@pytest.mark.parametrize("held", ["the projection's", "the forget's"])
async def test_a_tag_added_beside_a_forget_of_another_tag_keeps_both_changes(
    engines: tuple[StrataGate, StrataGate], pg_url: str, held: str
) -> None:
    """A projection adds a tag to a node while a forget takes the forgotten event's tag
    off it; whichever writes first, the other waits for its row and reads it again. Read
    without the lock, the forgotten tag came back (or the new one was lost)."""
    first, second = engines
    await _stored(first, event_card("gone", title="pottery class", namespace="north"))

    def ana(raw: sqlite3.Connection) -> None:
        raw.execute(
            "INSERT INTO graph_nodes(id, namespace, name, type, name_key, tags_json, "
            "created_at, updated_at) VALUES ('node-ana', 'north', 'Ana', 'person', 'ana', "
            "'[\"pottery\"]', '2026-03-03T09:00:00+00:00', '2026-03-03T09:00:00+00:00')"
        )
        raw.execute(
            "INSERT INTO graph_field_sources(node_id, field, value_key, event_id) "
            "VALUES ('node-ana', 'tag', 'pottery', 'gone')"
        )

    await first.db.write(ana)
    holding, waiting = (
        (_tagged, _forgotten) if held == "the projection's" else (_forgotten, _tagged)
    )
    await _held_while_another_waits(first, pg_url, holding, second.db.write(waiting))
    [(tags,)] = await _rows(first, "SELECT tags_json FROM graph_nodes WHERE id = 'node-ana'")
    assert json.loads(str(tags)) == ["kiln"]


async def _held_while_another_waits(
    first: StrataGate,
    pg_url: str,
    unit: Callable[[sqlite3.Connection], None],
    other: Awaitable[object],
) -> None:
    """``unit`` written by the first engine and held uncommitted until ``other`` (the
    second engine's write) comes to wait on a lock; then both run to their end."""
    wrote, release = threading.Event(), threading.Event()

    def held(raw: sqlite3.Connection) -> None:
        unit(raw)
        wrote.set()
        assert release.wait(60), "the other write never came to wait for this unit"

    holding = asyncio.create_task(first.db.write(held))
    assert await asyncio.to_thread(wrote.wait, 60)
    racing = asyncio.ensure_future(other)
    await asyncio.to_thread(_until_a_backend_waits_on_a_lock, pg_url)
    release.set()
    await asyncio.gather(holding, racing)


async def _stored(engine: StrataGate, card: EventCard) -> None:
    await engine.blocks.append_turn("north", "t", user="hello")
    await engine.db.write(lambda raw: event_rows.insert_event(raw, card, EVENT_RULES))


async def _beside_a_held_write_back(
    first: StrataGate, pg_url: str, other: Awaitable[object]
) -> dict[str, Any]:
    """Event ``pixel``'s temporal fields after ``other`` (the second engine's write) ran
    while the first engine's graph write-back of a node citing it was written and not yet
    committed, and came to wait on a lock."""

    def projected(raw: sqlite3.Connection) -> None:
        raw.execute(
            "INSERT INTO graph_sources(record_kind, record_id, event_id) VALUES (?, ?, ?)",
            ("node", "node-pixel", "pixel"),
        )
        graph_writes.write_back(raw, ["pixel"])

    await _held_while_another_waits(first, pg_url, projected, other)
    [(temporal,)] = await _rows(first, "SELECT temporal_json FROM events WHERE id = 'pixel'")
    return dict(json.loads(str(temporal)))


def _until_a_backend_waits_on_a_lock(url: str, bound_s: float = 60.0) -> None:
    """Returns once some session of the server waits for a row lock (the restatement
    blocked by the projection's uncommitted write), looked for every 10 ms."""
    deadline = time.monotonic() + bound_s
    with psycopg.connect(url, autocommit=True) as conn:
        while time.monotonic() < deadline:
            query = (
                "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                "AND datname = current_database()"
            )
            if conn.execute(query).fetchone() != (0,):
                return
            time.sleep(0.01)
    raise AssertionError("no session came to wait on the event's row")
