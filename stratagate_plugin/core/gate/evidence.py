"""Evidence gate (spec §7): the rules of batches, assessments, adoption plans and receipts.

Every explicit retrieval opens a ``Batch`` of the refs it exposed (the refs, batches and
assessments are records, ``records.py``). ``assess_batch`` normalises the agent's judgement
exactly as §7.1 says; ``plan_record_use`` decides which refs may be adopted and which
events that reinforces. A batch is ``unresolved`` until recorded; its latest assessment is
stored on it (overwritten by a new one), so "assessed" is ``assessment is not None``.

Façade order for ``memory_record_use``: ``select_batch`` → ``plan_record_use`` →
``receipt_payload`` → ``receipt_decision`` (a replay returns the stored result) →
``ensure_unresolved`` → apply ``plan.event_ids`` → ``mark_recorded``.
"""

import json
from collections.abc import Collection, Sequence
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, computed_field

from ..errors import InvalidInput, NotFound, ReceiptConflict, StrataGateError
from .records import (
    Assessment,
    Batch,
    IssueReason,
    RefIssue,
    Strategy,
    Verdict,
    parse_ref,
)

VERDICTS: tuple[Verdict, ...] = get_args(Verdict)
STRATEGIES: tuple[Strategy, ...] = get_args(Strategy)
MAX_EVIDENCE_REFS = 8
MAX_TEXT = 160
DEFAULT_MISSING = "Direct evidence required to answer the question is still missing."
_SEARCHES = ("search_events", "search_graph", "search_raw", "search_elements", "get_blocks")
_EXPANSIONS = ("expand_graph_node", "expand_block", "expand_event", "expand_element")
BATCH_TOOLS = frozenset(f"memory_{name}" for name in _SEARCHES + _EXPANSIONS)


class MemoryProtocolError(StrataGateError):
    """The agent broke the retrieval → assess → record protocol."""


class UnknownBatch(MemoryProtocolError, NotFound):
    """No batch by that id (or none at all) in this thread."""

    def __init__(self, batch_id: str | None, batches: Sequence[Batch]) -> None:
        self.batch_id = batch_id
        self.latest_batch_id = _latest(batches).id if batches else None
        self.unresolved_batch_ids = [b.id for b in batches if b.status == "unresolved"]
        self.available_batch_ids = [b.id for b in batches]
        super().__init__(
            f"Unknown batch {batch_id!r}. Latest batch: {self.latest_batch_id}; "
            f"unresolved: {_listing(self.unresolved_batch_ids)}; "
            f"available: {_listing(self.available_batch_ids)}."
            if batches
            else "No retrieval batch exists in this thread; run a memory search first."
        )


class BatchClosed(MemoryProtocolError):
    """The batch is already recorded; it can be neither assessed nor recorded again."""

    def __init__(self, batch_id: str) -> None:
        self.batch_id = batch_id
        super().__init__(f"Batch {batch_id} is already recorded; it cannot be used again.")


class RecordUseRejected(MemoryProtocolError, InvalidInput):
    """One or more refs may not be adopted; every issue is listed at once."""

    def __init__(self, batch: Batch, issues: Sequence[RefIssue]) -> None:
        self.batch_id = batch.id
        self.batch_status = batch.status
        self.issues = list(issues)
        self.available_refs = list(batch.evidence_refs)
        self.adopted_refs = list(adopted_refs(batch))
        problems = "; ".join(f"#{i.input_index} {i.ref!r}: {i.reason}" for i in issues)
        super().__init__(
            f"memory_record_use rejected for {batch.id} (status {batch.status}): {problems}. "
            f"Available refs: {_listing(self.available_refs)}. "
            f"Adopted refs: {_listing(self.adopted_refs)}. Record [] to adopt nothing."
        )


def _listing(items: Sequence[str]) -> str:
    return ", ".join(items) if items else "(none)"


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True)


class Citation(_Frozen):
    """An adopted ref as the audit row keeps it."""

    kind: Literal["event", "graph", "block"]
    id: str
    title: str
    evidence_ref: str
    batch_id: str
    level: int | None = None
    expanded: bool | None = None
    message_id: str | None = None

    @computed_field  # type: ignore[prop-decorator]
    @property
    def detail_kind(self) -> Literal["eventId", "nodeId", "blockId"]:
        return (
            "eventId" if self.kind == "event" else "nodeId" if self.kind == "graph" else "blockId"
        )


class RecordPlan(_Frozen):
    """What a valid ``memory_record_use`` call adopts, reinforces and cites."""

    batch_id: str
    evidence_refs: tuple[str, ...]
    duplicate_evidence_refs: tuple[str, ...]
    event_ids: tuple[str, ...]
    citations: tuple[Citation, ...]
    assessment: Assessment | None

    def audit(self, thread_id: str, turn: int) -> dict[str, Any]:
        """The audit row stored with the receipt (JSON-ready)."""
        judged = self.assessment.model_dump(include=_JUDGED) if self.assessment else {}
        return {key: judged.get(key) for key in _JUDGED} | {
            "thread_id": thread_id,
            "turn": turn,
            "batch_id": self.batch_id,
            "evidence_refs": list(self.evidence_refs),
            "citations": [c.model_dump(exclude_none=True) for c in self.citations],
        }


_JUDGED = {"verdict", "fit", "missing", "next_strategy"}


def _latest(batches: Sequence[Batch]) -> Batch:
    return max(batches, key=lambda b: b.sequence)


def select_batch(batches: Sequence[Batch], batch_id: str | None) -> Batch:
    """The named batch of this thread, or its latest one when ``batch_id`` is omitted."""
    if batch_id is None and batches:
        return _latest(batches)
    for batch in batches:
        if batch.id == batch_id:
            return batch
    raise UnknownBatch(batch_id, batches)


def ensure_unresolved(batch: Batch) -> None:
    if batch.status == "recorded":
        raise BatchClosed(batch.id)


def with_assessment(batch: Batch, assessment: Assessment) -> Batch:
    return batch.model_copy(update={"assessment": assessment})


def mark_recorded(batch: Batch) -> Batch:
    return batch.model_copy(update={"status": "recorded"})


def adopted_refs(batch: Batch) -> tuple[str, ...]:
    """Refs a record may adopt: those accepted by a *sufficient* assessment, else none."""
    judged = batch.assessment
    return judged.evidence_refs if judged and judged.verdict == "sufficient" else ()


def clip_text(value: object) -> str:
    """Trimmed, whitespace-collapsed, at most 160 characters; non-strings become ''."""
    return " ".join(value.split())[:MAX_TEXT] if isinstance(value, str) else ""


def _ref_text(value: object) -> str | None:
    return value.strip() or None if isinstance(value, str) else None


_DETAIL: dict[IssueReason, str] = {
    "invalid_ref": "not a non-empty string",
    "duplicate": "already listed",
    "not_in_batch": "not exposed by this batch",
    "limit_exceeded": f"at most {MAX_EVIDENCE_REFS} refs are accepted",
    "not_adopted": "not accepted by a sufficient assessment of this batch",
}


def _screen(
    batch: Batch, inputs: Sequence[object], adopted: Collection[str] | None
) -> tuple[list[str], list[RefIssue]]:
    """Accepted refs and issues in input order; ``adopted`` None skips the adoption check."""
    if isinstance(inputs, str) or not isinstance(inputs, Sequence):
        raise InvalidInput("evidence_refs must be a list of strings")
    accepted: list[str] = []
    issues: list[RefIssue] = []
    seen: set[str | None] = {None}
    for index, value in enumerate(inputs):
        ref = _ref_text(value)
        if reason := _reason(batch, ref, ref in seen, len(accepted), adopted):
            shown = value if isinstance(value, str) else repr(value)
            issues.append(
                RefIssue(input_index=index, ref=shown, reason=reason, detail=_DETAIL[reason])
            )
        else:
            accepted.append(str(ref))
        seen.add(ref)
    return accepted, issues


def _reason(
    batch: Batch, ref: str | None, seen: bool, count: int, adopted: Collection[str] | None
) -> IssueReason | None:
    if ref is None:
        return "invalid_ref"
    if seen:
        return "duplicate"
    if ref not in batch.evidence_refs:
        return "not_in_batch"
    if adopted is not None and ref not in adopted:
        return "not_adopted"
    return "limit_exceeded" if count >= MAX_EVIDENCE_REFS else None


def assess_batch(
    batch: Batch,
    verdict: object,
    evidence_refs: Sequence[object],
    fit: object,
    missing: object,
    next_strategy: object,
) -> Assessment:
    """§7.1: sufficient only with ≥ 1 accepted ref of this batch and strategy ``answer``."""
    ensure_unresolved(batch)
    accepted, rejected = _screen(batch, evidence_refs, adopted=None)
    requested = verdict if verdict in VERDICTS else "partial"
    strategy = next_strategy if next_strategy in STRATEGIES else "search_events"
    sufficient = requested == "sufficient" and bool(accepted) and strategy == "answer"
    final: Verdict = "sufficient" if sufficient else "wrong" if requested == "wrong" else "partial"
    if not sufficient and strategy == "answer":
        strategy = "search_events"
    return Assessment(
        batch_id=batch.id,
        verdict=final,
        evidence_refs=tuple(accepted),
        rejected_evidence_refs=tuple(rejected),
        fit=clip_text(fit),
        missing="" if sufficient else clip_text(missing) or DEFAULT_MISSING,
        next_strategy=strategy,
    )


def citation_for(batch: Batch, ref_text: str) -> Citation:
    """The audit citation of one ref exposed by ``batch`` (a raw ref cites its block)."""
    ref = parse_ref(ref_text)
    if ref is None:
        raise InvalidInput(f"malformed evidence ref {ref_text!r}")
    return Citation(
        kind="event" if ref.kind == "event" else "graph" if ref.kind == "graph-node" else "block",
        id=ref.target_id,
        title=batch.titles.get(ref_text, ""),
        evidence_ref=ref_text,
        batch_id=batch.id,
        level=ref.level,
        expanded=ref.expanded if ref.kind == "graph-node" else None,
        message_id=ref.message_id,
    )


def plan_record_use(batch: Batch, evidence_refs: Sequence[object]) -> RecordPlan:
    """Validate refs against the batch (status aside); only ``event:`` refs reinforce."""
    accepted, issues = _screen(batch, evidence_refs, adopted=adopted_refs(batch))
    if problems := [issue for issue in issues if issue.reason != "duplicate"]:
        raise RecordUseRejected(batch, problems)
    duplicates = dict.fromkeys(issue.ref.strip() for issue in issues)
    parsed = [parse_ref(ref) for ref in accepted]
    return RecordPlan(
        batch_id=batch.id,
        evidence_refs=tuple(accepted),
        duplicate_evidence_refs=tuple(duplicates),
        event_ids=tuple(ref.target_id for ref in parsed if ref and ref.kind == "event"),
        citations=tuple(citation_for(batch, ref) for ref in accepted),
        assessment=batch.assessment,
    )


def check_record_use(batch: Batch, evidence_refs: Sequence[object]) -> RecordPlan:
    """``plan_record_use`` for a batch that must still be unresolved."""
    ensure_unresolved(batch)
    return plan_record_use(batch, evidence_refs)


def receipt_payload(event_ids: Sequence[str], audit: dict[str, Any]) -> str:
    """Canonical JSON of what a receipt commits to: sorted unique event ids and the audit."""
    body = {"event_ids": sorted(set(event_ids)), "audit": audit}
    return json.dumps(body, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def receipt_decision(existing: str | None, new: str) -> Literal["new", "replay"]:
    """``new`` for an unseen receipt, ``replay`` for an identical one; else ReceiptConflict."""
    if existing is None:
        return "new"
    if existing == new or json.loads(existing) == json.loads(new):
        return "replay"
    raise ReceiptConflict("receipt id reused with different event ids or audit")
