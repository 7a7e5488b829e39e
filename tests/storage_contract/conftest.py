"""The storage contract's suite runs against every backend named in ``BACKENDS``.

A test receives ``engine``: a ``StrataGate`` over that backend, empty. It sets up data
through the engine's public capabilities (so any backend can run it) and asserts on
``engine.storage.<capability>``: the contract of ``core/storage.py``.
"""

from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest

from stratagate_plugin.core.config import MemoryConfig
from stratagate_plugin.core.memory import StrataGate


async def _sqlite(tmp_path: Path) -> StrataGate:
    return await StrataGate.open(tmp_path / "contract.db", MemoryConfig(block_turn_size=2))


BACKENDS: dict[str, Callable[[Path], Awaitable[StrataGate]]] = {"sqlite": _sqlite}


@pytest.fixture(params=sorted(BACKENDS))
async def engine(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[StrataGate]:
    memory = await BACKENDS[request.param](tmp_path)
    yield memory
    await memory.close()
