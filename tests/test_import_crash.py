"""A process killed during an import commit leaves all of the batch or none of it."""

import asyncio
import sqlite3
import time
from pathlib import Path

import pytest
from import_kills import assert_all_or_nothing, kill, prepare, start_committer

pytestmark = pytest.mark.sqlite_only(
    reason="one SQLite file prepared per module, copied with sqlite3's backup API for each kill "
    "(a module fixture is set up before the PostgreSQL pass redirects); kills mid-commit on "
    "PostgreSQL: test_pg_import_crash.py"
)
KILL_AFTER_S = (0.0, 0.02, 0.1, 0.4, 1.0, 1.8, 5.0)  # the commit takes about 2 s here


@pytest.fixture(scope="module")
def prepared(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A database with an analysed job of 200 candidates and a 2 MB text, ready to commit."""
    path = tmp_path_factory.mktemp("crash") / "prepared.db"
    return path, asyncio.run(prepare(path))


def copy_of(source: Path, target: Path) -> None:
    with sqlite3.connect(source) as src, sqlite3.connect(target) as dst:
        src.backup(dst)


def commit_and_kill(path: Path, job_id: str, after_s: float) -> bool:
    """Whether the child said it committed before it was killed."""
    child = start_committer(str(path), job_id)
    time.sleep(after_s)
    return kill(child)


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
    assert_all_or_nothing(conn, job_id, said_committed)
    conn.close()
