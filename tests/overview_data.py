"""Data for the memory page's overview tests: turns, sealed blocks and receipts recorded
straight through the plugin's running engine (no chat turn, so no worker pass is asked)."""

import asyncio
from typing import Any

from stratagate_plugin.core.llm.base import ModelError
from stratagate_plugin.harness.runtime import Host
from tests.webapp import worker_on_request

FACTS = [
    ("We moved the spring sale to 14 March.", "Noted."),
    ("The glaze supplier raised prices by 12% last week.", "That affects margins."),
]


def runtime_of(host: Host) -> Any:
    """The memory plugin's running state (``MemoryRuntime``)."""
    return host.pm.get_plugin("stratagate-memory").runtime


async def quiet(host: Host) -> Any:
    """The runtime once its worker has nothing to do (its start-up pass is over)."""
    runtime = runtime_of(host)
    await asyncio.wait_for(runtime.idle.wait(), timeout=10)
    return runtime


async def sealed_block(host: Host, thread: str = "monday", turns: Any = FACTS) -> str:
    """``turns`` recorded in the default space's ``thread`` and sealed: the block's id
    (its summary job pending: no worker pass is asked for, and the worker polls no more)."""
    runtime = await worker_on_request(host)
    space = runtime.default_space()
    for user, assistant in turns:
        await runtime.memory.blocks.append_turn(space, thread, user=user, assistant=assistant)
    block_id: str = await runtime.memory.blocks.seal_tail(space, thread)
    return block_id


async def adopt(memory: Any, space: str, event_ids: list[str], receipt_id: str) -> None:
    """One batch over ``event_ids`` (with their titles, as the search tool gives them),
    judged sufficient, adopted under ``receipt_id``."""
    refs = [f"event:{event_id}" for event_id in event_ids]
    thread = "audit-" + receipt_id
    titles = {
        f"event:{event_id}": (await memory.events.get(event_id)).title for event_id in event_ids
    }
    batch = await memory.gate.open_batch(space, thread, "memory_search_events", refs, titles)
    if refs:
        await memory.gate.assess(
            space, thread, batch.id, "sufficient", refs, "direct", None, "answer"
        )
    await memory.gate.record_use(space, thread, batch.id, refs, receipt_id)


class DownModel:
    """A model endpoint that is down: every derivation task fails with ``message``."""

    name = "down"

    def __init__(self, message: str = "the endpoint is down") -> None:
        self.message = message

    async def complete(self, task: Any) -> Any:
        raise ModelError(self.message)


async def failed_jobs(memory: Any, message: str = "the endpoint is down") -> list[Any]:
    """Run the due jobs against a model that is down (one failed attempt each, no offline
    fallback), then put the engine's own model and config back: the failed jobs."""
    model, memory.model = memory.model, DownModel(message)
    config, memory.config = (
        memory.config,
        memory.config.model_copy(update={"offline_fallback": False}),
    )
    try:
        await memory.derivation.process_pending()
    finally:
        memory.model, memory.config = model, config
    failed: list[Any] = await memory.derivation.list_jobs(status="failed")
    return failed


async def ready_event(host: Host) -> tuple[Any, str, Any]:
    """A derived block in the default space: the engine, the space and one of its events."""
    await sealed_block(host)
    memory = runtime_of(host).memory
    await memory.derivation.process_pending()
    space = (await quiet(host)).default_space()
    return memory, space, (await memory.events.cards(space))[0]
