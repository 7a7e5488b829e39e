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
    """The column's JSON value; an empty list or object without the decoder (most messages'
    tool calls and adopted references: ``json.loads`` was a third of reading a chat's
    2,500 messages for its history's checkpoints)."""
    if text is None:
        return None
    if text == "[]":
        return []
    if text == "{}":
        return {}
    return json.loads(text)


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
    shape = (model, tuple(row.keys()), len(row))
    plan = _PLANS.get(shape)
    if plan is None:
        plan = _PLANS[shape] = _plan(*shape)
    data = {name: maybe_json(row[at]) if decode else row[at] for at, name, decode in plan}
    data.update(values)
    return model.model_validate(data)


Plan = tuple[tuple[int | str, str, bool], ...]
_PLANS: dict[tuple[type[BaseModel], tuple[str, ...], int], Plan] = {}
"""Per model and row shape (a query's columns: a few dozen shapes in all), which column
fills which field and whether it is JSON: worked out once, not per row (a graph page
builds hundreds of records)."""


def _plan(model: type[BaseModel], keys: tuple[str, ...], width: int) -> Plan:
    """Columns by position where names are unique and name every value (read by name
    otherwise: a repeated name reads its first column, as ``row[name]`` always did)."""
    fields = model.model_fields
    by_position = len(set(keys)) == len(keys) == width
    named = (
        (at if by_position else key, key, key.removesuffix("_json")) for at, key in enumerate(keys)
    )
    return tuple((at, name, name != key) for at, key, name in named if name in fields)


def message_from_row(row: sqlite3.Row) -> Message:
    return record_from_row(Message, row)


def block_from_row(row: sqlite3.Row) -> Block:
    return record_from_row(Block, row)


def job_from_row(row: sqlite3.Row) -> Job:
    return record_from_row(Job, row)
