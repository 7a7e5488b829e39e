"""Data shapes shared by the rule modules, the store and the façade."""

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from .clock import UtcDatetime
from .text.clean import valid_json_value, valid_text

Role = Literal["user", "assistant", "tool", "system"]
ProcessingStatus = Literal["pending", "ready"]
LiftSource = Literal["user", "agent"]
JobStatus = Literal["pending", "running", "succeeded", "skipped", "failed"]


class ToolTrace(BaseModel):
    """One tool call attached to a message: name, raw arguments, raw result."""

    model_config = ConfigDict(frozen=True)

    name: str
    arguments: Any = None
    result: Any = None

    @field_validator("name", "arguments", "result")
    @classmethod
    def _valid_text(cls, value: Any) -> Any:
        return valid_json_value(value)


class MessageIn(BaseModel):
    """A message as a host or an import file hands it to core."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    role: Role
    content: str
    tool_calls: tuple[ToolTrace, ...] = ()
    at: UtcDatetime | None = None

    @field_validator("content")
    @classmethod
    def _valid_text(cls, value: str) -> str:
        return valid_text(value)


class Message(BaseModel):
    """A stored L5 message. ``block_id`` is None while it sits in the open tail."""

    model_config = ConfigDict(frozen=True)

    id: str
    namespace: str
    thread_id: str
    block_id: str | None
    position: int
    turn: int
    role: Role
    content: str
    tool_calls: tuple[ToolTrace, ...] = ()
    created_at: UtcDatetime
    composed_from_memory: bool = False  # an answer built on adopted memory: never a source
    adopted_refs: tuple[str, ...] = ()


class TurnReceipt(BaseModel):
    """What ``append_turn`` reports back."""

    receipt_id: str
    replayed: bool
    namespace_turn: int
    thread_turn: int
    message_ids: list[str]
    sealed_block_id: str | None = None


OFFLINE_FALLBACK = "offline-fallback"  # derived by the offline model because the model failed


class Block(BaseModel):
    """A sealed block: permanent L5 (its messages) plus the derived views."""

    id: str
    namespace: str
    thread_id: str
    sequence: int
    thread_sequence: int
    start_turn: int
    end_turn: int
    l4_readable: str
    l3_condensed: str
    l0_title: str | None = None
    l0_tags: list[str] | None = None
    l1_summary: str | None = None
    l2_keypoints: list[str] | None = None
    should_extract: bool | None = None
    processing_status: ProcessingStatus = "pending"
    ready_position: int | None = None
    pointer_current_level: int = 5
    pointer_anchor_level: int = 5
    pointer_anchor_position: int | None = None
    last_lifted_at: UtcDatetime | None = None
    last_lifted_by: LiftSource | None = None
    created_at: UtcDatetime
    updated_at: UtcDatetime
    derived_by: str | None = None  # the model's name, "offline" or "offline-fallback"
    derive_error: str | None = None  # the model's error when the offline result was kept


class BlockView(BaseModel):
    """A block as a reader sees it now: its decayed level and the size of every view."""

    block: Block
    current_level: int
    age: int
    view_tokens: dict[str, int] = Field(default_factory=dict)
    text: str = ""


class BlockMark(BaseModel):
    """When a block of a thread was sealed and became ready, and the thread turns it holds."""

    id: str
    thread_sequence: int
    start_turn: int
    end_turn: int
    processing_status: ProcessingStatus
    title: str | None = None
    sealed_at: UtcDatetime
    ready_at: UtcDatetime | None = None


SUMMARY_JOB = "block_summary"
"""The kind of job a sealed block queues: its summary (L0–L2)."""
EXTRACTION_JOB = "event_extraction"
"""The kind of job derivation queues once a block's summary is in: its events."""
TOPIC_JOB = "topic_projection"
"""The kind of job a batch of events queues for the topic catalog."""
GRAPH_JOB = "graph_projection"
"""The kind of job a batch of events queues for the knowledge graph."""
MAX_ATTEMPTS = 3
"""How many times a job is tried before it stays failed (a manual retry starts again)."""
IMPORT_THREAD_PREFIX = "external-import:"
"""An import's source block lives in a thread named so: provenance, never a raw hit."""


class Job(BaseModel):
    id: str
    namespace: str
    kind: str
    target_id: str
    status: JobStatus
    attempts: int
    last_error: str | None
    next_retry_at: UtcDatetime | None
    created_at: UtcDatetime
    updated_at: UtcDatetime
    detail: str | None = None
    owner: str | None = None
    lease_expires_at: UtcDatetime | None = None
    claims: int = 0
    derived_by: str | None = None  # who produced the result; "offline-fallback": the model failed
