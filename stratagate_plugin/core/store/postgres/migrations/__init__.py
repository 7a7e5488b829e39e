"""PostgreSQL schema migrations: the runner and the ordered list of steps.

The same shape as SQLite's (``core/store/migrations/``): numbered steps, each frozen (its
DDL written out, importing nothing live), each applied in its own transaction and
recorded in ``schema_migrations``; a database written by newer code is refused. Step 1
is the whole schema as SQLite's steps 1–26 left it; a later step goes at the end of the
newest steps module and of ``MIGRATIONS``, beside the SQLite step that makes the same
change (``tests/test_pg_schema.py`` fails until both backends have the same columns).

Several app processes may open one database at once: every step, and the first read of
the version, runs under a transaction-scoped advisory lock, and a step another process
applied meanwhile is skipped, so each step runs once.
"""

from collections.abc import Callable
from typing import Any

import psycopg

from ....clock import iso, utc_now
from ....errors import SchemaTooNew
from . import steps_001, steps_002, steps_008

MIGRATIONS: list[Callable[[psycopg.Connection[Any]], None]] = [
    steps_001.m001_schema,
    steps_002.m002_marks_follow_the_event_type,
    steps_002.m003_event_impact_index_tables,
    steps_002.m004_page_indexes,
    steps_002.m005_term_postings_keyed,
    steps_002.m006_message_facts,
    steps_002.m007_event_states,
    steps_008.m008_node_visible_sources,
    steps_008.m009_block_raw_tokens,
    steps_008.m010_topic_generations,
    steps_008.m011_offline_job_index,
    steps_008.m012_job_priority,
    steps_008.m013_unfinished_jobs_index,
]
SCHEMA_VERSION = len(MIGRATIONS)
MIGRATION_LOCK = 0x5354_5241_5441_4741  # "STRATAGA": pg_advisory_xact_lock's key


def migrate(conn: psycopg.Connection[Any], target: int = SCHEMA_VERSION) -> int:
    """Bring the database up to ``target`` on an autocommit connection; refuse a database
    newer than this code."""
    with conn.transaction():
        _lock(conn)
        found = _current_version(conn)
    if found > SCHEMA_VERSION:
        raise SchemaTooNew(
            f"database schema version {found} is newer than this StrataGate "
            f"(supports up to {SCHEMA_VERSION}); upgrade StrataGate to open it"
        )
    for version in range(found + 1, target + 1):
        with conn.transaction():
            _lock(conn)
            if _applied(conn, version):
                continue  # another process applied it since the version was read
            MIGRATIONS[version - 1](conn)
            conn.execute(
                "INSERT INTO schema_migrations(version, applied_at) VALUES (%s, %s)",
                (version, iso(utc_now())),
            )
    return target


def current_version(conn: psycopg.Connection[Any]) -> int:
    """The newest step applied (0 for an empty database)."""
    with conn.transaction():
        _lock(conn)
        return _current_version(conn)


def _lock(conn: psycopg.Connection[Any]) -> None:
    """Wait for any other migrating process; released when the transaction ends."""
    conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))


def _current_version(conn: psycopg.Connection[Any]) -> int:
    conn.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations "
        "(version bigint PRIMARY KEY, applied_at text NOT NULL)"
    )
    row = conn.execute("SELECT MAX(version) FROM schema_migrations").fetchone()
    return int(row[0] or 0) if row is not None else 0


def _applied(conn: psycopg.Connection[Any], version: int) -> bool:
    found = conn.execute("SELECT 1 FROM schema_migrations WHERE version = %s", (version,))
    return found.fetchone() is not None
