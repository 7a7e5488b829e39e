"""The evidence gate's records: refs, batches and assessments (spec §7), no rule.

A ref names what a retrieval exposed (``event:<id>``, ``raw:<block>:<message>:<i>``,
``block:<id>:level:<n>``, ``graph-node:<id>[:expanded]``); a ``Batch`` keeps the refs one
retrieval exposed, and its latest ``Assessment``. The storage stores and returns these
(``storage.py``); what may be assessed, adopted and reinforced is decided by
``evidence.py``.
"""

import re
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ..clock import UtcDatetime

Verdict = Literal["sufficient", "partial", "wrong"]
# fmt: off
Strategy = Literal["answer", "search_events", "expand_event", "search_graph", "expand_graph_node",
                   "search_elements", "expand_element", "search_raw_memory", "expand_block"]
# fmt: on
BatchStatus = Literal["unresolved", "recorded"]
IssueReason = Literal["invalid_ref", "duplicate", "not_in_batch", "limit_exceeded", "not_adopted"]
RefKind = Literal["event", "raw", "block", "graph-node"]


@dataclass(frozen=True)
class EvidenceRef:
    """A parsed ref; ``target_id`` is the event, block or graph-node id it names."""

    kind: RefKind
    target_id: str
    message_id: str | None = None
    index: int | None = None
    level: int | None = None
    expanded: bool = False

    def __str__(self) -> str:
        tail = {
            "raw": f":{self.message_id}:{self.index}",
            "block": f":level:{self.level}",
            "graph-node": ":expanded" * self.expanded,
        }
        return f"{self.kind}:{self.target_id}{tail.get(self.kind, '')}"


_ID = r"([^:\s]+)"
_EVENT = re.compile(rf"event:{_ID}")
_RAW = re.compile(rf"raw:{_ID}:{_ID}:(\d+)")
_BLOCK = re.compile(rf"block:{_ID}:level:([0-5])")
_GRAPH = re.compile(rf"graph-node:{_ID}(:expanded)?")


def parse_ref(text: str) -> EvidenceRef | None:
    """The ref ``text`` names, or None when it has none of the four shapes."""
    if match := _EVENT.fullmatch(text):
        return EvidenceRef("event", match[1])
    if match := _RAW.fullmatch(text):
        return EvidenceRef("raw", match[1], message_id=match[2], index=int(match[3]))
    if match := _BLOCK.fullmatch(text):
        return EvidenceRef("block", match[1], level=int(match[2]))
    if match := _GRAPH.fullmatch(text):
        return EvidenceRef("graph-node", match[1], expanded=match[2] is not None)
    return None


def format_ref(ref: EvidenceRef) -> str:
    return str(ref)


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True)


class RefIssue(_Frozen):
    """One rejected input ref (``rejectedEvidenceRefs`` entry or a record-use issue)."""

    input_index: int
    ref: str
    reason: IssueReason
    detail: str


class Assessment(_Frozen):
    """A normalised assessment; ``evidence_refs`` are the accepted refs (≤ 8)."""

    batch_id: str
    verdict: Verdict
    evidence_refs: tuple[str, ...]
    rejected_evidence_refs: tuple[RefIssue, ...] = ()
    fit: str
    missing: str
    next_strategy: Strategy


class Batch(_Frozen):
    """The refs one retrieval exposed; ``sequence`` orders batches of a thread."""

    id: str
    sequence: int
    namespace: str
    thread_id: str
    tool: str
    evidence_refs: tuple[str, ...]
    titles: dict[str, str] = Field(default_factory=dict)
    status: BatchStatus = "unresolved"
    assessment: Assessment | None = None
    created_at: UtcDatetime

    @field_validator("evidence_refs")
    @classmethod
    def _well_formed(cls, refs: tuple[str, ...]) -> tuple[str, ...]:
        for ref in refs:
            if parse_ref(ref) is None:
                raise ValueError(f"malformed evidence ref {ref!r}")
        return tuple(dict.fromkeys(refs))
