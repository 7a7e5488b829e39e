"""A fresh tiny world per test: a temp database file and a façade over it."""

import os
import sqlite3
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from stratagate_plugin.core.config import MemoryConfig
from stratagate_plugin.core.memory import StrataGate

# The browser tests' fixtures (app, browser, page): see tests/browser.py.
pytest_plugins = ["browser"]


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
def plain(db_path: Path) -> Iterator[sqlite3.Connection]:
    """A second, plain sqlite3 connection for asserting on what is really stored."""
    conn = sqlite3.connect(db_path)
    conn.row_factory = sqlite3.Row
    yield conn
    conn.close()
