"""``memory_remember`` rules (spec §12.2): the candidate, the three-phase gate, the decider.

Phase 1 (under the write lock) settles exact and near duplicates and clear news without a
model; ambiguous overlaps go to the decider (phase 2, outside the lock); phase 3 re-checks
duplicates under the lock and turns the decision into an ``Outcome``. Everything here is
pure: the façade supplies the live events, the search hits and the decider's answer.
"""

import re
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..errors import InvalidInput
from ..llm.base import StructuredTask
from ..llm.tasks import Criticality
from ..text.search_terms import normalize, tokenize

Category = Literal["preference", "decision", "correction", "fact"]
DecisionAction = Literal["ADD", "MERGE", "SUPERSEDE", "CONFLICT", "IGNORE"]
OutcomeAction = Literal["ADDED", "REINFORCED", "MERGED", "SUPERSEDED", "CONFLICT_MARKED", "IGNORED"]
Gate = Literal[
    "exact-duplicate",
    "near-duplicate",
    "clear-new",
    "heuristic-conflict",
    "decider",
    "decider-error",
]

DECIDE_AGENT_MEMORY = "decide_agent_memory"
NEAR_DUPLICATE = 0.85
AMBIGUOUS = 0.35
MIN_SHARED_TOKENS = 2
MIN_CONFIDENCE = 0.85
DECIDER_TIMEOUT_CAP_S = 30.0
TITLE_LIMIT = 80
SUMMARY_LIMIT = 2000
DEFAULT_TITLE = "Agent memory"
_SENTENCE_END = re.compile(r"[。．!！?？;\n]")
_EVENT_TYPES: dict[Category, str] = {"decision": "decision", "correction": "change"}
_MEMORY_KINDS: dict[Category, str] = {"preference": "preference", "decision": "event"}


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True)


class AgentCandidate(_Frozen):
    """The event ``memory_remember`` would write (temporal = mentioned_at + thread_id)."""

    title: str
    summary: str
    category: Category
    tags: tuple[str, ...]
    scope: Literal["user"] = "user"
    criticality: Criticality
    memory_kind: str
    event_type: str
    mentioned_at: datetime
    thread_id: str


class ExistingEvent(_Frozen):
    """A live event (either pool) the candidate is compared with."""

    id: str
    title: str
    summary: str


class Match(_Frozen):
    """An existing event overlapping the candidate, with its token containment."""

    event_id: str
    title: str
    summary: str
    containment: float


class Outcome(_Frozen):
    """The gate's result; ``target_event_ids`` are reinforced/merged/superseded/conflicted."""

    action: OutcomeAction
    gate: Gate
    reason: str
    target_event_ids: tuple[str, ...] = ()
    confidence: float | None = None
    downgraded_from: Literal["MERGE", "SUPERSEDE"] | None = None


class FirstPhase(_Frozen):
    """Phase 1: a final ``outcome`` without a model, or ambiguous matches for the decider."""

    outcome: Outcome | None
    ambiguous: tuple[Match, ...] = ()

    @property
    def needs_decider(self) -> bool:
        return self.outcome is None


class MemoryDecision(BaseModel):
    """The decider's structured answer about one candidate and its ambiguous matches."""

    model_config = ConfigDict(extra="forbid")

    action: DecisionAction
    target_event_ids: list[str] = Field(description="ids from the existing list only")
    confidence: float = Field(ge=0.0, le=1.0)
    reason: str = Field(max_length=500)


def event_tokens(title: str, summary: str) -> frozenset[str]:
    return frozenset(tokenize(title)) | frozenset(tokenize(summary))


def token_containment(a_tokens: Iterable[str], b_tokens: Iterable[str]) -> float:
    """Shared unique tokens / min(|A|, |B|); 0 with fewer than two shared tokens."""
    a, b = set(a_tokens), set(b_tokens)
    shared = len(a & b)
    return shared / min(len(a), len(b)) if shared >= MIN_SHARED_TOKENS else 0.0


def first_sentence(text: str) -> str:
    """Up to the first ``。．!！?？;`` or newline, collapsed, ≤ 80 characters."""
    for piece in _SENTENCE_END.split(text):
        if sentence := " ".join(piece.split()):
            return sentence[:TITLE_LIMIT]
    return DEFAULT_TITLE


def build_agent_candidate(
    content: str, category: Category | None, now: datetime, thread_id: str
) -> AgentCandidate:
    """The candidate event; an omitted category is ``fact``."""
    summary = " ".join(content.split())[:SUMMARY_LIMIT]
    if not summary:
        raise InvalidInput("memory_remember needs non-empty content")
    chosen: Category = category or "fact"
    return AgentCandidate(
        title=first_sentence(content),
        summary=summary,
        category=chosen,
        tags=("agent-recorded", f"category:{chosen}"),
        criticality="preference" if chosen == "preference" else "routine",
        memory_kind=_MEMORY_KINDS.get(chosen, "fact"),
        event_type=_EVENT_TYPES.get(chosen, "other"),
        mentioned_at=now,
        thread_id=thread_id,
    )


def _same_text(candidate: AgentCandidate, event: ExistingEvent) -> bool:
    same_title = normalize(candidate.title) == normalize(event.title)
    return same_title and normalize(candidate.summary) == normalize(event.summary)


def _reinforced(gate: Gate, event_id: str, reason: str) -> Outcome:
    return Outcome(action="REINFORCED", gate=gate, reason=reason, target_event_ids=(event_id,))


def find_matches(candidate: AgentCandidate, existing: Sequence[ExistingEvent]) -> list[Match]:
    """Existing events by descending containment (stable), zero-overlap ones left out."""
    tokens = event_tokens(candidate.title, candidate.summary)
    matches = [
        Match(event_id=e.id, title=e.title, summary=e.summary, containment=score)
        for e in existing
        if (score := token_containment(tokens, event_tokens(e.title, e.summary))) > 0
    ]
    return sorted(matches, key=lambda match: -match.containment)


def first_phase(
    candidate: AgentCandidate, existing: Sequence[ExistingEvent], *, decider_available: bool = True
) -> FirstPhase:
    """Phase 1 over live events and the Top-K search hits (also phase 3's re-check)."""
    for event in existing:
        if _same_text(candidate, event):
            return FirstPhase(outcome=_reinforced("exact-duplicate", event.id, "exact-duplicate"))
    matches = find_matches(candidate, existing)
    if repeat := _near_repeat(candidate, existing, matches):
        reason = f"token containment {repeat.containment:.2f}"
        return FirstPhase(outcome=_reinforced("near-duplicate", repeat.event_id, reason))
    ambiguous = tuple(match for match in matches if match.containment >= AMBIGUOUS)
    if not ambiguous:
        return FirstPhase(outcome=Outcome(action="ADDED", gate="clear-new", reason="clear-new"))
    if not decider_available:
        outcome = _conflict("heuristic-conflict", "heuristic-conflict", _ids(ambiguous))
        return FirstPhase(outcome=outcome, ambiguous=ambiguous)
    return FirstPhase(outcome=None, ambiguous=ambiguous)


def _near_repeat(
    candidate: AgentCandidate, existing: Sequence[ExistingEvent], matches: Sequence[Match]
) -> Match | None:
    """The best near-duplicate that the candidate only repeats: containment ≥ 0.85 and the
    candidate says almost nothing the event does not. A candidate that holds the event's
    words and adds its own ("opens at 11am on Saturdays, not 10am" over "opens at 10am on
    Saturdays") is a change or a detail, for the decider, never a repeat."""
    said = event_tokens(candidate.title, candidate.summary)
    texts = {event.id: event_tokens(event.title, event.summary) for event in existing}
    for match in matches:
        if match.containment < NEAR_DUPLICATE:
            return None
        if said and len(said & texts[match.event_id]) / len(said) >= NEAR_DUPLICATE:
            return match
    return None


def decider_timeout(structured_task_timeout_s: float) -> float:
    """The decider's bound: the structured-task timeout, at most 30 s."""
    return min(structured_task_timeout_s, DECIDER_TIMEOUT_CAP_S)


def _ids(matches: Sequence[Match]) -> tuple[str, ...]:
    return tuple(match.event_id for match in matches)


def _conflict(
    gate: Gate,
    reason: str,
    targets: tuple[str, ...],
    confidence: float | None = None,
    downgraded_from: Literal["MERGE", "SUPERSEDE"] | None = None,
) -> Outcome:
    return Outcome(
        action="CONFLICT_MARKED",
        gate=gate,
        reason=reason,
        target_event_ids=targets,
        confidence=confidence,
        downgraded_from=downgraded_from,
    )


_DECIDED: dict[DecisionAction, OutcomeAction] = {
    "ADD": "ADDED",
    "MERGE": "MERGED",
    "SUPERSEDE": "SUPERSEDED",
    "CONFLICT": "CONFLICT_MARKED",
    "IGNORE": "IGNORED",
}


def apply_decision(
    decision: MemoryDecision | BaseException,
    ambiguous: Sequence[Match],
    recheck: FirstPhase | None = None,
) -> Outcome:
    """Phase 3: a duplicate found by the re-check wins; targets must be ambiguous matches.

    Decider error or timeout → CONFLICT_MARKED (``decider-error``); MERGE/SUPERSEDE with no
    valid target or confidence < 0.85 → CONFLICT_MARKED with ``downgraded_from``.
    """
    if recheck and recheck.outcome and recheck.outcome.action == "REINFORCED":
        return recheck.outcome
    if isinstance(decision, BaseException):
        reason = str(decision) or type(decision).__name__
        return _conflict("decider-error", reason, _ids(ambiguous))
    return _decided(decision, _ids(ambiguous))


def _decided(decision: MemoryDecision, allowed: tuple[str, ...]) -> Outcome:
    targets = tuple(i for i in dict.fromkeys(decision.target_event_ids) if i in allowed)
    reason, confidence = decision.reason or decision.action.lower(), decision.confidence
    match decision.action:
        case "MERGE" | "SUPERSEDE" as action if not targets or confidence < MIN_CONFIDENCE:
            return _conflict("decider", reason, targets or allowed, confidence, action)
        case "CONFLICT":
            return _conflict("decider", reason, targets or allowed, confidence)
        case "ADD" | "IGNORE":
            targets = ()
    return Outcome(
        action=_DECIDED[decision.action],
        gate="decider",
        reason=reason,
        target_event_ids=targets,
        confidence=confidence,
    )


DECIDER_INSTRUCTIONS = (
    "Decide how a new agent-recorded memory relates to existing memories that overlap it. "
    "ADD: a distinct fact. MERGE: the same fact, restated or refined (targets: the events it "
    "restates). SUPERSEDE: it explicitly replaces or corrects the targets. CONFLICT: it "
    "contradicts them without an established replacement. IGNORE: nothing worth keeping. "
    "Use only ids from `existing`; confidence in [0, 1]; a short reason."
)


def decider_task(
    candidate: AgentCandidate, ambiguous: Sequence[Match]
) -> StructuredTask[MemoryDecision]:
    """The structured model task of phase 2."""
    payload = {
        "candidate": candidate.model_dump(include={"title", "summary", "category"}),
        "existing": [match.model_dump() for match in ambiguous],
    }
    return StructuredTask(DECIDE_AGENT_MEMORY, MemoryDecision, DECIDER_INSTRUCTIONS, payload)


# The offline decider: a deterministic rule over the best (highest-containment) match.
#   no match                                   → ADD, confidence 1
#   change cue in the candidate only, c ≥ 0.6  → SUPERSEDE best, confidence min(1, c + 0.25)
#   change cue, or negation polarity differs   → CONFLICT best (same confidence)
#   c ≥ 0.6 (same polarity, no cue)            → MERGE best (same confidence)
#   otherwise (related but distinct)           → ADD, confidence 1 − c
# c + 0.25 reaches the 0.85 bar exactly at c = 0.6, so weaker overlaps never replace anything.
_CHANGE_CUE = re.compile(
    r"\b(no longer|not anymore|anymore|instead|now|nowadays|from now on|switched|changed)\b"
    r"|不再|改为|改成|换成|改用|现在|如今"
)
_NEGATION = re.compile(r"\b(not|never|no|cannot)\b|n['’]t\b|[不没]")
STRONG_OVERLAP = 0.6
_CONFIDENCE_BONUS = 0.25


def offline_decide(candidate: AgentCandidate, ambiguous: Sequence[Match]) -> MemoryDecision:
    """The deterministic decider used with the offline model (rule table above)."""
    return _offline_rule(f"{candidate.title} {candidate.summary}", ambiguous)


def offline_decide_payload(payload: dict[str, Any]) -> MemoryDecision:
    """``offline_decide`` over a ``decider_task`` payload (for the offline model)."""
    text = f"{payload['candidate']['title']} {payload['candidate']['summary']}"
    return _offline_rule(text, [Match.model_validate(item) for item in payload["existing"]])


def _offline_rule(text: str, ambiguous: Sequence[Match]) -> MemoryDecision:
    if not ambiguous:
        return MemoryDecision(action="ADD", target_event_ids=[], confidence=1.0, reason="new")
    best = max(ambiguous, key=lambda match: match.containment)
    other = f"{best.title} {best.summary}"
    cue = _has(_CHANGE_CUE, text) and not _has(_CHANGE_CUE, other)
    flipped = _has(_NEGATION, text) != _has(_NEGATION, other)
    strong = best.containment >= STRONG_OVERLAP
    confidence = round(min(1.0, best.containment + _CONFIDENCE_BONUS), 4)
    if cue and strong:
        return _offline("SUPERSEDE", best, confidence, "change cue over a strong overlap")
    if cue or flipped:
        return _offline("CONFLICT", best, confidence, "change or negation without replacement")
    if strong:
        return _offline("MERGE", best, confidence, "same statement restated")
    return MemoryDecision(
        action="ADD",
        target_event_ids=[],
        confidence=round(1 - best.containment, 4),
        reason="related but distinct",
    )


def _has(pattern: re.Pattern[str], text: str) -> bool:
    return pattern.search(normalize(text)) is not None


def _offline(action: DecisionAction, best: Match, confidence: float, why: str) -> MemoryDecision:
    return MemoryDecision(
        action=action, target_event_ids=[best.event_id], confidence=confidence, reason=why
    )
