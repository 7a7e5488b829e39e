"""An import commit killed on PostgreSQL leaves all of the batch or none of it, as
``test_import_crash.py`` proves on SQLite.

A child process commits a 200-item import on the private server. The kill is not timed: a
trigger the test adds makes the commit's transaction wait, at a chosen row, for an
advisory lock the test holds; once the server shows the child's backend waiting on the
test's lock (``pg_blocking_pids``), the transaction is certainly open with the rows
before that point written, and the child is SIGKILLed (or its backend terminated). The
lock is then released, the server ends the orphaned transaction, and the database holds
the whole batch or nothing; the engine opens, commits the import once, and undoes it.
"""

import asyncio
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
import pytest
from import_kills import (
    CANDIDATES,
    NOTHING,
    WHOLE,
    assert_all_or_nothing,
    kill,
    prepare,
    start_committer,
)
from imports import counts
from server_sqlite3 import PlainConnection

from stratagate_plugin.core.errors import InvalidInput
from stratagate_plugin.core.memory import StrataGate
from stratagate_plugin.core.records import GRAPH_JOB
from stratagate_plugin.core.store.postgres.db import database_label
from stratagate_plugin.core.store.postgres.health import check_server

CHILD = "sg-import-committer"  # the child's connections' application_name
LOCK = 30  # the advisory lock the paused commit waits for
WAIT_S = 60.0  # for the server to show the wait (seconds on a loaded machine, not minutes)
# Where the commit's transaction waits: (table, trigger timing, the row it waits at).
PAUSES = {
    "first-event": ("events", "AFTER INSERT", "NEW.title = 'Distinct fact 0'"),
    "middle-event": ("events", "AFTER INSERT", f"NEW.title = 'Distinct fact {CANDIDATES // 2}'"),
    # everything written but the job's own row: the last statement of the transaction
    "job-committed": ("import_jobs", "BEFORE UPDATE", "NEW.status = 'committed'"),
}
_PAUSE_FUNCTION = (
    "CREATE FUNCTION sg_test_pause() RETURNS trigger LANGUAGE plpgsql AS "
    f"$$ BEGIN PERFORM pg_advisory_xact_lock({LOCK}); RETURN NEW; END $$"
)
_CHILDS = "FROM pg_stat_activity WHERE datname = current_database() AND application_name = %s"
_WAITING = f"SELECT pid {_CHILDS} AND pg_backend_pid() = ANY(pg_blocking_pids(pid))"


class Pause:
    """The test's side of a paused commit: the lock it holds, and the child's backend."""

    def __init__(self, conn: psycopg.Connection[Any]) -> None:
        self.conn = conn  # autocommit: each poll of pg_stat_activity sees it afresh

    def waiting_backend(self, child: "subprocess.Popen[str]") -> int:
        """The pid of the child's backend once it waits for this test's lock, inside the
        commit's transaction (a child that died first fails the test)."""
        deadline = time.monotonic() + WAIT_S
        while time.monotonic() < deadline:
            assert child.poll() is None, "the committer ended before its commit paused"
            row = self.conn.execute(_WAITING, (CHILD,)).fetchone()
            if row is not None:
                return int(row[0])
            time.sleep(0.01)
        raise AssertionError(f"the commit did not reach its pause within {WAIT_S:g} s")

    def release(self) -> None:
        """Let the paused backend go on; then wait until every backend of the child has
        ended (a killed child's transaction rolled back by the server)."""
        self.conn.execute("SELECT pg_advisory_unlock(%s)", (LOCK,))
        deadline = time.monotonic() + WAIT_S
        while self._child_backends() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert self._child_backends() == 0, "the killed child's backends did not end"

    def _child_backends(self) -> int:
        row = self.conn.execute(f"SELECT count(*) {_CHILDS}", (CHILD,)).fetchone()
        return int(row[0]) if row is not None else 0


@contextmanager
def paused_at(url: str, where: str) -> Iterator[Pause]:
    """A trigger making a commit wait at ``where`` (``PAUSES``) for a lock held here; the
    trigger dropped after (by then the child's backends have ended)."""
    table, timing, row = PAUSES[where]
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(_PAUSE_FUNCTION)
        conn.execute(
            f"CREATE TRIGGER sg_test_pause {timing} ON {table} FOR EACH ROW WHEN ({row}) "
            "EXECUTE FUNCTION sg_test_pause()"
        )
        conn.execute("SELECT pg_advisory_lock(%s)", (LOCK,))
        try:
            yield Pause(conn)
        finally:
            conn.execute("SELECT pg_advisory_unlock_all()")
            conn.execute(f"DROP TRIGGER sg_test_pause ON {table}")
            conn.execute("DROP FUNCTION sg_test_pause()")


Committer = Callable[..., "subprocess.Popen[str]"]


@pytest.fixture
def job_id(pg_url: str) -> str:
    return asyncio.run(prepare(pg_url))


@pytest.fixture
def committer(pg_url: str, job_id: str) -> Iterator[Committer]:
    """Starts a child committing ``job_id`` (with flags); any still running after the test,
    one a failed assertion left paused, is killed."""
    started: list[subprocess.Popen[str]] = []

    def start(*flags: str) -> "subprocess.Popen[str]":
        started.append(start_committer(f"{pg_url}&application_name={CHILD}", job_id, *flags))
        return started[-1]

    yield start
    for child in started:
        if child.poll() is None:
            kill(child)


def assert_left_whole_or_nothing(url: str, job_id: str, said_committed: bool) -> str:
    """``assert_all_or_nothing`` on the server, and the server's own check; the status."""
    assert check_server(url).problems == []
    conn = PlainConnection(url)
    try:
        return assert_all_or_nothing(conn, job_id, said_committed)  # type: ignore[arg-type]
    finally:
        conn.close()


def stored(url: str) -> dict[str, int]:
    """``counts`` with only the graph's jobs (an engine opening on events it has not
    grouped into topics queues topic jobs of its own) and the distinct event titles."""
    conn = PlainConnection(url)
    try:
        found = counts(conn)  # type: ignore[arg-type]
        found["jobs"] = _one(conn, "SELECT COUNT(*) FROM jobs WHERE kind = ?", GRAPH_JOB)
        found["titles"] = _one(conn, "SELECT COUNT(DISTINCT title) FROM events")
        return found
    finally:
        conn.close()


def _one(conn: PlainConnection, sql: str, *params: Any) -> int:
    return int(conn.execute(sql, params).fetchone()[0])


async def commit_once_and_undo(url: str, job_id: str, status: str) -> None:
    """A new engine commits the import (a committed one is refused), exactly once, and
    undoes it whole."""
    async with await StrataGate.open(url) as memory:
        if status == "committed":
            with pytest.raises(InvalidInput, match="already committed"):
                await memory.imports.commit(job_id)
            batch_id = (await memory.imports.job(job_id)).batch_id
        else:
            batch_id = (await memory.imports.commit(job_id)).id
        assert batch_id is not None
        assert stored(url) == {**WHOLE, "titles": CANDIDATES}  # nothing twice
        undone = await memory.imports.undo(batch_id)
        assert len(undone.removed_event_ids) == CANDIDATES
        assert (await memory.imports.job(job_id)).status == "undone"
    assert stored(url) == {**NOTHING, "titles": 0}
    assert check_server(url).problems == []


@pytest.mark.parametrize("where", [*PAUSES, "after-commit"])
def test_pg_sigkill_during_an_import_commit_leaves_all_or_nothing(
    pg_url: str, job_id: str, committer: Committer, where: str
) -> None:
    if where == "after-commit":  # the child said it committed: all of it is there
        child = committer()
        assert child.stdout is not None and child.stdout.readline().startswith("committed")
        said_committed = True
        kill(child)
    else:
        with paused_at(pg_url, where) as pause:
            child = committer()
            pause.waiting_backend(child)
            said_committed = kill(child)
            pause.release()
    status = assert_left_whole_or_nothing(pg_url, job_id, said_committed)
    assert status == ("committed" if where == "after-commit" else "ready")
    asyncio.run(commit_once_and_undo(pg_url, job_id, status))


def test_pg_a_commit_whose_connection_is_dropped_is_one_line_and_loses_nothing(
    pg_url: str, job_id: str, committer: Committer
) -> None:
    """``pg_terminate_backend`` of the commit's connection while its transaction waits
    with every event written: the child's commit fails in one line, nothing of it is kept,
    and the same engine commits it whole on its next call."""
    with paused_at(pg_url, "job-committed") as pause:
        child = committer()
        backend = pause.waiting_backend(child)
        pause.conn.execute("SELECT pg_terminate_backend(%s)", (backend,))
        assert child.stdout is not None and child.stdin is not None
        error = child.stdout.readline()
        assert error.startswith(f"error: {database_label(pg_url)}: the connection was lost")
        assert error.rstrip("\n").endswith("the unit was rolled back")
        assert assert_left_whole_or_nothing(pg_url, job_id, False) == "ready"
        pause.conn.execute("SELECT pg_advisory_unlock(%s)", (LOCK,))
        child.stdin.write("again\n")
        child.stdin.flush()
        assert child.stdout.readline().startswith("committed")
        assert child.wait(timeout=30) == 0
        child.stdout.close()
        child.stdin.close()
    assert assert_left_whole_or_nothing(pg_url, job_id, True) == "committed"
    asyncio.run(commit_once_and_undo(pg_url, job_id, "committed"))


def test_pg_the_check_catches_a_commit_that_is_not_one_transaction(
    pg_url: str, job_id: str, committer: Committer
) -> None:
    """The same kill of a child whose statements each commit alone leaves half a batch,
    and ``assert_all_or_nothing`` says so: the tests above would fail on such a commit."""
    with paused_at(pg_url, "middle-event") as pause:
        child = committer("--each-statement-commits")
        pause.waiting_backend(child)
        kill(child)
        pause.release()
    assert stored(pg_url)["events"] == CANDIDATES // 2 + 1
    with pytest.raises(AssertionError):
        assert_left_whole_or_nothing(pg_url, job_id, False)
