"""External-memory import data for tests: v2 documents, seeded events, a whole import."""

import json
import sqlite3
from collections.abc import Mapping
from typing import Any

from cards import T0, event_card

from stratagate_plugin.core.events.documents import EVENT_RULES
from stratagate_plugin.core.importer.jobs import ImportBatch, ImportJob
from stratagate_plugin.core.memory import StrataGate
from stratagate_plugin.core.store import event_rows
from stratagate_plugin.core.store.turns import NewSpaceDefaults, ensure_space

NS = "ns"
TEA = "The user prefers green tea in the morning"
COFFEE = "The user prefers black coffee in the morning now"  # overlaps TEA: the decider is asked


def candidate(title: str, summary: str | None = None, **fields: Any) -> dict[str, Any]:
    return {"title": title, "summary": title if summary is None else summary, **fields}


def document(*candidates: dict[str, Any], **fields: Any) -> str:
    return json.dumps(
        {"schemaVersion": "stratagate.external-memory.v2", **fields, "candidates": list(candidates)}
    )


async def seed(memory: StrataGate, event_id: str, text: str, **fields: Any) -> None:
    """A live event of ``NS`` (conversation pool unless ``pool`` says otherwise)."""
    card = event_card(event_id, namespace=NS, title=text, summary=text, **fields)

    def unit(raw: sqlite3.Connection) -> None:
        ensure_space(raw, NS, NewSpaceDefaults(3, 0.3), T0.isoformat())
        event_rows.insert_event(raw, card, EVENT_RULES)

    await memory.db.write(unit)


async def analysed(memory: StrataGate, text: str, fmt: str = "auto", space: str = NS) -> ImportJob:
    job = await memory.imports.preview(space, text, fmt)
    return await memory.imports.advance(job.id)


async def imported(
    memory: StrataGate, text: str, choices: Mapping[int, str] | None = None
) -> ImportBatch:
    job = await analysed(memory, text)
    return await memory.imports.commit(job.id, choices)


def decision(
    action: str, targets: list[str], confidence: float = 0.95, reason: str = ""
) -> dict[str, Any]:
    return {
        "action": action,
        "target_event_ids": targets,
        "confidence": confidence,
        "reason": reason or action.lower(),
    }


def stored(plain: sqlite3.Connection, event_id: str) -> sqlite3.Row | None:
    row: sqlite3.Row | None = plain.execute(
        "SELECT * FROM events WHERE id = ?", (event_id,)
    ).fetchone()
    return row


def counts(plain: sqlite3.Connection) -> dict[str, int]:
    """Rows in every table a commit writes or an undo removes."""
    tables = ("events", "event_sources", "blocks", "messages", "threads", "graph_batches", "jobs")
    return {t: plain.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in tables}
