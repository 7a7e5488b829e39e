"""memory_remember (spec §12.2): candidate, three-phase gate, decisions, offline decider."""

from datetime import UTC, datetime
from typing import Any

import pytest
from pydantic import ValidationError

from stratagate_plugin.core.errors import InvalidInput
from stratagate_plugin.core.llm.base import ModelOutputError, ModelTimeoutError, ScriptedModel
from stratagate_plugin.core.remember.rules import (
    DECIDE_AGENT_MEMORY,
    AgentCandidate,
    ExistingEvent,
    FirstPhase,
    Match,
    MemoryDecision,
    Outcome,
    apply_decision,
    build_agent_candidate,
    decider_task,
    decider_timeout,
    first_phase,
    first_sentence,
    offline_decide,
    offline_decide_payload,
    token_containment,
)

NOW = datetime(2024, 5, 1, 12, tzinfo=UTC)


def candidate(content: str, category: Any = "fact") -> AgentCandidate:
    return build_agent_candidate(content, category, NOW, "thread-1")


def words(prefix: str, count: int) -> str:
    return " ".join(f"{prefix}{i}" for i in range(count))


def event(event_id: str, text: str, title: str | None = None) -> ExistingEvent:
    return ExistingEvent(id=event_id, title=text if title is None else title, summary=text)


def match(event_id: str, containment: float, text: str = "User prefers tea") -> Match:
    return Match(event_id=event_id, title=text, summary=text, containment=containment)


def decision(action: str, targets: list[str], confidence: float, reason: str = "") -> Any:
    return MemoryDecision.model_validate(
        {"action": action, "target_event_ids": targets, "confidence": confidence, "reason": reason}
    )


# -- containment and candidate --------------------------------------------------------


@pytest.mark.parametrize(
    ("a", "b", "value"),
    [
        (["x", "y"], ["x", "y"], 1.0),
        (["x", "y", "z", "w"], ["x", "y"], 1.0),
        (["x", "y", "z", "w"], ["x", "y", "q", "r", "s"], 0.5),
        (["x", "y", "y", "x"], ["x", "y", "q"], 1.0),
        (["x", "z"], ["x", "y"], 0.0),
        (["x"], ["x"], 0.0),
        ([], ["x", "y"], 0.0),
        ([], [], 0.0),
    ],
)
def test_token_containment(a: list[str], b: list[str], value: float) -> None:
    assert token_containment(a, b) == pytest.approx(value)
    assert token_containment(b, a) == pytest.approx(value)


@pytest.mark.parametrize(
    ("content", "title"),
    [
        ("User likes tea. And coffee", "User likes tea. And coffee"),
        ("我喜欢茶。也喜欢咖啡", "我喜欢茶"),
        ("Use pnpm!Not npm", "Use pnpm"),
        ("Really？Yes", "Really"),
        ("a；b; c", "a；b"),
        ("first line\nsecond line", "first line"),
        ("  \n  spaced   out  ", "spaced out"),
        ("!?;", "Agent memory"),
        ("x" * 100, "x" * 80),
    ],
)
def test_first_sentence(content: str, title: str) -> None:
    assert first_sentence(content) == title


@pytest.mark.parametrize(
    ("category", "criticality", "kind", "event_type"),
    [
        ("preference", "preference", "preference", "other"),
        ("decision", "routine", "event", "decision"),
        ("correction", "routine", "fact", "change"),
        ("fact", "routine", "fact", "other"),
        (None, "routine", "fact", "other"),
    ],
)
def test_build_agent_candidate_by_category(
    category: Any, criticality: str, kind: str, event_type: str
) -> None:
    made = candidate("  The user\tprefers  dark mode.\nAlways. ", category)
    chosen = category or "fact"
    assert made.title == "The user prefers dark mode."
    assert made.summary == "The user prefers dark mode. Always."
    assert made.tags == ("agent-recorded", f"category:{chosen}")
    assert (made.criticality, made.memory_kind, made.event_type) == (criticality, kind, event_type)
    assert (made.scope, made.mentioned_at, made.thread_id) == ("user", NOW, "thread-1")


def test_build_agent_candidate_caps_summary() -> None:
    assert len(candidate("word " * 1000).summary) == 2000


@pytest.mark.parametrize("content", ["", "   \n\t "])
def test_build_agent_candidate_needs_content(content: str) -> None:
    with pytest.raises(InvalidInput):
        candidate(content)


# -- phase 1 --------------------------------------------------------------------------

BASE = words("w", 20)


@pytest.mark.parametrize(
    ("existing", "action", "gate", "targets"),
    [
        ([event("e1", BASE)], "REINFORCED", "exact-duplicate", ("e1",)),
        ([event("e1", BASE.upper().replace(" ", "  "))], "REINFORCED", "exact-duplicate", ("e1",)),
        ([event("e1", BASE, title="Other title")], "REINFORCED", "near-duplicate", ("e1",)),
        (
            [event("e1", words("w", 17) + " " + words("z", 3))],
            "REINFORCED",
            "near-duplicate",
            ("e1",),
        ),
        (
            [event("e1", words("w", 17) + " z0 z1 z2"), event("e2", words("w", 19) + " z0")],
            "REINFORCED",
            "near-duplicate",
            ("e2",),
        ),
        ([event("e1", words("z", 20))], "ADDED", "clear-new", ()),
        ([event("e1", "w0 " + words("z", 19))], "ADDED", "clear-new", ()),
        ([event("e1", words("w", 6) + " " + words("z", 14))], "ADDED", "clear-new", ()),
        ([], "ADDED", "clear-new", ()),
    ],
)
def test_first_phase_settles_without_a_model(
    existing: list[ExistingEvent], action: str, gate: str, targets: tuple[str, ...]
) -> None:
    phase = first_phase(candidate(BASE), existing)
    assert phase.outcome is not None and not phase.needs_decider
    assert (phase.outcome.action, phase.outcome.gate) == (action, gate)
    assert phase.outcome.target_event_ids == targets


def test_a_candidate_that_says_more_than_the_event_is_not_a_repeat() -> None:
    """Containment is 1.0 (the event's 9 words are all in it), but 11 of the candidate's
    20 words are its own: a detail or a change, for the decider, never a reinforcement."""
    phase = first_phase(candidate(BASE), [event("e1", words("w", 9))])
    assert phase.needs_decider and [m.event_id for m in phase.ambiguous] == ["e1"]
    shorter = first_phase(candidate(words("w", 9)), [event("e1", BASE)])
    assert shorter.outcome is not None and shorter.outcome.gate == "near-duplicate"


AMBIGUOUS_EVENTS = [
    event("low", words("w", 7) + " " + words("z", 13)),
    event("none", words("z", 20)),
    event("high", words("w", 16) + " " + words("z", 4)),
]


def test_first_phase_ambiguous_matches_go_to_the_decider() -> None:
    phase = first_phase(candidate(BASE), AMBIGUOUS_EVENTS)
    assert phase.needs_decider and phase.outcome is None
    assert [(m.event_id, m.containment) for m in phase.ambiguous] == [("high", 0.8), ("low", 0.35)]


def test_first_phase_without_decider_marks_a_heuristic_conflict() -> None:
    phase = first_phase(candidate(BASE), AMBIGUOUS_EVENTS, decider_available=False)
    assert phase.outcome == Outcome(
        action="CONFLICT_MARKED",
        gate="heuristic-conflict",
        reason="heuristic-conflict",
        target_event_ids=("high", "low"),
    )


def test_first_phase_works_on_han_text() -> None:
    existing = [event("e1", "用户喜欢在早上喝绿茶")]
    assert first_phase(candidate("用户喜欢在早上喝绿茶"), existing).outcome is not None
    phase = first_phase(candidate("用户喜欢在晚上喝红酒和绿茶"), existing)
    assert phase.needs_decider and phase.ambiguous[0].event_id == "e1"


# -- phase 3 --------------------------------------------------------------------------

MATCHES = [match("e1", 0.7), match("e2", 0.4)]


@pytest.mark.parametrize(
    ("given", "action", "targets", "downgraded_from"),
    [
        (decision("IGNORE", ["e1"], 0.9), "IGNORED", (), None),
        (decision("ADD", ["e1"], 0.2), "ADDED", (), None),
        (decision("MERGE", ["e1"], 0.9), "MERGED", ("e1",), None),
        (decision("MERGE", ["e1", "e1"], 0.85), "MERGED", ("e1",), None),
        (decision("MERGE", ["e1"], 0.84), "CONFLICT_MARKED", ("e1",), "MERGE"),
        (decision("MERGE", [], 0.99), "CONFLICT_MARKED", ("e1", "e2"), "MERGE"),
        (decision("SUPERSEDE", ["e2", "e1"], 0.95), "SUPERSEDED", ("e2", "e1"), None),
        (decision("SUPERSEDE", ["elsewhere"], 0.95), "CONFLICT_MARKED", ("e1", "e2"), "SUPERSEDE"),
        (decision("SUPERSEDE", ["e2", "ghost"], 0.5), "CONFLICT_MARKED", ("e2",), "SUPERSEDE"),
        (decision("CONFLICT", ["e2"], 0.3), "CONFLICT_MARKED", ("e2",), None),
        (decision("CONFLICT", [], 0.3), "CONFLICT_MARKED", ("e1", "e2"), None),
    ],
)
def test_apply_decision_maps_actions(
    given: MemoryDecision, action: str, targets: tuple[str, ...], downgraded_from: str | None
) -> None:
    outcome = apply_decision(given, MATCHES)
    assert (outcome.action, outcome.gate) == (action, "decider")
    assert outcome.target_event_ids == targets
    assert outcome.downgraded_from == downgraded_from
    assert outcome.confidence == given.confidence


@pytest.mark.parametrize(
    ("error", "reason"),
    [
        (ModelTimeoutError("decider timed out after 30 s"), "decider timed out after 30 s"),
        (TimeoutError(), "TimeoutError"),
        (ModelOutputError("invalid output"), "invalid output"),
    ],
)
def test_apply_decision_decider_error_or_timeout_marks_conflict(
    error: BaseException, reason: str
) -> None:
    outcome = apply_decision(error, MATCHES)
    assert (outcome.action, outcome.gate, outcome.reason) == (
        "CONFLICT_MARKED",
        "decider-error",
        reason,
    )
    assert outcome.target_event_ids == ("e1", "e2")


def test_apply_decision_recheck_duplicate_wins() -> None:
    recheck = first_phase(candidate(BASE), [event("late", BASE)])
    outcome = apply_decision(decision("ADD", [], 1.0), MATCHES, recheck)
    assert (outcome.action, outcome.target_event_ids) == ("REINFORCED", ("late",))


def test_apply_decision_recheck_without_duplicate_keeps_the_decision() -> None:
    recheck = FirstPhase(outcome=None, ambiguous=tuple(MATCHES))
    assert apply_decision(decision("MERGE", ["e1"], 0.9), MATCHES, recheck).action == "MERGED"
    assert apply_decision(TimeoutError(), MATCHES, recheck).gate == "decider-error"


def test_apply_decision_default_reason_names_the_action() -> None:
    assert apply_decision(decision("ADD", [], 1.0), MATCHES).reason == "add"
    assert apply_decision(decision("ADD", [], 1.0, "distinct"), MATCHES).reason == "distinct"


# -- the decider schema and task ------------------------------------------------------


@pytest.mark.parametrize(
    "payload",
    [
        {"action": "ADD", "target_event_ids": [], "confidence": 1.5, "reason": ""},
        {"action": "ADD", "target_event_ids": [], "confidence": -0.1, "reason": ""},
        {"action": "DROP", "target_event_ids": [], "confidence": 0.5, "reason": ""},
        {"action": "ADD", "target_event_ids": [], "confidence": 0.5, "reason": "", "x": 1},
        {"action": "ADD", "confidence": 0.5, "reason": ""},
    ],
)
def test_memory_decision_schema_is_strict(payload: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        MemoryDecision.model_validate(payload)


def test_decider_task_carries_candidate_and_matches() -> None:
    task = decider_task(candidate("User now prefers coffee"), MATCHES)
    assert (task.name, task.output_type) == (DECIDE_AGENT_MEMORY, MemoryDecision)
    assert task.payload["candidate"] == {
        "title": "User now prefers coffee",
        "summary": "User now prefers coffee",
        "category": "fact",
    }
    assert [item["event_id"] for item in task.payload["existing"]] == ["e1", "e2"]
    schema = task.json_schema()
    assert set(schema["required"]) == {"action", "target_event_ids", "confidence", "reason"}


async def test_decider_task_runs_through_a_structured_model() -> None:
    task = decider_task(candidate("User now prefers coffee"), MATCHES)
    model = ScriptedModel.of(
        [{"action": "SUPERSEDE", "target_event_ids": ["e1"], "confidence": 0.9, "reason": "r"}]
    )
    answer = await model.complete(task)
    assert apply_decision(answer, MATCHES).action == "SUPERSEDED"


@pytest.mark.parametrize(("configured", "bound"), [(5.0, 5.0), (30.0, 30.0), (120.0, 30.0)])
def test_decider_timeout_is_capped(configured: float, bound: float) -> None:
    assert decider_timeout(configured) == bound


# -- offline decider ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "matches", "action", "targets", "confidence", "outcome"),
    [
        ("User prefers coffee", [], "ADD", [], 1.0, "ADDED"),
        ("User no longer prefers tea", [match("e1", 0.7)], "SUPERSEDE", ["e1"], 0.95, "SUPERSEDED"),
        ("User now prefers coffee", [match("e1", 0.6)], "SUPERSEDE", ["e1"], 0.85, "SUPERSEDED"),
        ("用户不再喝茶", [match("e1", 0.8, "用户喝茶")], "SUPERSEDE", ["e1"], 1.0, "SUPERSEDED"),
        ("部署改为周五", [match("e1", 0.65, "部署在周四")], "SUPERSEDE", ["e1"], 0.9, "SUPERSEDED"),
        (
            "User now prefers coffee",
            [match("e1", 0.5)],
            "CONFLICT",
            ["e1"],
            0.75,
            "CONFLICT_MARKED",
        ),
        ("User does not like tea", [match("e1", 0.7)], "CONFLICT", ["e1"], 0.95, "CONFLICT_MARKED"),
        (
            "User now prefers tea",
            [match("e1", 0.7, "User now prefers tea daily")],
            "MERGE",
            ["e1"],
            0.95,
            "MERGED",
        ),
        (
            "User prefers green tea",
            [match("e2", 0.4), match("e1", 0.7)],
            "MERGE",
            ["e1"],
            0.95,
            "MERGED",
        ),
        ("User prefers green tea", [match("e1", 0.45)], "ADD", [], 0.55, "ADDED"),
    ],
)
def test_offline_decide_rule_table(
    content: str,
    matches: list[Match],
    action: str,
    targets: list[str],
    confidence: float,
    outcome: str,
) -> None:
    made = candidate(content)
    decided = offline_decide(made, matches)
    assert (decided.action, decided.target_event_ids) == (action, targets)
    assert decided.confidence == pytest.approx(confidence)
    assert decided.reason
    assert apply_decision(decided, matches).action == outcome
    assert offline_decide_payload(decider_task(made, matches).payload) == decided
