"""An import commit in a child process, to be killed mid-way, and the check of what it left.

Shared by ``test_import_crash.py`` (SQLite, killed after a delay) and
``test_pg_import_crash.py`` (PostgreSQL, killed while its transaction waits on a lock the
test holds): one import of ``CANDIDATES`` distinct facts, one committer, one definition
of "all of the batch or none of it".
"""

import signal
import sqlite3
import subprocess
import sys
import textwrap
from typing import Any

from imports import NS, candidate, counts, document

from stratagate_plugin.core.memory import StrataGate

CANDIDATES = 200
GRAPH_BATCHES = CANDIDATES // 8  # a commit queues its events' projection in batches of 8
# Every row a commit writes, none of them before it: all of these, or none.
NOTHING = dict.fromkeys(
    ("events", "event_sources", "blocks", "messages", "threads", "graph_batches", "jobs"), 0
)
WHOLE = {
    **{"events": CANDIDATES, "event_sources": CANDIDATES, "blocks": 1, "messages": 1},
    **{"threads": 1, "graph_batches": GRAPH_BATCHES, "jobs": GRAPH_BATCHES},
}
# The child commits the job; a commit that fails is one line ("error: ...") and, once the
# test has looked at the database and written a line to its stdin, is tried again on the
# same engine (its stdin closed instead: the child ends). ``--each-statement-commits``
# takes PostgreSQL's transactions away (every statement commits alone): what the tests'
# check must catch.
COMMITTER = textwrap.dedent(
    """
    import asyncio, sys
    from stratagate_plugin.core.errors import StrataGateError
    from stratagate_plugin.core.memory import StrataGate

    async def main(db, job_id, *flags):
        if "--each-statement-commits" in flags:
            from stratagate_plugin.core.store.postgres import db as server
            server._BEGIN = dict.fromkeys(server._BEGIN, "SELECT 1")
        memory = await StrataGate.open(db)
        print("go", flush=True)
        while True:
            try:
                batch = await memory.imports.commit(job_id)
                break
            except StrataGateError as error:
                print("error:", error, flush=True)
                if not sys.stdin.readline():
                    raise SystemExit(1)  # the test is gone
        print("committed", batch.id, flush=True)
        await memory.close()

    asyncio.run(main(*sys.argv[1:]))
    """
)


def crash_document() -> str:
    """``CANDIDATES`` facts sharing no words but their own, with a 2 MB text in all: a
    commit long enough to be caught in the middle (about 2 s on SQLite)."""
    pad = "evidence " * 1000
    return document(
        *(
            candidate(f"Distinct fact {i}", f"Fact {i} is about item{i} alone", narrative=pad)
            for i in range(CANDIDATES)
        )
    )


async def prepare(db: Any) -> str:
    """An analysed job of ``crash_document`` in ``db`` (a file or a URL), ready to commit:
    its id."""
    async with await StrataGate.open(db) as memory:
        job = await memory.imports.preview(NS, crash_document())
        job = await memory.imports.advance(job.id)
        assert job.status == "ready"
        return job.id


def start_committer(db: str, job_id: str, *flags: str) -> "subprocess.Popen[str]":
    """The child committing ``job_id`` on ``db`` (a file or a URL), once it said "go"."""
    child = subprocess.Popen(
        [sys.executable, "-c", COMMITTER, db, job_id, *flags],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None
    assert child.stdout.readline().strip() == "go"
    return child


def kill(child: "subprocess.Popen[str]") -> bool:
    """SIGKILL the child; whether it had said it committed."""
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=30)
    assert child.stdout is not None
    said = child.stdout.read()
    child.stdout.close()
    assert child.stdin is not None
    child.stdin.close()
    return "committed" in said


def assert_all_or_nothing(conn: sqlite3.Connection, job_id: str, said_committed: bool) -> str:
    """The whole batch with its undo record (the job committed, naming its source block)
    or nothing of it (the job still ready to commit); a commit the child reported is never
    missing. The job's status."""
    status, batch_id = job_state(conn, job_id)
    found = counts(conn)
    if status == "committed":
        assert found == WHOLE, f"a committed job with {found}"
        assert batch_id is not None
        assert _one(conn, "SELECT COUNT(*) FROM events WHERE source_block_id = ?", batch_id) == (
            CANDIDATES
        )
    else:
        assert not said_committed and status == "ready", (
            f"job {status}, said committed: {said_committed}"
        )
        assert (found, batch_id) == (NOTHING, None), f"a {status} job with {found}"
    return str(status)


def job_state(conn: sqlite3.Connection, job_id: str) -> tuple[Any, Any]:
    row = conn.execute("SELECT status, batch_id FROM import_jobs WHERE id = ?", (job_id,))
    return tuple(row.fetchone())


def _one(conn: sqlite3.Connection, sql: str, *params: Any) -> Any:
    return conn.execute(sql, params).fetchone()[0]
