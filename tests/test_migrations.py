"""Numbered migrations: older files are migrated, newer ones refused, pragmas set."""

import sqlite3
from pathlib import Path

import pytest

from stratagate_plugin.core.errors import SchemaTooNew
from stratagate_plugin.core.memory import StrataGate
from stratagate_plugin.core.store.migrations import MIGRATIONS, SCHEMA_VERSION, migrate
from stratagate_plugin.core.store.search_index import recount_index_stats, register_functions
from stratagate_plugin.core.text.search_terms import TOKENIZER_VERSION, fts_document

pytestmark = pytest.mark.sqlite_only(
    reason="SQLite files at older schemas migrated by SQLite's steps, its pragmas (WAL, "
    "foreign keys) and the default file's path"
)


def build_version_one(path: Path) -> None:
    """A database as the first release left it, holding one recorded message."""
    conn = sqlite3.connect(path, isolation_level=None)
    migrate(conn, target=1)
    conn.execute(
        "INSERT INTO namespaces(namespace, current_turn, block_turn_size, block_decay_lambda, "
        "created_at, updated_at) VALUES ('ns', 1, 3, 0.3, '2025-01-01', '2025-01-01')"
    )
    conn.execute(
        "INSERT INTO threads(namespace, thread_id, turn_count, message_count, "
        "open_user_messages, created_at) VALUES ('ns', 't', 1, 1, 1, '2025-01-01')"
    )
    conn.execute(
        "INSERT INTO messages(id, namespace, thread_id, position, turn, namespace_turn, role, "
        "content, created_at) VALUES ('m1', 'ns', 't', 1, 1, 1, 'user', 'old words', "
        "'2025-01-01T00:00:00+00:00')"
    )
    conn.close()


async def test_older_database_is_migrated_and_keeps_its_data(db_path: Path) -> None:
    build_version_one(db_path)
    async with await StrataGate.open(db_path) as memory:
        tail = await memory.blocks.open_tail("ns", "t")
        await memory.blocks.append_turn("ns", "t", user="new", assistant="x", receipt_id="r")
        conn = sqlite3.connect(db_path)
        indexed_open = conn.execute("SELECT COUNT(*) FROM message_fts").fetchone()[0]
        jobs = conn.execute("SELECT COUNT(*) FROM jobs").fetchone()[0]
        await memory.blocks.seal_tail("ns", "t")
    assert [m.content for m in tail] == ["old words"]
    versions = [row[0] for row in conn.execute("SELECT version FROM schema_migrations")]
    assert versions == list(range(1, SCHEMA_VERSION + 1))
    assert (indexed_open, jobs) == (0, 0)  # the open tail is not indexed and not queued
    assert conn.execute("SELECT COUNT(*) FROM message_fts").fetchone()[0] == 3  # sealed: all
    conn.close()


async def test_newer_schema_is_refused_with_a_clear_error(db_path: Path) -> None:
    async with await StrataGate.open(db_path):
        pass
    conn = sqlite3.connect(db_path)
    conn.execute("INSERT INTO schema_migrations VALUES (?, 'later')", (SCHEMA_VERSION + 1,))
    conn.commit()
    conn.close()
    with pytest.raises(SchemaTooNew, match="newer than this StrataGate"):
        await StrataGate.open(db_path)


async def test_failed_migration_leaves_the_previous_version(
    db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    build_version_one(db_path)

    def broken(raw: sqlite3.Connection) -> None:
        raw.execute("CREATE TABLE half_done (x)")
        raise RuntimeError("disk on fire")

    patched = list(MIGRATIONS)
    patched[1] = broken
    monkeypatch.setattr("stratagate_plugin.core.store.migrations.MIGRATIONS", patched)
    with pytest.raises(RuntimeError):
        await StrataGate.open(db_path)
    conn = sqlite3.connect(db_path)
    assert conn.execute("SELECT MAX(version) FROM schema_migrations").fetchone()[0] == 1
    names = {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}
    assert "half_done" not in names
    conn.close()


async def test_connection_uses_wal_and_foreign_keys(memory: StrataGate) -> None:
    def pragmas(raw: sqlite3.Connection) -> tuple[str, int, int]:
        return (
            raw.execute("PRAGMA journal_mode").fetchone()[0],
            raw.execute("PRAGMA foreign_keys").fetchone()[0],
            raw.execute("PRAGMA busy_timeout").fetchone()[0],
        )

    assert await memory.db.read(pragmas) == ("wal", 1, 10_000)


async def test_default_path_lives_under_stratagate_home(tmp_path: Path) -> None:
    async with await StrataGate.open() as memory:
        assert memory.db.path == tmp_path / "home" / "memory.db"


def indexed_at(path: Path, version: int) -> sqlite3.Connection:
    """A file left at ``version`` by the code of its time, its search index built (every
    open built it)."""
    conn = sqlite3.connect(path, isolation_level=None)
    register_functions(conn)
    migrate(conn, target=version)
    conn.execute("CREATE VIRTUAL TABLE message_fts USING fts5(tokens)")
    conn.execute("CREATE VIRTUAL TABLE event_fts USING fts5(tokens)")
    conn.execute(
        "INSERT INTO meta(key, value) VALUES ('fts_tokenizer_version', ?)",
        (str(TOKENIZER_VERSION),),
    )
    return conn


def build_version_seven(path: Path) -> None:
    """Version 7 indexed every message under its pk on arrival: one sealed, one open here."""
    conn = indexed_at(path, 7)
    stamp = "2025-01-01T00:00:00+00:00"
    conn.execute(
        "INSERT INTO namespaces(namespace, current_turn, block_count, block_turn_size, "
        "block_decay_lambda, created_at, updated_at) VALUES ('ns', 2, 1, 1, 0.3, ?, ?)",
        (stamp, stamp),
    )
    conn.execute(
        "INSERT INTO threads(namespace, thread_id, turn_count, message_count, "
        "open_user_messages, sealed_position, block_count, created_at) "
        "VALUES ('ns', 't', 2, 2, 1, 1, 1, ?)",
        (stamp,),
    )
    conn.execute(
        "INSERT INTO blocks(id, namespace, thread_id, sequence, thread_sequence, start_turn, "
        "end_turn, l4_readable, l3_condensed, created_at, updated_at) "
        "VALUES ('blk_old', 'ns', 't', 1, 1, 1, 1, 'User: glaze kiln', 'User: glaze kiln', ?, ?)",
        (stamp, stamp),
    )
    for pk, block, text in ((1, "blk_old", "glaze kiln"), (2, None, "glaze order")):
        conn.execute(
            "INSERT INTO messages(pk, id, namespace, thread_id, block_id, position, turn, "
            "namespace_turn, role, content, created_at) "
            "VALUES (?, ?, 'ns', 't', ?, ?, ?, ?, 'user', ?, ?)",
            (pk, f"m{pk}", block, pk, pk, pk, text, stamp),
        )
        conn.execute(
            "INSERT INTO message_fts(rowid, tokens) VALUES (?, ?)", (pk, fts_document(text))
        )
    conn.close()


async def test_version_seven_index_is_carried_over_and_the_open_tail_unindexed(
    db_path: Path,
) -> None:
    build_version_seven(db_path)
    async with await StrataGate.open(db_path) as memory:
        conn = sqlite3.connect(db_path)
        indexed = conn.execute("SELECT rowid FROM message_fts").fetchall()
        carried = conn.execute("SELECT fts_rowid FROM messages ORDER BY pk").fetchall()
        await memory.blocks.seal_tail("ns", "t")  # the open message gets a fresh, unused FTS row
        hits = await memory.retrieval.search_raw("ns", "glaze")
    assert indexed == [(1,)] and carried == [(1,), (None,)]
    assert sorted(hit.message.content for hit in hits) == ["glaze kiln", "glaze order"]
    conn.close()


def build_version_six_with_an_event(path: Path) -> None:
    """A file from before stored event documents (migration 7), its search index built."""
    raw = indexed_at(path, 6)
    stamp = "2025-01-01T00:00:00+00:00"
    raw.execute(
        "INSERT INTO namespaces(namespace, current_turn, block_turn_size, block_decay_lambda, "
        "created_at, updated_at) VALUES ('ns', 1, 3, 0.3, ?, ?)",
        (stamp, stamp),
    )
    raw.execute(
        "INSERT INTO events(id, namespace, title, summary, formed_turn, scope, "
        "last_adopted_turn, created_at, updated_at) VALUES ('evt_old', 'ns', "
        "'Pottery kiln', 'The user fires a pottery kiln on Sundays', 1, 'user', 1, ?, ?)",
        (stamp, stamp),
    )
    text = "Pottery kiln The user fires a pottery kiln on Sundays"
    raw.execute("INSERT INTO event_fts(rowid, tokens) VALUES (1, ?)", (fts_document(text),))
    raw.close()


async def test_a_version_six_file_gets_its_event_documents_and_index(db_path: Path) -> None:
    """Migration 7's documents are the tokenizer's (live code): the frozen step marks the
    index stale and the rebuild after migrating stores them."""
    build_version_six_with_an_event(db_path)
    async with await StrataGate.open(db_path) as memory:
        hits = await memory.events.search("ns", "kiln")
    raw = sqlite3.connect(db_path)
    documents = raw.execute("SELECT pk, stamp FROM event_documents").fetchall()
    indexed = raw.execute("SELECT rowid FROM event_fts").fetchall()
    raw.close()
    assert [hit.card.id for hit in hits] == ["evt_old"]
    assert [pk for pk, _ in documents] == [1] and documents[0][1].startswith("2025-01-01")
    assert indexed == [(1,)]


async def test_index_counts_are_backfilled_then_kept_at_seal_time(db_path: Path) -> None:
    build_version_seven(db_path)
    async with await StrataGate.open(db_path) as memory:
        conn = sqlite3.connect(db_path)
        query = "SELECT messages, tokens, blocks FROM message_index_stats WHERE namespace = 'ns'"
        backfilled = conn.execute(query).fetchone()
        await memory.blocks.seal_tail("ns", "t")
        await memory.blocks.append_turn(
            "ns", "u", user="kiln glaze", assistant="ok", receipt_id="r"
        )
        await memory.blocks.seal_tail("ns", "u")
        kept = conn.execute(query).fetchone()
        conn.execute("DELETE FROM message_index_stats")
        recount_index_stats(conn)
        assert conn.execute(query).fetchone() == kept
        conn.close()
    assert backfilled == (1, 2, 1)  # the sealed "glaze kiln"; the open tail is not counted
    assert kept == (4, 7, 3)


async def test_open_messages_stay_out_of_the_block_index(
    memory: StrataGate, plain: sqlite3.Connection
) -> None:
    await memory.blocks.append_turn("ns", "t", user="hello", assistant="hi", receipt_id="r1")
    plan = " ".join(
        str(row[3])
        for row in plain.execute(
            "EXPLAIN QUERY PLAN SELECT id FROM messages WHERE block_id = ? ORDER BY position",
            ("blk",),
        )
    )
    assert "messages_block" in plan  # the partial index still serves block lookups
    definition = plain.execute(
        "SELECT sql FROM sqlite_master WHERE name = 'messages_block'"
    ).fetchone()[0]
    assert definition.endswith("WHERE block_id IS NOT NULL")  # open rows never enter it
    block_id = await memory.blocks.seal_tail("ns", "t")
    rows = plain.execute(
        "SELECT COUNT(*) FROM messages INDEXED BY messages_block WHERE block_id = ?", (block_id,)
    ).fetchone()
    assert rows[0] == 2


async def test_jobs_gain_leases_and_a_job_left_running_without_one_is_taken_back(
    db_path: Path,
) -> None:
    conn = sqlite3.connect(db_path, isolation_level=None)
    migrate(conn, target=11)
    stamp = "2025-01-01T00:00:00+00:00"
    conn.execute(
        "INSERT INTO jobs(id, namespace, kind, target_id, status, attempts, created_at, "
        "updated_at) VALUES ('job_old', 'ns', 'block_summary', 'blk', 'running', 2, ?, ?)",
        (stamp, stamp),
    )
    conn.close()
    async with await StrataGate.open(db_path) as memory:
        [job] = await memory.derivation.list_jobs()
    assert (job.claims, job.owner, job.lease_expires_at) == (2, None, None)
    assert (job.status, job.last_error) == ("failed", "interrupted before completion")


def test_a_migration_applied_by_another_process_meanwhile_is_skipped(
    db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two processes opening a new file at once: the second read version 0, then the first
    migrated everything before the second took the write lock."""
    from stratagate_plugin.core.store import migrations

    first = sqlite3.connect(db_path, isolation_level=None)
    second = sqlite3.connect(db_path, isolation_level=None)
    for conn in (first, second):
        register_functions(conn)
    real = migrations.current_version

    def read_then_lose_the_race(raw: sqlite3.Connection) -> int:
        found = real(raw)
        if raw is second:
            migrate(first)
        return found

    monkeypatch.setattr(migrations, "current_version", read_then_lose_the_race)
    assert migrate(second) == SCHEMA_VERSION
    versions = [v for (v,) in second.execute("SELECT version FROM schema_migrations")]
    assert versions == list(range(1, SCHEMA_VERSION + 1))
    first.close()
    second.close()
