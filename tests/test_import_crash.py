"""A process killed during an import commit leaves all of the batch or none of it."""

import asyncio
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from imports import NS, candidate, document

from stratagate_plugin.core.memory import StrataGate

CANDIDATES = 200
COMMITTER = textwrap.dedent(
    """
    import asyncio, sys
    from stratagate_plugin.core.memory import StrataGate

    async def main(path, job_id):
        memory = await StrataGate.open(path)
        print("go", flush=True)
        batch = await memory.imports.commit(job_id)
        print("committed", batch.id, flush=True)
        await memory.close()

    asyncio.run(main(sys.argv[1], sys.argv[2]))
    """
)
pytestmark = pytest.mark.sqlite_only(
    reason="one SQLite file prepared per module, copied with sqlite3's backup API for each kill "
    "(a module fixture is set up before the PostgreSQL pass redirects); kills mid-write on "
    "PostgreSQL: test_pg_faults.py"
)
KILL_AFTER_S = (0.0, 0.02, 0.1, 0.4, 1.0, 1.8, 5.0)  # the commit takes about 2 s here


@pytest.fixture(scope="module")
def prepared(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A database with an analysed job of 200 candidates and a 2 MB text, ready to commit."""
    path = tmp_path_factory.mktemp("crash") / "prepared.db"
    pad = "evidence " * 1000
    text = document(
        *(
            candidate(f"Distinct fact {i}", f"Fact {i} is about item{i} alone", narrative=pad)
            for i in range(CANDIDATES)
        )
    )

    async def prepare() -> str:
        async with await StrataGate.open(path) as memory:
            job = await memory.imports.preview(NS, text)
            job = await memory.imports.advance(job.id)
            assert job.status == "ready"
            return job.id

    return path, asyncio.run(prepare())


def copy_of(source: Path, target: Path) -> None:
    with sqlite3.connect(source) as src, sqlite3.connect(target) as dst:
        src.backup(dst)


def commit_and_kill(path: Path, job_id: str, after_s: float) -> bool:
    """Whether the child said it committed before it was killed."""
    with subprocess.Popen(
        [sys.executable, "-c", COMMITTER, str(path), job_id], stdout=subprocess.PIPE, text=True
    ) as child:
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "go"
        time.sleep(after_s)
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
        return "committed" in child.stdout.read()


@pytest.mark.parametrize("after_s", KILL_AFTER_S)
def test_sigkill_during_a_commit_leaves_all_or_nothing(
    prepared: tuple[Path, str], tmp_path: Path, after_s: float
) -> None:
    source, job_id = prepared
    path = tmp_path / "memory.db"
    copy_of(source, path)
    said_committed = commit_and_kill(path, job_id, after_s)
    conn = sqlite3.connect(path)
    if isinstance(conn, sqlite3.Connection):  # SQLite's file check; a server keeps its pages
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    status, batch_id = conn.execute(
        "SELECT status, batch_id FROM import_jobs WHERE id = ?", (job_id,)
    ).fetchone()
    events = conn.execute("SELECT COUNT(*) FROM events").fetchone()[0]
    sources = conn.execute("SELECT COUNT(*) FROM event_sources").fetchone()[0]
    blocks = conn.execute("SELECT COUNT(*) FROM blocks").fetchone()[0]
    messages = conn.execute("SELECT COUNT(*) FROM messages").fetchone()[0]
    conn.close()
    if status == "committed":
        assert (events, sources, blocks, messages) == (CANDIDATES, CANDIDATES, 1, 1)
        assert batch_id is not None
    else:
        assert not said_committed and status == "ready"
        assert (events, sources, blocks, messages, batch_id) == (0, 0, 0, 0, None)
