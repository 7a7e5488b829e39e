"""PostgreSQL's unit of work (``core/store/postgres/db.py``) on the private server.

A write commits whole or not at all; a read sees one snapshot while a write commits beside
it; a connection lost mid-unit (its backend terminated, the server restarted) is one
``StorageError`` line, nothing of the unit is kept, and the next unit works. A unit's
round trips are its statements and its ``COMMIT`` (``pooled.py``).
"""

import asyncio
import threading
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pg_cluster
import psycopg
import pytest
from pg_cluster import Cluster
from psycopg import IsolationLevel

from benchmarks.statement_counts import counting
from stratagate_plugin.core.errors import StorageError
from stratagate_plugin.core.store.postgres import PostgresDatabase
from stratagate_plugin.core.store.postgres.db import Row

Conn = psycopg.Connection[Row]
WAIT_S = 10


@pytest.fixture
async def db(pg_url: str) -> AsyncIterator[PostgresDatabase]:
    database = await PostgresDatabase(pg_url).open()
    await database.write(lambda conn: conn.execute("CREATE TABLE notes (id bigint, body text)"))
    yield database
    await database.close()


def add_note(note_id: int) -> Any:
    def unit(conn: Conn) -> None:
        conn.execute("INSERT INTO notes VALUES (%s, %s)", (note_id, f"note {note_id}"))

    return unit


def note_ids(conn: Conn) -> list[int]:
    return [row["id"] for row in conn.execute("SELECT id FROM notes ORDER BY id")]


async def test_pg_write_commits_whole(db: PostgresDatabase) -> None:
    def two_notes(conn: Conn) -> str:
        add_note(1)(conn)
        add_note(2)(conn)
        return "written"

    assert await db.write(two_notes) == "written"
    assert await db.read(note_ids) == [1, 2]


async def test_pg_write_that_raises_keeps_nothing(db: PostgresDatabase) -> None:
    def fails_halfway(conn: Conn) -> None:
        add_note(1)(conn)
        raise ValueError("the rule refused")

    with pytest.raises(ValueError, match="the rule refused"):
        await db.write(fails_halfway)
    assert await db.read(note_ids) == []
    await db.write(add_note(3))  # the connection it used went back clean
    assert await db.read(note_ids) == [3]


async def test_pg_caller_errors_are_raised_as_they_are(db: PostgresDatabase) -> None:
    with pytest.raises(psycopg.errors.UndefinedTable):
        await db.write(lambda conn: conn.execute("INSERT INTO nowhere VALUES (1)"))
    with pytest.raises(psycopg.errors.ReadOnlySqlTransaction):
        await db.read(add_note(1))
    assert await db.read(note_ids) == []


async def test_pg_read_sees_one_snapshot_while_a_write_commits(db: PostgresDatabase) -> None:
    await db.write(add_note(1))
    reading, written = threading.Event(), threading.Event()

    def read_twice(conn: Conn) -> tuple[list[int], list[int]]:
        before = note_ids(conn)
        reading.set()
        assert written.wait(WAIT_S)
        return before, note_ids(conn)

    async def write_beside() -> None:
        assert await asyncio.to_thread(reading.wait, WAIT_S)
        await db.write(add_note(2))
        written.set()

    (before, after), _ = await asyncio.gather(db.read(read_twice), write_beside())
    assert before == after == [1]
    assert await db.read(note_ids) == [1, 2]  # a read that starts after the commit sees it


@pytest.mark.parametrize(
    ("call", "isolation", "read_only"),
    [
        ("write", None, "off"),
        ("write", IsolationLevel.SERIALIZABLE, "off"),
        ("read", None, "on"),
    ],
    ids=["write", "serializable-write", "read"],
)
async def test_pg_unit_runs_at_its_isolation(
    db: PostgresDatabase, call: str, isolation: IsolationLevel | None, read_only: str
) -> None:
    def settings(conn: Conn) -> tuple[str, str]:
        level = conn.execute("SHOW transaction_isolation").fetchone()
        only = conn.execute("SHOW transaction_read_only").fetchone()
        assert level is not None and only is not None
        return level[0], only[0]

    if call == "read":
        found = await db.read(settings)
    else:
        found = await db.write(settings, *([isolation] if isolation else []))
    expected = {None: "read committed", IsolationLevel.SERIALIZABLE: "serializable"}
    assert found == ("repeatable read" if call == "read" else expected[isolation], read_only)


def test_pg_rows_read_by_name_and_by_position(pg_url: str) -> None:
    from stratagate_plugin.core.store.postgres.db import row_factory

    with psycopg.connect(pg_url, row_factory=row_factory) as conn:
        row = conn.execute("SELECT 7 AS id, 'x' AS body").fetchone()
    assert row is not None
    assert (row["id"], row["body"], row[0], tuple(row), row.keys()) == (
        7,
        "x",
        7,
        (7, "x"),
        ["id", "body"],
    )


async def test_pg_units_run_without_jit_and_keep_the_urls_own_options(pg_url: str) -> None:
    """JIT compiling cost a short statement ~14 ms whenever the planner's estimate passed
    ``jit_above_cost``: the engine's connections turn it off, beside the URL's own
    ``options``."""
    joiner = "&" if "?" in pg_url else "?"
    own = f"{pg_url}{joiner}options=-c%20statement_timeout%3D12345"

    def settings(conn: Conn) -> tuple[str, str]:
        jit = conn.execute("SHOW jit").fetchone()
        timeout = conn.execute("SHOW statement_timeout").fetchone()
        assert jit is not None and timeout is not None
        return str(jit[0]), str(timeout[0])

    async with PostgresDatabase(pg_url, connections=1) as plain:
        assert (await plain.read(settings))[0] == "off"
    async with PostgresDatabase(own, connections=1) as with_options:
        assert await with_options.read(settings) == ("off", "12345ms")


async def assert_lost_unit_then_recovered(db: PostgresDatabase, lose: Any) -> None:
    """``lose(backend_pid)`` breaks the unit's connection after it wrote a row."""

    def write_then_lose(conn: Conn) -> None:
        add_note(1)(conn)
        row = conn.execute("SELECT pg_backend_pid()").fetchone()
        assert row is not None
        lose(row[0])
        add_note(2)(conn)

    with pytest.raises(StorageError) as raised:
        await db.write(write_then_lose)
    message = str(raised.value)
    assert "\n" not in message
    assert "connection was lost mid-transaction" in message and "rolled back" in message
    assert message.startswith(f"{db.name}:")
    await db.write(add_note(3))
    assert await db.read(note_ids) == [3]


async def test_pg_unit_sends_begin_with_its_first_statement(pg_url: str) -> None:
    """No check of the connection, no ``BEGIN`` of its own: a unit of two statements is
    three round trips; one that runs none sends nothing; ``executemany`` first still runs
    inside the unit (all or nothing)."""
    async with PostgresDatabase(pg_url, connections=1) as db:
        await db.write(lambda conn: conn.execute("CREATE TABLE notes (id bigint)"))
        with counting() as two:
            await db.read(lambda conn: (note_ids(conn), note_ids(conn)))
        with counting() as none:
            assert await db.read(lambda conn: 7) == 7

        def many_then_fail(conn: Conn) -> None:
            conn.cursor().executemany("INSERT INTO notes VALUES (%s)", [(1,), (2,)])
            raise ValueError("the rule refused")

        with pytest.raises(ValueError):
            await db.write(many_then_fail)
        assert await db.read(note_ids) == []
    assert (two.units, two.trips, none.trips) == (1, 3, 0)


async def test_pg_connection_ended_while_idle_is_replaced_unseen(
    pg_url: str, pg_cluster: Cluster
) -> None:
    """Its socket says so: the pool's check asks the server then, and connects again."""
    async with PostgresDatabase(pg_url, connections=1) as db:
        pid = await db.read(lambda conn: conn.execute("SELECT pg_backend_pid()").fetchone())
        with psycopg.connect(pg_url, autocommit=True) as other:
            other.execute("SELECT pg_terminate_backend(%s, 5000)", (pid[0],))
        assert await db.read(lambda conn: conn.execute("SELECT 1").fetchone()[0]) == 1
        pg_cluster.restart()
        assert await db.read(lambda conn: conn.execute("SELECT 2").fetchone()[0]) == 2


async def test_pg_terminated_backend_mid_unit_is_one_line(
    db: PostgresDatabase, pg_url: str
) -> None:
    def terminate(pid: int) -> None:
        with psycopg.connect(pg_url, autocommit=True) as other:
            other.execute("SELECT pg_terminate_backend(%s)", (pid,))

    await assert_lost_unit_then_recovered(db, terminate)


async def test_pg_server_restart_mid_unit_is_one_line(
    db: PostgresDatabase, pg_cluster: Cluster
) -> None:
    """Every pooled connection dies with the server; each is checked as it is taken."""
    await assert_lost_unit_then_recovered(db, lambda pid: pg_cluster.restart())
    assert await asyncio.gather(*(db.read(note_ids) for _ in range(8))) == [[3]] * 8


async def test_pg_unreachable_server_is_one_line_without_the_password(pg_cluster: Cluster) -> None:
    url = f"postgresql://someone:s3cret@/memory?host={pg_cluster.root}/nowhere"
    with pytest.raises(StorageError) as raised:
        await PostgresDatabase(url).open()
    message = str(raised.value)
    assert message.startswith(
        f"cannot open PostgreSQL database memory on {pg_cluster.root}/nowhere: "
    )
    assert "\n" not in message and "s3cret" not in message


async def test_pg_closed_database_refuses_units(db: PostgresDatabase) -> None:
    await db.close()
    with pytest.raises(Exception, match="database is not open"):
        await db.read(note_ids)


def test_pg_missing_binaries_fail_saying_make_test(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Not a skip: a machine without PostgreSQL must not pass as if it had the feature."""
    monkeypatch.setattr(pg_cluster, "BINARIES", tmp_path)
    with pytest.raises(pytest.fail.Exception, match=r"missing .* run `make test`, which installs"):
        pg_cluster.server_binaries()
