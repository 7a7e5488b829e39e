"""The deterministic offline model: the embedded default when no endpoint is configured.

No network and no randomness: the same task always gives the same answer. It summarises
blocks, extracts event cards, projects them into the graph and groups them into topics
with the rule modules ``summary``, ``events``, ``graph`` and ``topics``, and decides agent
memories with
``remember.rules.offline_decide_payload``; any other task is refused with ``ModelError``.
"""

import asyncio
from datetime import UTC, tzinfo
from typing import Any

from ...remember.rules import DECIDE_AGENT_MEMORY, offline_decide_payload
from ..base import ModelError, StructuredTask, T
from ..tasks import EXTRACT_EVENT_CARDS, PROJECT_GRAPH, PROJECT_MEMORY_TOPICS, SUMMARIZE_BLOCK
from .events import extract_events
from .graph import project_graph
from .summary import summarize_block
from .topics import project_topics


class OfflineModel:
    """Rule-based ``StructuredModel``; ``timezone`` is the calendar for "yesterday" etc."""

    name = "offline"

    def __init__(self, timezone: tzinfo = UTC) -> None:
        self.timezone = timezone

    async def complete(self, task: StructuredTask[T]) -> T:
        """The answer, computed on a worker thread: a long block keeps the rules busy for
        seconds, and the event loop (an MCP ping, a web request) must not wait for them."""
        answer = await asyncio.to_thread(self.answer, task.name, task.payload)
        return task.output_type.model_validate(answer)

    def answer(self, name: str, payload: dict[str, Any]) -> dict[str, Any]:
        """The task's result as plain data (synchronous; used by ``complete``)."""
        if name == SUMMARIZE_BLOCK:
            messages = payload.get("block", {}).get("messages", [])
            return summarize_block(messages, self.timezone).model_dump()
        if name == EXTRACT_EVENT_CARDS:
            return extract_events(payload, self.timezone).model_dump()
        if name == PROJECT_MEMORY_TOPICS:
            return project_topics(payload).model_dump()
        if name == PROJECT_GRAPH:
            return project_graph(payload).model_dump()
        if name == DECIDE_AGENT_MEMORY:
            return offline_decide_payload(payload).model_dump()
        raise ModelError(f"the offline model cannot run task {name!r}")
