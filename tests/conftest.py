"""A fresh tiny world per test: a temp database file and a façade over it."""

import gc
import os
import sqlite3
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import aiosqlite
import pytest

from stratagate_plugin.core.config import MemoryConfig
from stratagate_plugin.core.memory import StrataGate

# The browser tests' fixtures (app, browser, page): see tests/browser.py; the private
# PostgreSQL server's (pg_cluster, pg_url): see tests/pg_cluster.py; the option
# ``--backend postgresql`` (the suite on that server): see tests/backend.py.
pytest_plugins = ["browser", "pg_cluster", "backend"]


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No test reads the developer's shell: every ``STRATAGATE_*`` variable is cleared."""
    for name in [name for name in os.environ if name.startswith("STRATAGATE_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("STRATAGATE_HOME", str(tmp_path / "home"))


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "memory.db"


@pytest.fixture
async def memory(db_path: Path) -> AsyncIterator[StrataGate]:
    sg = await StrataGate.open(db_path, MemoryConfig(block_turn_size=3))
    yield sg
    await sg.close()


@pytest.fixture
def plain(db_path: Path, server_files: Any) -> Iterator[sqlite3.Connection]:
    """A second, plain sqlite3 connection for asserting on what is really stored (with
    ``--backend postgresql``, one to the database standing for the file)."""
    if server_files is not None:
        yield from server_files.plain(db_path)
        return
    conn = sqlite3.connect(db_path)
    conn.row_factory = sqlite3.Row
    yield conn
    conn.close()


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Stop the writer threads of databases a test left open, so the run can exit.

    aiosqlite's thread is not a daemon: a test that fails before its ``close()`` keeps its
    engine alive through the kept traceback, and the interpreter would wait for that
    thread forever after the last test (a CI run once hung there). Each leak is reported.
    """
    leaked = [
        obj for obj in gc.get_objects()
        if isinstance(obj, aiosqlite.Connection) and obj._running
    ]  # fmt: skip
    for conn in leaked:
        conn.stop()
    if leaked:
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        line = f"{len(leaked)} database connection(s) left open by tests were stopped"
        if reporter is not None:
            reporter.write_line(line, yellow=True)
