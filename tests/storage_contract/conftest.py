"""The storage contract's suite runs against every backend named in ``BACKENDS``.

A test receives ``engine``: a ``StrataGate`` over that backend, empty. It sets up data
through the engine's public capabilities (so any backend can run it) and asserts on
``engine.storage.<capability>``: the contract of ``core/storage.py``.

PostgreSQL runs on the private server of ``tests/pg_cluster.py``, a fresh database per
test copied from one migrated once per session (``pg_contract_url``; ~0.3 s a test where
migrating each took ~4 s). A capability's file runs there once it passes there:
``NOT_YET_ON_POSTGRESQL`` names the files that do not yet, each with what is missing. The
set only shrinks: a file leaves it when its last failure on PostgreSQL is fixed, and a
file in it is not run on PostgreSQL at all (no skip to hide a failure among the passes);
``STRATAGATE_CONTRACT_ALL=1`` runs every file there, to see what is left.
"""

import os
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from pg_cluster import Cluster

from stratagate_plugin.core.config import MemoryConfig
from stratagate_plugin.core.memory import StrataGate

NOT_YET_ON_POSTGRESQL: dict[str, str] = {}  # every capability's file runs on both


async def _sqlite(tmp_path: Path) -> StrataGate:
    return await StrataGate.open(tmp_path / "contract.db", MemoryConfig(block_turn_size=2))


async def _postgresql(url: str) -> StrataGate:
    return await StrataGate.open(url, MemoryConfig(block_turn_size=2))


BACKENDS: dict[str, Callable[[Any], Awaitable[StrataGate]]] = {
    "sqlite": _sqlite,
    "postgresql": _postgresql,
}


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Every backend for each test asking for ``engine``, but PostgreSQL only for the
    capabilities that run there."""
    if "engine" not in metafunc.fixturenames:
        return
    backends = sorted(BACKENDS)
    trying = os.environ.get("STRATAGATE_CONTRACT_ALL") == "1"  # to shrink the set
    if metafunc.definition.path.name in NOT_YET_ON_POSTGRESQL and not trying:
        backends.remove("postgresql")
    metafunc.parametrize("engine", backends, indirect=True)


@pytest.fixture
def pg_contract_url(pg_cluster: Cluster, pg_template: str) -> Iterator[str]:
    """A fresh database for one test, copied from the migrated template."""
    with pg_cluster.database("contract", template=pg_template) as name:
        yield pg_cluster.url(name)


@pytest.fixture
async def engine(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[StrataGate]:
    where: Any = tmp_path
    if request.param == "postgresql":
        where = request.getfixturevalue("pg_contract_url")
    memory = await BACKENDS[request.param](where)
    yield memory
    await memory.close()
