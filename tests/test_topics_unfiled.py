"""The fallback entries' index and the members' ``touched`` flag (migration 19) stay exactly
what a full recount over ``events`` gives, after every kind of write: new events, forget,
restore, a correction superseding an event, a purge, a changed type, a chapter placing or
losing events, a chapter gaining an agent event, an event row deleted — at agent weight 1
and 0, and on a database migrated from version 18 with its data in place."""

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from topic_data import add_events, new_space

from stratagate_plugin.core.config import MemoryConfig
from stratagate_plugin.core.memory import StrataGate
from stratagate_plugin.core.store import migrations, topic_rows, topic_unfiled
from stratagate_plugin.core.store.sqlite.topics import SqliteTopicsTransaction
from stratagate_plugin.core.topics.categories import TYPE_CATEGORY
from stratagate_plugin.core.topics.sync import stale_members

NS = "ns"
_TYPE = "json_extract(e.temporal_json, '$.event_type')"
# The recount the index replaces (the reads before migration 19), kept here as the oracle.
RECOUNT_CATEGORY = (
    "CASE WHEN e.criticality != 'routine' THEN 'preferences' "
    + " ".join(f"WHEN {_TYPE} = '{kind}' THEN '{cat}'" for kind, cat in TYPE_CATEGORY.items())
    + " ELSE 'other' END"
)
RECOUNT = (
    f"SELECT e.id, {RECOUNT_CATEGORY} FROM events e WHERE e.namespace = ? AND e.status IN "
    "('active', 'superseded') AND (? > 0 OR e.pool = 'conversation') AND NOT EXISTS "
    "(SELECT 1 FROM topic_members m JOIN topics t ON t.id = m.topic_id WHERE "
    "m.event_id = e.id AND (? > 0 OR t.has_agent = 0)) ORDER BY e.pk"
)
RETOUCH = (
    "SELECT m.topic_id, m.event_id FROM topic_members m LEFT JOIN events e ON e.id = "
    "m.event_id WHERE m.namespace = ? AND (e.id IS NULL OR e.status NOT IN ('active', "
    "'superseded') OR e.updated_at != m.seen_at OR m.fingerprint IS NULL)"
)


def check(raw: sqlite3.Connection, space: str = NS) -> list[tuple[str, str]]:
    """The index agrees with the recount at both weights; the fallback (id, category) rows
    at weight 1."""
    for weight in (1.0, 0.0):
        expected = [tuple(row) for row in raw.execute(RECOUNT, (space, weight, weight))]
        rows = topic_unfiled.fallback_rows(raw, space, weight, None, -1, 0)
        assert [(row[0], row[2]) for row in rows] == expected
        counts: dict[str, int] = {}
        for _, category in expected:
            counts[category] = counts.get(category, 0) + 1
        assert topic_unfiled.fallback_counts(raw, space, weight) == counts
    touched = {row[1] for row in topic_rows.touched_members(raw, space)}
    assert touched == {row[1] for row in raw.execute(RETOUCH, (space,))}
    return [tuple(row) for row in raw.execute(RECOUNT, (space, 1.0, 1.0))]


async def checked(memory: StrataGate) -> list[tuple[str, str]]:
    await memory.topics.refile_unfiled()  # what the catalog's reads do first
    return await memory.db.read(check)


async def write(memory: StrataGate, sql: str, *params: Any) -> None:
    await memory.db.write(lambda raw: raw.execute(sql, params))


async def test_every_write_keeps_the_fallback_index_and_counts_exact(tmp_path: Path) -> None:
    async with await StrataGate.open(tmp_path / "m.db") as memory:
        await new_space(memory, NS)
        await add_events(memory, NS, 8)
        typed = await add_events(memory, NS, 3, start=20, temporal={"event_type": "decision"})
        await add_events(memory, NS, 2, start=30, criticality="preference")
        await add_events(memory, NS, 2, start=40, pool="agent")
        assert len(await checked(memory)) == 15  # nothing placed yet: all fallback entries
        await memory.topics.process()
        book = await memory.topics.book(NS)
        held = [i for c in book["chapters"] for i in c["eventIds"]]
        assert len(held) == 15 and await checked(memory) == []  # every event placed
        spare = await add_events(memory, NS, 3, start=50)
        spare += await add_events(memory, NS, 1, start=60, temporal={"event_type": "release"})
        assert [i for i, _ in await checked(memory)] == spare
        await memory.gate.forget_event(held[0])
        await memory.gate.forget_event(spare[0])
        assert [i for i, _ in await checked(memory)] == spare[1:]
        await memory.gate.restore_event(spare[0])
        await memory.gate.restore_event(held[0])
        assert [i for i, _ in await checked(memory)] == spare  # the member is held again
        corrected = await memory.curation.correct_event(
            held[1], title="Corrected", summary="new words"
        )
        assert [i for i, _ in await checked(memory)] == [*spare, corrected.card.id]
        await memory.curation.act("purge", typed[0])
        await checked(memory)
        await write(
            memory,
            "UPDATE events SET temporal_json = ? WHERE id = ?",
            '{"event_type": "meeting"}',
            spare[-1],
        )
        assert (spare[-1], "relationships") in await checked(memory)
        await write(memory, "DELETE FROM events WHERE id = ?", spare[1])
        assert spare[1] not in [i for i, _ in await checked(memory)]
        await memory.gate.forget_event(held[2])
        assert await memory.db.read(
            lambda raw: stale_members(SqliteTopicsTransaction(raw), NS)
        )  # seen as stale
        await memory.topics.process()  # its chapter drops it; the new events are placed
        assert await checked(memory) == []
        await memory.gate.restore_event(held[2])
        assert [i for i, _ in await checked(memory)] == [held[2]]  # in no chapter now


async def test_only_a_change_of_what_an_entry_reads_marks_an_event(tmp_path: Path) -> None:
    """The graph writes ``participant_node_ids`` into every projected event's temporal JSON:
    that marks nothing (a catalog read then needs no write first); its event type does."""
    async with await StrataGate.open(tmp_path / "m.db") as memory:
        await new_space(memory, NS)
        [event_id] = await add_events(memory, NS, 1, temporal={"event_type": "decision"})
        await checked(memory)  # no mark left

        async def marked_after(temporal: str) -> bool:
            sql = "UPDATE events SET temporal_json = ? WHERE id = ?"
            await write(memory, sql, temporal, event_id)
            return bool(await memory.db.read(topic_unfiled.spare_marked))

        nodes = '{"event_type": "decision", "participant_node_ids": ["node_1"]}'
        assert not await marked_after(nodes)
        assert await marked_after('{"event_type": "meeting"}')
        assert (event_id, "relationships") in await checked(memory)


async def test_a_chapter_gaining_an_agent_event_turns_its_members_at_weight_zero(
    tmp_path: Path,
) -> None:
    async with await StrataGate.open(tmp_path / "m.db") as memory:
        await new_space(memory, NS)
        passive = await add_events(memory, NS, 2)  # gardening, pottery
        await memory.topics.process()
        await checked(memory)
        [agent] = await add_events(memory, NS, 1, start=7, pool="agent")  # gardening too
        await memory.topics.process()
        rows = await checked(memory)
        assert rows == []  # at weight 1 every event is in a chapter
        zero = await memory.db.read(
            lambda raw: topic_unfiled.fallback_rows(raw, NS, 0.0, None, 9, 0)
        )
        assert [row[0] for row in zero] == [passive[0]]  # its chapter is hidden at weight 0
        config = MemoryConfig(agent_memory_weight=0.0)
    async with await StrataGate.open(tmp_path / "m.db", config=config) as memory:
        page = await memory.topics.catalog(NS)
        counts = {c["id"]: c["count"] for c in page["categories"]}
        assert page["total"] == 2 and counts["other"] == 2  # pottery's chapter, the fallback
        assert agent not in str(page)


@pytest.mark.sqlite_only(reason="a SQLite file at schema 18 migrated by SQLite's step 19")
async def test_migration_19_fills_the_index_from_a_version_18_database(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    async with await StrataGate.open(path) as memory:
        await new_space(memory, NS)
        await add_events(memory, NS, 9)
        await memory.topics.process()
        held = (await memory.topics.book(NS))["chapters"][0]["eventIds"][0]
        await memory.gate.forget_event(held)
        before = await checked(memory)
    raw = sqlite3.connect(path)
    for statement in (
        *[f"DROP TRIGGER {name}" for name in _triggers(raw)],
        "DROP TABLE topic_spare",
        "DROP TABLE topic_spare_counts",
        "DROP TABLE topic_spare_marks",  # migration 26's
        "DROP INDEX topic_members_touched",
        "ALTER TABLE topic_members DROP COLUMN touched",
        "DROP TABLE import_items",  # the later migrations' tables: a version-18 file
        "DROP TABLE import_jobs",
        "DROP TABLE graph_field_sources",
        "DROP TABLE pending_citations",
        "ALTER TABLE messages DROP COLUMN composed_from_memory",
        "ALTER TABLE messages DROP COLUMN adopted_refs_json",
        "ALTER TABLE threads DROP COLUMN title",
        "DROP INDEX blocks_derived_offline",
        "ALTER TABLE graph_nodes DROP COLUMN visible_sources",  # migration 30's
        "ALTER TABLE blocks DROP COLUMN raw_tokens",  # migration 31's
        "DROP TABLE topic_generations",  # migration 32's
        "DROP INDEX jobs_derived_offline",  # migration 33's
        "DROP INDEX jobs_unfinished",  # migration 35's
        "DROP INDEX jobs_pending",  # migration 34's
        "DROP INDEX jobs_pending_spaces",
        "ALTER TABLE jobs DROP COLUMN priority",
        *[
            f"ALTER TABLE {table} DROP COLUMN {column}"
            for table, column in (
                ("blocks", "derived_by"),
                ("blocks", "derive_error"),
                ("events", "derived_by"),
                ("events", "derive_error"),
                ("jobs", "derived_by"),
            )
        ],
        "DELETE FROM schema_migrations WHERE version >= 19",
    ):
        raw.execute(statement)
    raw.commit()
    raw.close()
    async with await StrataGate.open(path) as memory:
        assert await memory.db.read(migrations.current_version) == migrations.SCHEMA_VERSION
        assert await checked(memory) == before
        stale = await memory.db.read(lambda raw: stale_members(SqliteTopicsTransaction(raw), NS))
        assert held in {i for gone in stale.values() for i in gone}  # the forgotten member


def _triggers(raw: sqlite3.Connection) -> list[str]:
    rows = raw.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")
    return [row[0] for row in rows if row[0].startswith(("topic_", "graph_visible_"))]
