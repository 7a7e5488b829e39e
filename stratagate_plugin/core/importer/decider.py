"""Deciding one import candidate against local memory (spec §11.3–11.4), pure.

The order is §11.4's: an exact duplicate (normalised title + summary) of a live event in
either pool, or of an earlier candidate of the same job, is IGNORE with confidence 1 and no
model; otherwise the Top-K local matches are scored by ``memory_remember``'s token
containment, and when one overlaps enough to be ambiguous (the same 0.35 bar) the decider —
``remember.rules.decider_task``, answered by the model or by the offline rule — proposes one
of the five actions. Its answer is settled here: an unknown action is IGNORE; a MERGE,
SUPERSEDE or CONFLICT naming no allowed target is IGNORE at 0.5; below 0.85 the user decides.
A MERGE's text is checked after any decider answers (``merge.py``): one that would drop
what a target says keeps both sides, so a merge never loses a detail.

``remember.rules.apply_decision`` is not used: it downgrades an unsure MERGE to a conflict,
which suits an agent writing alone; an import has a person to ask instead.
"""

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any, get_args

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, field_validator

from ..errors import InvalidInput
from ..llm.base import StructuredTask
from ..remember.rules import (
    AMBIGUOUS,
    MIN_CONFIDENCE,
    AgentCandidate,
    ExistingEvent,
    Match,
    decider_task,
    find_matches,
    offline_decide,
)
from ..text.search_terms import normalize
from .external_format import ExternalCandidate
from .jobs import (
    ACTIONS,
    ANALYSING,
    COMMITTABLE,
    TARGETED,
    Action,
    CommitPlan,
    Decision,
    ImportItem,
    ImportJob,
    MatchedEvent,
)
from .merge import loses, merged_text

TOP_K = 5
NO_TARGET = "the decider linked no existing memory among the allowed matches; safely ignored"
CHOSEN_NO_TARGET = "the chosen action has no existing memory to link; safely ignored"
DUPLICATE_EVENT = "exact duplicate of existing memory {event_id}"
DUPLICATE_ITEM = "exact duplicate of candidate {index} of this import"
UNCONFIRMED = "needs confirmation and none was given; ignored"
KEPT_BOTH = "; the merged text keeps every detail of both"


class MergedCandidate(BaseModel):
    """The decider's merged text for a MERGE (§11.2 ``mergedCandidate``), read leniently."""

    model_config = ConfigDict(extra="ignore")

    title: str = ""
    summary: str = ""


class ExternalDecision(BaseModel):
    """The decider's answer read leniently: an odd action or a missing field is settled by
    ``settle`` (unknown → IGNORE, confidence 0.5, reason cut to 500), never an error."""

    model_config = ConfigDict(extra="ignore")

    # the schema lists the actions, so a server that enforces schemas (json_schema, a
    # grammar) never lets a small model put a title there; the reading stays lenient
    action: str = Field(json_schema_extra={"enum": list(get_args(Action))})
    target_event_ids: list[str] = Field(default_factory=list)
    confidence: float = 0.5
    reason: str = ""
    merged_candidate: MergedCandidate | None = Field(
        default=None,
        validation_alias=AliasChoices("merged_candidate", "mergedCandidate"),
        description="MERGE only: one text keeping every detail of the memory and the targets",
    )

    @field_validator("merged_candidate", mode="before")
    @classmethod
    def _merged(cls, value: Any) -> Any:
        return value if isinstance(value, dict) else None

    @field_validator("confidence", mode="before")
    @classmethod
    def _number(cls, value: Any) -> float:
        try:
            return min(1.0, max(0.0, float(value)))
        except (TypeError, ValueError):
            return 0.5


def fingerprint(title: str, summary: str) -> str:
    """The exact-duplicate key: normalised title and summary."""
    return f"{normalize(title)}\x1f{normalize(summary)}"


def duplicate_of_item(
    candidate: ExternalCandidate, earlier: Sequence[ExternalCandidate]
) -> int | None:
    """The index of an earlier candidate of the job with the same text, if any."""
    key = fingerprint(candidate.title, candidate.summary)
    for index, other in enumerate(earlier):
        if fingerprint(other.title, other.summary) == key:
            return index
    return None


def first_of_each_text(candidates: Iterable[ExternalCandidate]) -> dict[str, int]:
    """Each text's fingerprint → the index of the first candidate with it: an item is a
    duplicate of an earlier one when its text's first index is lower (one pass, where
    comparing with every earlier item made a job's analysis quadratic)."""
    first: dict[str, int] = {}
    for index, candidate in enumerate(candidates):
        first.setdefault(fingerprint(candidate.title, candidate.summary), index)
    return first


def exact_duplicate(
    reason: str, target_ids: Sequence[str] = (), matches: Sequence[MatchedEvent] = ()
) -> Decision:
    return Decision(
        action="IGNORE",
        target_ids=list(target_ids),
        matches=list(matches),
        reason=reason,
        confidence=1.0,
        requires_confirmation=False,
        gate="exact-duplicate",
    )


def as_agent_candidate(candidate: ExternalCandidate, now: datetime) -> AgentCandidate:
    """The candidate in the shape ``memory_remember``'s decider and offline rule read."""
    return AgentCandidate(
        title=candidate.title[:160],
        summary=candidate.summary,
        category="preference" if candidate.category == "preference" else "fact",
        tags=tuple(candidate.tags),
        criticality="routine",
        memory_kind=candidate.memory_kind or "fact",
        event_type=candidate.temporal.event_type or "other",
        mentioned_at=now,
        thread_id="external-import",
    )


def score_matches(agent: AgentCandidate, found: Iterable[MatchedEvent]) -> list[Match]:
    """``memory_remember``'s token containment of each found event, best first."""
    existing = [ExistingEvent(id=e.id, title=e.title, summary=e.summary) for e in found]
    return find_matches(agent, existing)


def ambiguous(matches: Sequence[Match]) -> list[Match]:
    """The matches overlapping enough to need the decider (``memory_remember``'s bar)."""
    return [match for match in matches if match.containment >= AMBIGUOUS]


def clear_new(matches: Sequence[MatchedEvent], forced: bool) -> Decision:
    return Decision(
        action="ADD",
        matches=list(matches),
        reason="no overlapping memory",
        confidence=1.0,
        requires_confirmation=forced,
        gate="clear-new",
    )


def decision_task(
    agent: AgentCandidate, overlapping: Sequence[Match]
) -> StructuredTask[ExternalDecision]:
    """``memory_remember``'s decider task (the offline model answers it by the same rule),
    told that the memory comes from another AI's export, its answer an ``ExternalDecision``."""
    task = decider_task(agent, overlapping)
    return StructuredTask(task.name, ExternalDecision, IMPORT_DECIDER_INSTRUCTIONS, task.payload)


IMPORT_DECIDER_INSTRUCTIONS = (
    "Decide how one memory imported from another AI's export of what it knew about the user "
    "relates to this user's existing memories that overlap it. ADD: a distinct fact. MERGE: "
    "the same fact, restated or more complete (targets: the events it restates). SUPERSEDE: "
    "a newer version or correction of the targets. CONFLICT: it contradicts them and neither "
    "is clearly newer. IGNORE: already known or not worth keeping. Existing memories are never "
    "overwritten: a MERGE's merged_candidate.summary keeps every detail of both. Use only "
    "ids from `existing`; confidence in [0, 1]; a reason of at most 200 characters."
)


def offline_decision(agent: AgentCandidate, overlapping: Sequence[Match]) -> ExternalDecision:
    """The embedded offline rule (used when the model's call fails)."""
    return ExternalDecision.model_validate(offline_decide(agent, overlapping).model_dump())


def settle(
    answer: ExternalDecision,
    overlapping: Sequence[Match],
    matches: Sequence[MatchedEvent],
    *,
    forced: bool,
    gate: str = "decider",
    summary: str = "",
) -> Decision:
    """The decider's answer made safe: allowed targets only, unknown action → IGNORE, and a
    MERGE of ``summary`` (the candidate's) given a text that loses nothing."""
    allowed = [match.event_id for match in overlapping]
    targets = [i for i in dict.fromkeys(answer.target_event_ids) if i in allowed]
    action, reason = answer.action.strip().upper(), answer.reason.strip()[:500]
    confidence, merged = answer.confidence, None
    if action not in ACTIONS:
        action, reason = "IGNORE", f"unknown action {answer.action[:40]!r}; ignored"
    elif action in TARGETED and not targets:
        action, reason, confidence = "IGNORE", NO_TARGET, 0.5
    elif action not in TARGETED:
        targets = []
    elif action == "MERGE" and summary:
        merged, kept = _merged(answer, summary, overlapping, targets)
        reason = (reason or "merge")[: 500 - len(KEPT_BOTH)] + KEPT_BOTH if kept else reason
    return Decision(
        action=_action(action),
        target_ids=targets,
        matches=list(matches),
        reason=reason or action.lower(),
        confidence=confidence,
        requires_confirmation=forced or confidence < MIN_CONFIDENCE,
        gate="decider-error" if gate == "decider-error" else "decider",
        merged_summary=merged,
    )


def _merged(
    answer: ExternalDecision, summary: str, overlapping: Sequence[Match], targets: Sequence[str]
) -> tuple[str | None, bool]:
    """The MERGE's text when it is not the candidate's own, and whether it had to keep a
    target's words the proposal dropped."""
    local = [m.summary for m in overlapping if m.event_id in targets]
    proposed = answer.merged_candidate.summary if answer.merged_candidate else None
    text = merged_text(summary, local, proposed)
    kept = loses(proposed or summary, local)
    return (None if text == summary else text), kept


def _action(name: str) -> Action:
    for action in ACTIONS:
        if action == name:
            return action
    return "IGNORE"


class Final(BaseModel):
    """What a commit does with one item."""

    model_config = ConfigDict(frozen=True)

    index: int
    action: Action
    target_ids: tuple[str, ...] = ()
    reason: str


def final_actions(
    items: Sequence[ImportItem], choices: Mapping[int, Action], live: set[str]
) -> list[Final]:
    """Per item: the user's choice, else the decision when sure, else IGNORE (§11.4.4);
    a targeted action keeps only targets still live, and without one it is IGNORE."""
    return [_final(item, choices.get(item.index), live) for item in items]


def _final(item: ImportItem, choice: Action | None, live: set[str]) -> Final:
    if choice is None and (item.requires_confirmation or item.action is None):
        return Final(index=item.index, action="IGNORE", reason=UNCONFIRMED)
    action = choice or item.action or "IGNORE"
    reason = "chosen by the user" if choice else item.reason
    if action not in TARGETED:
        return Final(index=item.index, action=action, reason=reason)
    targets = item.target_ids or [m.id for m in item.matches[:1]]
    alive = tuple(t for t in targets if t in live)
    if not alive:
        return Final(index=item.index, action="IGNORE", reason=CHOSEN_NO_TARGET)
    return Final(index=item.index, action=action, target_ids=alive, reason=reason)


def checked_choices(choices: Mapping[Any, Any]) -> dict[int, Action]:
    chosen: dict[int, Action] = {}
    for index, action in choices.items():
        if isinstance(index, bool) or not isinstance(index, int):
            raise InvalidInput(f"a choice's index must be an integer, not {index!r}")
        found = next((a for a in ACTIONS if isinstance(action, str) and a == action.upper()), None)
        if found is None:
            raise InvalidInput(
                f"unknown action {action!r} for item {index}; one of {', '.join(ACTIONS)}"
            )
        chosen[index] = found
    return chosen


def check_committable(job: ImportJob, chosen: Mapping[int, Action]) -> None:
    if job.status in ANALYSING:
        raise InvalidInput(
            f"import {job.id} is still {job.status} ({job.processed}/{job.total}); "
            "commit it once the analysis is done"
        )
    if job.status == "committed":
        raise InvalidInput(f"import {job.id} was already committed as batch {job.batch_id}")
    if job.status not in COMMITTABLE:
        raise InvalidInput(f"import {job.id} is {job.status} and cannot be committed")
    known = {item.index for item in job.items}
    for index in chosen:
        if index not in known:
            raise InvalidInput(f"item {index} is not in import {job.id} ({len(known)} items)")


def with_proposals(
    job: ImportJob, chosen: Mapping[int, Action], take_proposals: bool
) -> dict[int, Action]:
    """The choices, and with ``take_proposals`` every unsure item's proposal."""
    taken = {
        item.index: item.action
        for item in job.items
        if take_proposals and item.requires_confirmation and item.action is not None
    }
    return {**chosen, **taken}


def commit_plan(
    job: ImportJob, every: Mapping[int, Action], live: set[str], chosen: Mapping[int, Action]
) -> CommitPlan:
    """What committing ``job`` with ``every`` choice would write and ignore; ``chosen`` are
    the person's own (an unsure item among them is not "left without a choice")."""
    finals = final_actions(job.items, every, live)
    ignored = [final.index for final in finals if final.action == "IGNORE"]
    unsure = {item.index for item in job.items if item.requires_confirmation}
    return CommitPlan(
        job_id=job.id,
        total=len(job.items),
        written=len(finals) - len(ignored),
        ignored=len(ignored),
        unsure_ignored=sum(1 for i in ignored if i in unsure and i not in chosen),
    )
