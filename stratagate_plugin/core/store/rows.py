"""Row ↔ record conversion for the store (JSON columns, ISO timestamps)."""

import json
import sqlite3
from typing import Any, TypeVar

from pydantic import BaseModel

from ..clock import parse_iso
from ..records import Block, Job, Message, ToolTrace

M = TypeVar("M", bound=BaseModel)


def maybe_time(text: str | None) -> Any:
    return None if text is None else parse_iso(text)


def maybe_json(text: str | None) -> Any:
    return None if text is None else json.loads(text)


_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), sort_keys=True)


def dump_json(value: Any) -> str:
    """Compact, key-sorted JSON (one encoder built once: this runs on every recorded turn)."""
    return _ENCODER.encode(value)


def traces_json(traces: tuple[ToolTrace, ...]) -> str:
    return dump_json([trace.model_dump() for trace in traces]) if traces else "[]"


def traces_from_json(text: str) -> tuple[ToolTrace, ...]:
    return tuple(ToolTrace(**t) for t in json.loads(text)) if text != "[]" else ()


def record_from_row(model: type[M], row: sqlite3.Row, **values: Any) -> M:
    """The record validated from its row: a ``name_json`` column decodes into field ``name``;
    columns the model lacks are ignored, ``values`` fill or override fields."""
    fields = model.model_fields
    data: dict[str, Any] = {}
    for key in row.keys():  # noqa: SIM118 (sqlite3.Row iterates values, not keys)
        name = key.removesuffix("_json")
        if name in fields:
            data[name] = maybe_json(row[key]) if name != key else row[key]
    data.update(values)
    return model.model_validate(data)


def message_from_row(row: sqlite3.Row) -> Message:
    return record_from_row(Message, row)


def block_from_row(row: sqlite3.Row) -> Block:
    return record_from_row(Block, row)


def job_from_row(row: sqlite3.Row) -> Job:
    return record_from_row(Job, row)
