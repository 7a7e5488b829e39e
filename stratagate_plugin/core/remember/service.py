"""``memory_remember`` over the store (spec §12.2): the three-phase gate with its lock discipline.

Phase 1 is a plain read (exact/near duplicates, clear news, ambiguous overlaps); phase 2
asks the decider outside any transaction, bounded by ``decider_timeout``; phase 3 is one
``RememberStorage.commit``: it re-checks duplicates on fresh data (``_Gate``, these rules)
and applies the outcome. An
overlap that appears only between phases 1 and 3 (a concurrent write) is marked as a
heuristic conflict rather than calling the decider while the write lock is held.

Candidates are the live events (both pools) sharing a content token with the new memory;
ambiguity is judged among the ``top_k`` of them by token containment.

Agent events live in the ``agent`` pool and are formed at the namespace's current turn.
They cite the user message of the turn the tool ran in, and only it: that turn is recorded
after its tools ran, so the event (and an event a duplicate reinforces or a merge extends)
waits in ``pending_citations`` and the turn's recording cites its user message in the same
transaction. Until a turn is recorded in the thread the event
cites nothing, and ``Remembered.provenance`` says ``pending``.
"""

import asyncio
from datetime import datetime
from typing import Literal, NamedTuple, get_args

from pydantic import BaseModel, ConfigDict

from ..clock import iso, to_utc, utc_now
from ..config import MemoryConfig
from ..errors import InvalidInput, require_names
from ..events.cards import MAX_TAGS, EventCard, clean_strings
from ..events.weights import card_weight, new_card
from ..llm.base import StructuredModel
from ..service_base import ServiceBase
from ..text.search_terms import normalize
from .rules import (
    SUMMARY_LIMIT,
    AgentCandidate,
    Category,
    ExistingEvent,
    FirstPhase,
    Gate,
    MemoryDecision,
    Outcome,
    OutcomeAction,
    apply_decision,
    build_agent_candidate,
    decider_task,
    decider_timeout,
    find_matches,
    first_phase,
)
from .storage import Applied, LiveEvent, Plan, RememberAsk, RememberStorage, SpaceDefaults

TOP_K = 5
CANDIDATE_LIMIT = 2000
CORE = MemoryConfig()


class _CoreDefaults(NamedTuple):
    """The settings a space first written by a memory gets without an engine's config."""

    block_turn_size: int
    block_decay_lambda: float


CORE_DEFAULTS = _CoreDefaults(CORE.block_turn_size, CORE.block_decay_lambda)

ProvenanceKind = Literal["pending"]
Decided = MemoryDecision | BaseException | None


class Provenance(BaseModel):
    """What the event cites: ``pending`` — the user message of this turn, once the turn is
    recorded in ``thread_id`` (nothing before; ``message_ids`` stays empty until then)."""

    model_config = ConfigDict(frozen=True)

    kind: ProvenanceKind
    thread_id: str
    source_block_id: str | None = None
    message_ids: tuple[str, ...] = ()


class Remembered(BaseModel):
    """``memory_remember``'s answer; ``event_id`` is the event written or merged into."""

    model_config = ConfigDict(frozen=True)

    recorded: bool
    action: OutcomeAction
    gate: Gate
    reason: str
    namespace: str
    event_id: str | None = None
    reinforced_event_id: str | None = None
    existing_event_ids: tuple[str, ...] = ()
    confidence: float | None = None
    downgraded_from: Literal["MERGE", "SUPERSEDE"] | None = None
    provenance: Provenance | None = None
    weight: float | None = None


class RememberService(ServiceBase):
    """``memory_remember`` on the façade: the engine's model decides, within its timeout."""

    @property
    def store(self) -> RememberStorage:
        return self.storage.remember

    async def save(
        self, space: str, thread_id: str, content: str, category: Category | None = None
    ) -> Remembered:
        """Duplicate → reinforce, ambiguous → decider, else add (agent pool)."""
        return await remember(
            self.store,
            self.model,
            space,
            thread_id,
            content,
            category,
            task_timeout_s=self.config.structured_task_timeout_s,
            defaults=self._defaults,
        )


async def remember(
    store: RememberStorage,
    model: StructuredModel | None,
    space: str,
    thread_id: str,
    content: str,
    category: Category | None = None,
    *,
    task_timeout_s: float = CORE.structured_task_timeout_s,
    top_k: int = TOP_K,
    defaults: SpaceDefaults = CORE_DEFAULTS,
    now: datetime | None = None,
) -> Remembered:
    """Record one agent memory; ``model`` None means no decider (ambiguity → conflict)."""
    _check_input(space, thread_id, content, category)
    candidate = build_agent_candidate(content, category, to_utc(now or utc_now()), thread_id)
    text = f"{candidate.title} {candidate.summary}"
    live = await store.live_events(space, text, CANDIDATE_LIMIT)
    first = first_phase(
        candidate, _shortlist(candidate, live, top_k), decider_available=model is not None
    )
    decision: Decided = None
    if first.needs_decider and model is not None:
        decision = await _decide(model, candidate, first, decider_timeout(task_timeout_s))
    gate = _Gate(space, candidate, first, decision, top_k)
    ambiguous = [m.event_id for m in first.ambiguous] if decision is not None else []
    ask = RememberAsk(space, thread_id, text, CANDIDATE_LIMIT, ambiguous)
    applied = await store.commit(ask, gate, defaults, iso(candidate.mentioned_at))
    assert gate.outcome is not None  # the commit asked the gate
    return _remembered(space, candidate, gate.outcome, applied)


def _check_input(space: str, thread_id: str, content: str, category: object) -> None:
    require_names(namespace=space, thread_id=thread_id)
    if not isinstance(content, str):
        raise InvalidInput("content must be a string")
    if category is not None and category not in get_args(Category):
        raise InvalidInput(f"category must be one of {', '.join(get_args(Category))}")


async def _decide(
    model: StructuredModel, candidate: AgentCandidate, first: FirstPhase, timeout_s: float
) -> MemoryDecision | BaseException:
    """Phase 2, outside any transaction: the decision, or the error/timeout it ended in."""
    try:
        return await asyncio.wait_for(
            model.complete(decider_task(candidate, first.ambiguous)), timeout_s
        )
    except TimeoutError:
        return TimeoutError(f"decider timed out after {timeout_s:g}s")
    except Exception as error:
        return error


# -- phases 1 and 3 ------------------------------------------------------------------------


def _shortlist(
    candidate: AgentCandidate, found: list[LiveEvent], top_k: int
) -> list[ExistingEvent]:
    """Exact duplicates plus the ``top_k`` live events by containment."""
    live = [ExistingEvent(id=e.id, title=e.title, summary=e.summary) for e in found]
    best = {match.event_id for match in find_matches(candidate, live)[: max(1, top_k)]}
    key = _text_key(candidate.title, candidate.summary)
    return [e for e in live if e.id in best or _text_key(e.title, e.summary) == key]


def _text_key(title: str, summary: str) -> tuple[str, str]:
    return normalize(title), normalize(summary)


class _Gate:
    """Phase 3's decisions on the fresh data the commit read (``RememberRules``): the
    re-check's own outcome without a decision, else the decision over live targets; the
    card an outcome writes; a merge's union. Keeps the outcome it gave."""

    def __init__(
        self,
        space: str,
        candidate: AgentCandidate,
        first: FirstPhase,
        decision: Decided,
        top_k: int,
    ) -> None:
        self.namespace, self.candidate, self.first = space, candidate, first
        self.decision, self.top_k = decision, top_k
        self.outcome: Outcome | None = None

    def plan(self, live: list[LiveEvent], still_live: set[str], turn: int) -> Plan:
        shortlist = _shortlist(self.candidate, live, self.top_k)
        recheck = first_phase(
            self.candidate, shortlist, decider_available=self.decision is not None
        )
        outcome = self.outcome = _final(self.first, recheck, self.decision, still_live)
        targets = outcome.target_event_ids
        if outcome.action in ("IGNORED", "REINFORCED", "MERGED"):
            return Plan(outcome.action, targets)
        card = _agent_card(self.candidate, self.namespace, turn, _links(outcome))
        return Plan(outcome.action, targets, card)

    def merged(self, target: EventCard) -> tuple[str, list[str]]:
        """Union the candidate's summary and tags into the target (reinforced once)."""
        summary = target.summary
        if normalize(self.candidate.summary) not in normalize(summary):
            summary = f"{summary} {self.candidate.summary}"[:SUMMARY_LIMIT]
        return summary, clean_strings([*target.tags, *self.candidate.tags], MAX_TAGS, 80)


def _final(
    first: FirstPhase, recheck: FirstPhase, decision: Decided, still_live: set[str]
) -> Outcome:
    """The re-check's own outcome without a decision; else the decision over live targets."""
    if decision is None:
        assert recheck.outcome is not None  # no decider → phase 1 always concludes
        return recheck.outcome
    ambiguous = [match for match in first.ambiguous if match.event_id in still_live]
    return apply_decision(decision, ambiguous, recheck)


# -- the answer ----------------------------------------------------------------------------


def _remembered(
    space: str, candidate: AgentCandidate, outcome: Outcome, applied: Applied
) -> Remembered:
    result = Remembered(
        recorded=outcome.action != "IGNORED",
        action=outcome.action,
        gate=outcome.gate,
        reason=outcome.reason,
        namespace=space,
        existing_event_ids=outcome.target_event_ids,
        confidence=outcome.confidence,
        downgraded_from=outcome.downgraded_from,
    )
    if outcome.action == "IGNORED":
        return result
    provenance = Provenance(kind="pending", thread_id=candidate.thread_id)
    result = result.model_copy(update={"provenance": provenance})
    if applied.event_id is None or applied.card is None:
        return result
    key = "reinforced_event_id" if outcome.action == "REINFORCED" else "event_id"
    weight = card_weight(applied.card, applied.turn)
    return result.model_copy(update={key: applied.event_id, "weight": weight})


def _links(outcome: Outcome) -> dict[str, list[str]]:
    targets = list(outcome.target_event_ids)
    if outcome.action == "SUPERSEDED":
        return {"supersedes_event_ids": targets}
    if outcome.action == "CONFLICT_MARKED" and targets:
        return {"conflicts_with_event_ids": targets}
    return {}


def _agent_card(
    candidate: AgentCandidate,
    space: str,
    turn: int,
    links: dict[str, list[str]],
) -> EventCard:
    temporal = {
        "mentioned_at": iso(candidate.mentioned_at),
        "thread_id": candidate.thread_id,
        "event_type": candidate.event_type,
        **links,
    }
    return new_card(
        namespace=space,
        pool="agent",
        title=candidate.title,
        summary=candidate.summary,
        tags=list(candidate.tags),
        source_block_id=None,
        source_message_ids=[],
        formed_turn=turn,
        temporal=temporal,
        scope=candidate.scope,
        criticality=candidate.criticality,
        created_at=candidate.mentioned_at,
    )
