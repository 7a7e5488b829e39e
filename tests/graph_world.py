"""A tiny world for graph tests: events written straight to the store (queued for projection
as derivation queues them), and scripted projections naming them."""

import sqlite3
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from stratagate_plugin.core.config import MemoryConfig
from stratagate_plugin.core.events.documents import EVENT_RULES
from stratagate_plugin.core.events.weights import new_card
from stratagate_plugin.core.llm.base import ScriptedModel
from stratagate_plugin.core.memory import StrataGate
from stratagate_plugin.core.store import event_rows, graph_jobs
from stratagate_plugin.core.store.turns import NewSpaceDefaults, ensure_space

NS = "ns"
MODEL_PROJECTOR = MemoryConfig(block_turn_size=3, graph_projector="model")


async def open_scripted(path: Path) -> tuple[StrataGate, ScriptedModel]:
    model = ScriptedModel()
    return await StrataGate.open(path, MODEL_PROJECTOR, model=model), model


def card_for(title: str, said: str, **temporal: Any) -> Any:
    return new_card(
        namespace=NS,
        title=title,
        summary=title,
        source_block_id=None,
        source_message_ids=[],
        temporal={"mentioned_at": said, **temporal},
        scope="user",
        criticality="routine",
        formed_turn=1,
        created_at=datetime(2024, 1, 1, tzinfo=UTC),
    )


async def add_events(memory: StrataGate, *cards: Any, queue: bool = True) -> list[str]:
    """The cards stored in one transaction (and queued as one batch, as an extraction does)."""

    def unit(raw: sqlite3.Connection) -> list[str]:
        ensure_space(raw, NS, NewSpaceDefaults(3, 0.5), "2024-01-01T00:00:00+00:00")
        for card in cards:
            event_rows.insert_event(raw, card, EVENT_RULES)
        ids = [card.id for card in cards]
        if queue:
            graph_jobs.queue_events(raw, NS, ids, 1000, "2024-01-01T00:00:00+00:00")
        return ids

    return await memory.db.write(unit)


def node(
    ref: str, name: str, sources: list[str], type_: str = "person", **extra: Any
) -> dict[str, Any]:
    return {"ref": ref, "name": name, "type": type_, "source_event_ids": sources, **extra}


def fact(key: str, value: Any, sources: list[str], **extra: Any) -> dict[str, Any]:
    return {"key": key, "value": value, "source_event_ids": sources, **extra}


def graph_counts(plain: sqlite3.Connection) -> tuple[int, int, int, int]:
    return tuple(  # type: ignore[return-value]
        plain.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
        for table in ("graph_nodes", "graph_facts", "graph_edges", "graph_sources")
    )
