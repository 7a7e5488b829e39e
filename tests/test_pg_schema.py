"""PostgreSQL's schema against SQLite's, on the private server (tests/pg_cluster.py).

A fresh SQLite file opened by the engine and a fresh PostgreSQL database migrated by
``core/store/postgres/`` must hold the same tables with the same columns, nullability,
types and keys, the same named indexes and triggers: a later SQLite migration that adds a
column fails here until PostgreSQL's steps add it too. FTS5's tables are the exception,
listed with their replacement.
"""

import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg
import pytest

from stratagate_plugin.core.clock import utc_now
from stratagate_plugin.core.errors import SchemaTooNew
from stratagate_plugin.core.records import GRAPH_JOB, TOPIC_JOB
from stratagate_plugin.core.store import db as sqlite_db
from stratagate_plugin.core.store import graph_jobs, jobs, topic_jobs
from stratagate_plugin.core.store.derivation_marks import fallback_jobs, offline_blocks
from stratagate_plugin.core.store.postgres import PostgresDatabase
from stratagate_plugin.core.store.postgres import migrations as pg_migrations
from stratagate_plugin.core.text.search_terms import fts_document, fts_encode, tokenize

# FTS5 virtual table → (its PostgreSQL table, the column holding FTS5's rowid).
FTS5_REPLACED = {
    "message_fts": ("message_search", "fts_rowid"),
    "event_fts": ("event_search", "event_pk"),
}
FTS5_SHADOWS = ("data", "idx", "content", "docsize", "config")
# The event index's postings in SQLite's layout (``event_chunks``): PostgreSQL keeps a row a
# posting (``event_term_index``'s docstring says why).
LAYOUT_REPLACED = {"event_postings": "event_terms", "event_term_rows": "event_terms"}
# Tables whose hidden SQLite rowid live code reads: PostgreSQL spells it out.
ROWID_KEPT = {"batches", "usage_receipts", "graph_aliases", "graph_batch_events"}
PG_TYPES = {"INTEGER": "bigint", "TEXT": "text", "REAL": "double precision", "BLOB": "bytea"}
Column = tuple[str, bool, str, int]  # name, NOT NULL, type, position in the primary key


async def sqlite_schema(path: Path) -> sqlite3.Connection:
    """A fresh file opened (and so migrated) by the engine, as a plain connection."""
    await (await sqlite_db.Database(path, backups=False, readers=0).open()).close()
    return sqlite3.connect(path)


async def pg_schema(url: str) -> psycopg.Connection[Any]:
    await (await PostgresDatabase(url, connections=1).open()).close()
    return psycopg.connect(url, autocommit=True)


def sqlite_tables(raw: sqlite3.Connection) -> dict[str, str]:
    rows = raw.execute(
        "SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
    )
    return dict(rows.fetchall())


def sqlite_columns(raw: sqlite3.Connection, table: str) -> set[Column]:
    return {
        (name, bool(notnull) or pk > 0, kind.upper(), pk)
        for _, name, kind, notnull, _, pk in raw.execute(f"PRAGMA table_info('{table}')")
    }


def pg_columns(conn: psycopg.Connection[Any], table: str) -> set[Column]:
    keys = dict(
        conn.execute(
            "SELECT a.attname, k.n FROM pg_constraint c, "
            "unnest(c.conkey) WITH ORDINALITY k(attnum, n) "
            "JOIN pg_attribute a ON a.attnum = k.attnum WHERE c.contype = 'p' "
            "AND c.conrelid = to_regclass(%s) AND a.attrelid = c.conrelid",
            (table,),
        ).fetchall()
    )
    rows = conn.execute(
        "SELECT column_name, is_nullable = 'NO', data_type FROM information_schema.columns "
        "WHERE table_schema = 'public' AND table_name = %s",
        (table,),
    )
    return {(name, notnull, kind, keys.get(name, 0)) for name, notnull, kind in rows}


def expected_pg_columns(columns: set[Column], table: str) -> set[Column]:
    mapped = {(name, notnull, PG_TYPES[kind], pk) for name, notnull, kind, pk in columns}
    return mapped | ({("rowid", True, "bigint", 0)} if table in ROWID_KEPT else set())


def schema_differences(raw: sqlite3.Connection, conn: psycopg.Connection[Any]) -> list[str]:
    """Every way PostgreSQL's tables differ from SQLite's, one line each."""
    tables = sqlite_tables(raw)
    virtual = {name for name, sql in tables.items() if sql.startswith("CREATE VIRTUAL TABLE")}
    problems = [
        f"FTS5 table {name} has no replacement listed" for name in virtual - set(FTS5_REPLACED)
    ]
    shadows = {f"{name}_{suffix}" for name in virtual for suffix in FTS5_SHADOWS}
    for table, replacement in LAYOUT_REPLACED.items():
        if table not in tables:
            problems.append(f"{table}: SQLite no longer keeps it")
        if conn.execute("SELECT to_regclass(%s)", (replacement,)).fetchone() == (None,):
            problems.append(f"{replacement}: no such table in PostgreSQL")
    for table in sorted(set(tables) - virtual - shadows - set(LAYOUT_REPLACED)):
        if conn.execute("SELECT to_regclass(%s)", (table,)).fetchone() == (None,):
            problems.append(f"{table}: no such table in PostgreSQL")
            continue
        wanted = expected_pg_columns(sqlite_columns(raw, table), table)
        found = pg_columns(conn, table)
        problems += [f"{table}: PostgreSQL lacks {column}" for column in sorted(wanted - found)]
        problems += [f"{table}: SQLite lacks {column}" for column in sorted(found - wanted)]
    return problems


def sqlite_names(raw: sqlite3.Connection, kind: str) -> set[str]:
    rows = raw.execute("SELECT name FROM sqlite_master WHERE type = ? AND sql IS NOT NULL", (kind,))
    return {name for (name,) in rows}


def pg_index_names(conn: psycopg.Connection[Any]) -> set[str]:
    """Indexes made by CREATE INDEX (not those behind a key constraint)."""
    rows = conn.execute(
        "SELECT i.indexrelid::regclass::text FROM pg_index i JOIN pg_class t ON t.oid = i.indrelid "
        "JOIN pg_namespace n ON n.oid = t.relnamespace WHERE n.nspname = 'public' "
        "AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.indexrelid)"
    )
    return {name for (name,) in rows}


async def test_pg_schema_has_every_sqlite_table_with_its_columns(
    tmp_path: Path, pg_url: str
) -> None:
    raw, conn = await sqlite_schema(tmp_path / "memory.db"), await pg_schema(pg_url)
    with conn:
        assert schema_differences(raw, conn) == []
        for table, (replacement, key) in FTS5_REPLACED.items():
            assert pg_columns(conn, replacement) == {
                (key, True, "bigint", 1),
                ("tokens", True, "text", 0),
                ("terms", False, "tsvector", 0),
            }, table
    raw.close()


async def test_pg_schema_has_every_sqlite_index_and_trigger(tmp_path: Path, pg_url: str) -> None:
    raw, conn = await sqlite_schema(tmp_path / "memory.db"), await pg_schema(pg_url)
    with conn:
        searches = {f"{table}_terms" for table, _ in FTS5_REPLACED.values()}
        assert pg_index_names(conn) == sqlite_names(raw, "index") | searches
        triggers = conn.execute("SELECT tgname FROM pg_trigger WHERE NOT tgisinternal")
        assert {name for (name,) in triggers} == sqlite_names(raw, "trigger")
    raw.close()


async def test_pg_schema_check_sees_a_column_only_sqlite_has(tmp_path: Path, pg_url: str) -> None:
    """What a later SQLite step adding a column without its PostgreSQL step looks like."""
    raw, conn = await sqlite_schema(tmp_path / "memory.db"), await pg_schema(pg_url)
    raw.execute("ALTER TABLE events ADD COLUMN mood TEXT")
    raw.execute("CREATE TABLE moods (id INTEGER PRIMARY KEY, name TEXT NOT NULL)")
    with conn:
        assert schema_differences(raw, conn) == [
            "events: PostgreSQL lacks ('mood', False, 'text', 0)",
            "moods: no such table in PostgreSQL",
        ]
    raw.close()


# -- the runner ---------------------------------------------------------------------------------


def counted_steps(monkeypatch: pytest.MonkeyPatch, pause_s: float = 0.0) -> list[int]:
    """Replace each step with one that records its run (and lingers ``pause_s``)."""
    runs: list[int] = []

    def counted(number: int, step: Callable[[psycopg.Connection[Any]], None]) -> Any:
        def run(conn: psycopg.Connection[Any]) -> None:
            runs.append(number)
            time.sleep(pause_s)
            step(conn)

        return run

    steps = [counted(n, step) for n, step in enumerate(pg_migrations.MIGRATIONS, start=1)]
    monkeypatch.setattr(pg_migrations, "MIGRATIONS", steps)
    return runs


def test_pg_migrate_twice_is_a_no_op(pg_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    runs = counted_steps(monkeypatch)
    with psycopg.connect(pg_url, autocommit=True) as conn:
        assert pg_migrations.migrate(conn) == pg_migrations.SCHEMA_VERSION
        assert pg_migrations.migrate(conn) == pg_migrations.SCHEMA_VERSION
        assert pg_migrations.current_version(conn) == pg_migrations.SCHEMA_VERSION
        recorded = conn.execute("SELECT version FROM schema_migrations ORDER BY version")
        assert [v for (v,) in recorded] == list(range(1, pg_migrations.SCHEMA_VERSION + 1))
    assert runs == list(range(1, pg_migrations.SCHEMA_VERSION + 1))


def test_pg_concurrent_migrations_run_each_step_once(
    pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two processes opening one new database: the second waits on the advisory lock,
    then finds every step applied."""
    runs = counted_steps(monkeypatch, pause_s=0.3)
    start, results, errors = threading.Barrier(2), [], []

    def migrate_once() -> None:
        try:
            with psycopg.connect(pg_url, autocommit=True) as conn:
                start.wait()
                results.append(pg_migrations.migrate(conn))
        except Exception as error:  # reported below, with the other thread's result
            errors.append(error)

    threads = [threading.Thread(target=migrate_once) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert results == [pg_migrations.SCHEMA_VERSION] * 2
    assert runs == list(range(1, pg_migrations.SCHEMA_VERSION + 1))


def test_pg_migrate_refuses_a_newer_database(pg_url: str) -> None:
    with psycopg.connect(pg_url, autocommit=True) as conn:
        pg_migrations.migrate(conn)
        conn.execute("INSERT INTO schema_migrations VALUES (999, '2030-01-01T00:00:00Z')")
        with pytest.raises(SchemaTooNew, match="version 999 is newer"):
            pg_migrations.migrate(conn)


# -- what the schema itself does ---------------------------------------------------------------


def test_pg_search_terms_hold_the_engines_tokens_whole(pg_url: str) -> None:
    """The generated ``tsvector`` keeps each encoded token as one lexeme, so a query of
    the engine's tokens finds the row through the GIN index (Chinese as English)."""
    text = "Caroline went to the LGBTQ support group; 她去了支持小组"
    with psycopg.connect(pg_url, autocommit=True) as conn:
        pg_migrations.migrate(conn)
        conn.execute(
            "INSERT INTO message_search(fts_rowid, tokens) VALUES (1, %s)", (fts_document(text),)
        )
        (lexemes,) = conn.execute(
            "SELECT tsvector_to_array(terms) FROM message_search"
        ).fetchone() or [[]]
        assert sorted(lexemes) == sorted({fts_encode(token) for token in tokenize(text)})
        conn.execute("SET enable_seqscan = off")
        found = conn.execute(
            "SELECT fts_rowid FROM message_search WHERE terms @@ to_tsquery('simple', %s)",
            (" & ".join(fts_encode(token) for token in tokenize("support 小组")),),
        )
        assert found.fetchall() == [(1,)]


# Statements run on both backends: after each, the triggers must have left the same
# derived rows.
TRIGGER_SCRIPT = [
    "INSERT INTO namespaces VALUES ('s', 0, 0, 3, 0.1, 't', 't')",
    "INSERT INTO events(id, namespace, title, summary, formed_turn, scope, last_adopted_turn, "
    "created_at, updated_at) VALUES ('e1', 's', 'a', 'b', 1, 'user', 1, 't', 't'), "
    "('e2', 's', 'c', 'd', 1, 'user', 1, 't', 't'), ('e3', 's', 'e', 'f', 1, 'user', 1, 't', 't')",
    "DELETE FROM topic_spare_marks",
    "INSERT INTO topics(id, namespace, title, status, projector_version, created_at, updated_at) "
    "VALUES ('c1', 's', 'chapter', 'ready', 1, 't', 't')",
    "INSERT INTO topic_members VALUES ('c1', 'e1', 's', 0, 'f', 't', 'cat', 'conversation', 0), "
    "('c1', 'e2', 's', 1, 'f', 't', 'cat', 'conversation', 0)",
    "UPDATE events SET updated_at = 't2' WHERE id = 'e1'",
    "DELETE FROM topic_spare_marks",
    # only a change of the temporal JSON's event_type marks (steps 27 / 2)
    """UPDATE events SET temporal_json = '{"participant_node_ids": ["n1"]}' WHERE id = 'e1'""",
    """UPDATE events SET temporal_json = '{"event_type": "plan"}' WHERE id = 'e2'""",
    "DELETE FROM topic_spare_marks",
    """UPDATE events SET temporal_json = '{"x": 2}' WHERE id = 'e2'""",
    "DELETE FROM topic_spare_marks",
    """UPDATE events SET temporal_json = '{"event_type": "plan", "x": 1}' WHERE id = 'e1'""",
    "INSERT INTO topic_spare VALUES (3, 's', 'cat', 'conversation', 0), "
    "(4, 's', 'cat', 'conversation', 0)",
    "DELETE FROM topic_spare WHERE event_pk = 3",
    "DELETE FROM topic_spare_marks",
    "UPDATE topics SET has_agent = 1 WHERE id = 'c1'",
    "UPDATE events SET status = 'forgotten' WHERE id = 'e3'",
    "DELETE FROM events WHERE id = 'e2'",
    "DELETE FROM topic_spare_marks",
    "UPDATE topic_members SET event_id = 'e3' WHERE event_id = 'e1'",
    "DELETE FROM topic_spare_marks",
    "DELETE FROM topics WHERE id = 'c1'",
    "DELETE FROM topic_members WHERE event_id = 'e3'",
]
DERIVED = [
    "SELECT event_pk FROM topic_spare_marks ORDER BY event_pk",
    "SELECT namespace, category, pool, agent_chapter, n FROM topic_spare_counts",
    "SELECT event_id, touched FROM topic_members ORDER BY event_id",
    "SELECT pk, namespace, pool, id, status, superseded_by, updated_at FROM event_states "
    "ORDER BY pk",
]


async def test_pg_triggers_keep_the_same_derived_rows_as_sqlite(
    tmp_path: Path, pg_url: str
) -> None:
    raw, conn = await sqlite_schema(tmp_path / "memory.db"), await pg_schema(pg_url)
    raw.isolation_level = None
    with conn:
        for statement in TRIGGER_SCRIPT:
            raw.execute(statement)
            conn.execute(statement)
            for query in DERIVED:
                found = [tuple(row) for row in conn.execute(query)]
                assert found == raw.execute(query).fetchall(), (statement, query)
    raw.close()


# -- partial indexes under a prepared statement's generic plan ---------------------------------


class StatementRecorder:
    """Stands in for a connection: keeps each statement a row function runs, finds nothing."""

    def __init__(self) -> None:
        self.said: list[str] = []

    def execute(self, sql: str, params: Any = ()) -> "StatementRecorder":
        self.said.append(sql)
        return self

    def fetchall(self) -> list[Any]:
        return []

    def fetchone(self) -> None:
        return None


async def test_pg_offline_reads_use_their_partial_indexes_in_a_generic_plan(pg_url: str) -> None:
    """psycopg prepares a statement run often, and PostgreSQL then may plan it once for any
    parameter: the partial indexes' condition must be in the text, not a parameter."""
    conn = await pg_schema(pg_url)
    with conn:
        conn.execute("SET enable_seqscan = off")
        conn.execute("SET plan_cache_mode = force_generic_plan")
        for read, index in [
            (offline_blocks, "blocks_derived_offline"),
            (fallback_jobs, "jobs_derived_offline"),
        ]:
            recorder = StatementRecorder()
            read(recorder, "home")  # type: ignore[arg-type]
            [sql] = recorder.said
            conn.execute(f"PREPARE offline_read AS {sql.replace('?', '$1')}")
            plan = "\n".join(row[0] for row in conn.execute("EXPLAIN EXECUTE offline_read('home')"))
            conn.execute("DEALLOCATE offline_read")
            assert index in plan, plan


async def test_pg_a_claim_reads_the_first_pending_job_in_order(pg_url: str) -> None:
    """A claim's read of a kind's first pending job walks ``jobs_pending`` in claim order,
    whatever the kind (a generic plan), and sorts nothing: it never orders the queue."""
    recorder = StatementRecorder()
    jobs.first_due(recorder, utc_now(), (GRAPH_JOB,), graph_jobs.CLAIM_ORDER)  # type: ignore[arg-type]
    [sql] = [said for said in recorder.said if "status = 'pending'" in said]
    plan = await generic_plan(pg_url, sql, f"'{GRAPH_JOB}'")
    assert "jobs_pending" in plan and "Sort" not in plan, plan


async def test_pg_the_topics_page_reads_its_unfinished_jobs_by_their_index(pg_url: str) -> None:
    """The topics page's first unfinished jobs walk ``jobs_unfinished`` in age order (a
    generic plan: the status list is in the text), sorting nothing."""
    recorder = StatementRecorder()
    topic_jobs.topic_jobs(recorder, "home", 20)  # type: ignore[arg-type]
    [sql] = recorder.said
    plan = await generic_plan(pg_url, sql, f"'{TOPIC_JOB}', 'home', 20")
    assert "jobs_unfinished" in plan and "Sort" not in plan, plan


async def generic_plan(pg_url: str, sql: str, arguments: str) -> str:
    """PostgreSQL's plan of ``sql`` (``?`` placeholders) prepared once for any parameters,
    executed with ``arguments`` (SQL literals), sequential scans off."""
    for number in range(1, sql.count("?") + 1):
        sql = sql.replace("?", f"${number}", 1)
    conn = await pg_schema(pg_url)
    with conn:
        conn.execute("SET enable_seqscan = off")
        conn.execute("SET plan_cache_mode = force_generic_plan")
        conn.execute(f"PREPARE asked AS {sql}")
        rows = conn.execute(f"EXPLAIN EXECUTE asked({arguments})")
        return "\n".join(row[0] for row in rows)
