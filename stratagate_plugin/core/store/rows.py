"""Row ↔ record conversion for the store (JSON columns, ISO timestamps)."""

import json
import sqlite3
from typing import Any

from ..clock import parse_iso
from ..records import Block, Job, Message, ToolTrace


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


def message_from_row(row: sqlite3.Row) -> Message:
    return Message(
        id=row["id"],
        namespace=row["namespace"],
        thread_id=row["thread_id"],
        block_id=row["block_id"],
        position=row["position"],
        turn=row["turn"],
        role=row["role"],
        content=row["content"],
        tool_calls=traces_from_json(row["tool_calls_json"]),
        created_at=parse_iso(row["created_at"]),
    )


def block_from_row(row: sqlite3.Row) -> Block:
    return Block(
        id=row["id"],
        namespace=row["namespace"],
        thread_id=row["thread_id"],
        sequence=row["sequence"],
        thread_sequence=row["thread_sequence"],
        start_turn=row["start_turn"],
        end_turn=row["end_turn"],
        l4_readable=row["l4_readable"],
        l3_condensed=row["l3_condensed"],
        l0_title=row["l0_title"],
        l0_tags=maybe_json(row["l0_tags_json"]),
        l1_summary=row["l1_summary"],
        l2_keypoints=maybe_json(row["l2_keypoints_json"]),
        should_extract=None if row["should_extract"] is None else bool(row["should_extract"]),
        processing_status=row["processing_status"],
        ready_position=row["ready_position"],
        pointer_current_level=row["pointer_current_level"],
        pointer_anchor_level=row["pointer_anchor_level"],
        pointer_anchor_position=row["pointer_anchor_position"],
        last_lifted_at=maybe_time(row["last_lifted_at"]),
        last_lifted_by=row["last_lifted_by"],
        created_at=parse_iso(row["created_at"]),
        updated_at=parse_iso(row["updated_at"]),
    )


def job_from_row(row: sqlite3.Row) -> Job:
    return Job(
        id=row["id"],
        namespace=row["namespace"],
        kind=row["kind"],
        target_id=row["target_id"],
        status=row["status"],
        attempts=row["attempts"],
        last_error=row["last_error"],
        next_retry_at=maybe_time(row["next_retry_at"]),
        created_at=parse_iso(row["created_at"]),
        updated_at=parse_iso(row["updated_at"]),
        detail=row["detail"],
    )
