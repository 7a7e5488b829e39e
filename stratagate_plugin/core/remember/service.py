"""``memory_remember`` over the store (spec §12.2): the three-phase gate with its lock discipline.

Phase 1 is a plain read (exact/near duplicates, clear news, ambiguous overlaps); phase 2
asks the decider outside any transaction, bounded by ``decider_timeout``; phase 3 runs in
one ``Database.write``, re-checks duplicates on fresh data and applies the outcome. An
overlap that appears only between phases 1 and 3 (a concurrent write) is marked as a
heuristic conflict rather than calling the decider while the write lock is held.

Candidates are the live events (both pools) sharing a content token with the new memory;
ambiguity is judged among the ``top_k`` of them by token containment.

Agent events live in the ``agent`` pool and are formed at the namespace's current turn.
They cite the user message of the turn the tool ran in, and only it: that turn is recorded
after its tools ran, so the event (and an event a duplicate reinforces or a merge extends)
waits in ``pending_citations`` and the turn's recording cites its user message in the same
transaction (``store.provenance_rows``). Until a turn is recorded in the thread the event
cites nothing, and ``Remembered.provenance`` says ``pending``.
"""

import asyncio
import sqlite3
from collections.abc import Sequence
from datetime import datetime
from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict

from ..clock import iso, to_utc, utc_now
from ..config import MemoryConfig
from ..errors import InvalidInput, require_names
from ..events.cards import MAX_TAGS, EventCard, clean_strings
from ..events.weights import card_weight, new_card
from ..llm.base import StructuredModel
from ..service_base import ServiceBase
from ..store import Database, event_rows, graph_jobs
from ..store import gate_rows as rows
from ..store.provenance_rows import add_pending_citation
from ..store.turns import NamespaceDefaults, ensure_namespace
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

TOP_K = 5
CANDIDATE_LIMIT = 2000
CORE = MemoryConfig()
CORE_DEFAULTS = NamespaceDefaults(CORE.block_turn_size, CORE.block_decay_lambda)
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

    async def save(
        self, namespace: str, thread_id: str, content: str, category: Category | None = None
    ) -> Remembered:
        """Duplicate → reinforce, ambiguous → decider, else add (agent pool)."""
        return await remember(
            self.db,
            self.model,
            namespace,
            thread_id,
            content,
            category,
            task_timeout_s=self.config.structured_task_timeout_s,
            defaults=self._defaults,
        )


async def remember(
    db: Database,
    model: StructuredModel | None,
    namespace: str,
    thread_id: str,
    content: str,
    category: Category | None = None,
    *,
    task_timeout_s: float = CORE.structured_task_timeout_s,
    top_k: int = TOP_K,
    defaults: NamespaceDefaults = CORE_DEFAULTS,
    now: datetime | None = None,
) -> Remembered:
    """Record one agent memory; ``model`` None means no decider (ambiguity → conflict)."""
    _check_input(namespace, thread_id, content, category)
    candidate = build_agent_candidate(content, category, to_utc(now or utc_now()), thread_id)
    first = await db.read(lambda raw: _phase(raw, namespace, candidate, top_k, model is not None))
    decision: Decided = None
    if first.needs_decider and model is not None:
        decision = await _decide(model, candidate, first, decider_timeout(task_timeout_s))

    def commit(raw: sqlite3.Connection) -> Remembered:
        recheck = _phase(raw, namespace, candidate, top_k, decision is not None)
        outcome = _final(raw, first, recheck, decision)
        ensure_namespace(raw, namespace, defaults, iso(candidate.mentioned_at))
        return _apply(raw, namespace, candidate, outcome)

    return await db.write(commit)


def _check_input(namespace: str, thread_id: str, content: str, category: object) -> None:
    require_names(namespace=namespace, thread_id=thread_id)
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


def _phase(
    raw: sqlite3.Connection, namespace: str, candidate: AgentCandidate, top_k: int, decider: bool
) -> FirstPhase:
    return first_phase(
        candidate, _shortlist(raw, namespace, candidate, top_k), decider_available=decider
    )


def _shortlist(
    raw: sqlite3.Connection, namespace: str, candidate: AgentCandidate, top_k: int
) -> list[ExistingEvent]:
    """Exact duplicates plus the ``top_k`` live events by containment."""
    live = _live_events(raw, namespace, candidate)
    best = {match.event_id for match in find_matches(candidate, live)[: max(1, top_k)]}
    key = _text_key(candidate.title, candidate.summary)
    return [e for e in live if e.id in best or _text_key(e.title, e.summary) == key]


def _live_events(
    raw: sqlite3.Connection, namespace: str, candidate: AgentCandidate
) -> list[ExistingEvent]:
    text = f"{candidate.title} {candidate.summary}"
    found = event_rows.sharing_a_token(raw, namespace, text, CANDIDATE_LIMIT)
    return [ExistingEvent(id=r["id"], title=r["title"], summary=r["summary"]) for r in found]


def _text_key(title: str, summary: str) -> tuple[str, str]:
    return normalize(title), normalize(summary)


def _final(
    raw: sqlite3.Connection, first: FirstPhase, recheck: FirstPhase, decision: Decided
) -> Outcome:
    """The re-check's own outcome without a decision; else the decision over live targets."""
    if decision is None:
        assert recheck.outcome is not None  # no decider → phase 1 always concludes
        return recheck.outcome
    live = event_rows.live_event_ids(raw, (m.event_id for m in first.ambiguous))
    ambiguous = [match for match in first.ambiguous if match.event_id in live]
    return apply_decision(decision, ambiguous, recheck)


# -- applying an outcome -------------------------------------------------------------------


def _apply(
    raw: sqlite3.Connection, namespace: str, candidate: AgentCandidate, outcome: Outcome
) -> Remembered:
    turn, now = rows.current_turn(raw, namespace), iso(candidate.mentioned_at)
    targets = outcome.target_event_ids
    result = _result(namespace, outcome)
    if outcome.action == "IGNORED":
        return result
    provenance = Provenance(kind="pending", thread_id=candidate.thread_id)
    result = result.model_copy(update={"provenance": provenance})
    if outcome.action == "REINFORCED":
        done = rows.reinforce_events(raw, namespace, targets, turn, now)
        _cite_this_turn(raw, namespace, candidate, done[:1], now)
        return _weighed(raw, result, done[0] if done else None, turn, reinforced=True)
    if outcome.action == "MERGED":
        for target in targets:
            _merge(raw, target, candidate, turn, now)
        _cite_this_turn(raw, namespace, candidate, targets, now)
        graph_jobs.queue_events(raw, namespace, targets, graph_jobs.AGENT_PRIORITY, now)
        return _weighed(raw, result, targets[0], turn)
    card = _agent_card(candidate, namespace, turn, _links(outcome))
    event_rows.insert_event(raw, card)
    _cite_this_turn(raw, namespace, candidate, [card.id], now)
    graph_jobs.queue_events(raw, namespace, [card.id], graph_jobs.AGENT_PRIORITY, now)
    return _weighed(raw, result, card.id, turn)


def _cite_this_turn(
    raw: sqlite3.Connection,
    namespace: str,
    candidate: AgentCandidate,
    event_ids: Sequence[str],
    now: str,
) -> None:
    """The events will cite the user message of the turn being run, once it is recorded."""
    for event_id in event_ids:
        add_pending_citation(raw, namespace, candidate.thread_id, event_id, now)


def _result(namespace: str, outcome: Outcome) -> Remembered:
    return Remembered(
        recorded=outcome.action != "IGNORED",
        action=outcome.action,
        gate=outcome.gate,
        reason=outcome.reason,
        namespace=namespace,
        existing_event_ids=outcome.target_event_ids,
        confidence=outcome.confidence,
        downgraded_from=outcome.downgraded_from,
    )


def _weighed(
    raw: sqlite3.Connection,
    result: Remembered,
    event_id: str | None,
    turn: int,
    *,
    reinforced: bool = False,
) -> Remembered:
    if event_id is None:
        return result
    weight = card_weight(event_rows.get_event(raw, event_id), turn)
    key = "reinforced_event_id" if reinforced else "event_id"
    return result.model_copy(update={key: event_id, "weight": weight})


def _links(outcome: Outcome) -> dict[str, list[str]]:
    targets = list(outcome.target_event_ids)
    if outcome.action == "SUPERSEDED":
        return {"supersedes_event_ids": targets}
    if outcome.action == "CONFLICT_MARKED" and targets:
        return {"conflicts_with_event_ids": targets}
    return {}


def _merge(
    raw: sqlite3.Connection, event_id: str, candidate: AgentCandidate, turn: int, now: str
) -> None:
    """Union the candidate's summary and tags into the target, reinforcing it once."""
    target = event_rows.get_event(raw, event_id)
    summary = target.summary
    if normalize(candidate.summary) not in normalize(summary):
        summary = f"{summary} {candidate.summary}"[:SUMMARY_LIMIT]
    tags = clean_strings([*target.tags, *candidate.tags], MAX_TAGS, 80)
    rows.merge_into(raw, event_id, summary, tags, turn, now)


def _agent_card(
    candidate: AgentCandidate,
    namespace: str,
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
        namespace=namespace,
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
