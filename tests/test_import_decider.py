"""The import decider's pure rules (spec §11.3–11.4): settling an answer, the commit's per-item
action, and the offline rule reached through ``memory_remember``'s decider task."""

import pytest
from cards import T0

from stratagate_plugin.core.importer.decider import (
    CHOSEN_NO_TARGET,
    NO_TARGET,
    UNCONFIRMED,
    ExternalDecision,
    as_agent_candidate,
    decision_task,
    duplicate_of_item,
    final_actions,
    fingerprint,
    offline_decision,
    settle,
)
from stratagate_plugin.core.importer.external_format import ExternalCandidate
from stratagate_plugin.core.importer.jobs import ImportItem, MatchedEvent
from stratagate_plugin.core.llm.offline.model import OfflineModel
from stratagate_plugin.core.remember.rules import DECIDE_AGENT_MEMORY, Match

OVERLAP = [Match(event_id="evt_a", title="Tea", summary="Prefers green tea", containment=0.7)]
SHOWN = [MatchedEvent(id="evt_a", title="Tea", summary="Prefers green tea", status="active")]


def answer(action: str, targets: list[str], confidence: object = 0.9) -> ExternalDecision:
    return ExternalDecision.model_validate(
        {"action": action, "target_event_ids": targets, "confidence": confidence, "reason": "r"}
    )


def item(index: int, action: str | None, confidence: float = 0.9, **fields: object) -> ImportItem:
    candidate = ExternalCandidate.model_validate({"title": f"t{index}", "summary": "s"})
    return ImportItem.model_validate(
        {
            "index": index,
            "candidate": candidate,
            "action": action,
            "confidence": confidence,
            "requires_confirmation": confidence < 0.85,
            **fields,
        }
    )


@pytest.mark.parametrize(
    ("confidence", "forced", "asks"),
    [(0.8499, False, True), (0.85, False, False), (1.0, False, False), (1.0, True, True)],
)
def test_confirmation_below_085_or_when_forced(confidence: float, forced: bool, asks: bool) -> None:
    settled = settle(answer("MERGE", ["evt_a"], confidence), OVERLAP, SHOWN, forced=forced)
    assert settled.action == "MERGE" and settled.requires_confirmation is asks


def test_targets_outside_the_matches_are_dropped_and_a_targetless_action_ignored() -> None:
    kept = settle(answer("SUPERSEDE", ["evt_x", "evt_a", "evt_a"]), OVERLAP, SHOWN, forced=False)
    assert kept.target_ids == ["evt_a"]
    for action in ("MERGE", "SUPERSEDE", "CONFLICT"):
        lost = settle(answer(action, ["evt_x"]), OVERLAP, SHOWN, forced=False)
        assert (lost.action, lost.confidence, lost.reason) == ("IGNORE", 0.5, NO_TARGET)


def test_unknown_actions_and_odd_fields_are_settled_not_raised() -> None:
    odd = answer("replace", ["evt_a"], "very")
    settled = settle(odd, OVERLAP, SHOWN, forced=False)
    assert (
        settled.action == "IGNORE" and settled.confidence == 0.5 and settled.requires_confirmation
    )
    assert settle(answer("add", ["evt_a"]), OVERLAP, SHOWN, forced=False).target_ids == []
    assert answer("ADD", [], 7).confidence == 1.0


def test_fingerprints_ignore_case_and_spacing() -> None:
    assert fingerprint(" Tea  TIME", "Green\ntea") == fingerprint("tea time", "green tea")
    earlier = [ExternalCandidate.model_validate({"title": "a", "summary": "b"})]
    later = ExternalCandidate.model_validate({"title": "A ", "summary": " B"})
    assert duplicate_of_item(later, earlier) == 0


def test_the_offline_model_answers_the_shared_decider_task() -> None:
    candidate = ExternalCandidate.model_validate(
        {"title": "Tea", "summary": "No longer prefers green tea", "category": "preference"}
    )
    agent = as_agent_candidate(candidate, T0)
    task = decision_task(agent, OVERLAP)
    assert task.name == DECIDE_AGENT_MEMORY
    offline = ExternalDecision.model_validate(OfflineModel().answer(task.name, task.payload))
    assert offline == offline_decision(agent, OVERLAP)


def test_the_commit_takes_choices_then_sure_decisions_else_ignore() -> None:
    items = [
        item(0, "ADD"),
        item(1, "SUPERSEDE", 0.5, target_ids=["evt_a"]),
        item(2, "MERGE", 0.95, target_ids=["evt_gone"]),
        item(3, "ADD", 0.6, matches=[m.model_dump() for m in SHOWN]),
        item(4, "ADD", 0.6),
    ]
    finals = final_actions(items, {3: "CONFLICT", 4: "SUPERSEDE"}, live={"evt_a"})
    assert [(f.action, f.target_ids) for f in finals] == [
        ("ADD", ()),
        ("IGNORE", ()),
        ("IGNORE", ()),
        ("CONFLICT", ("evt_a",)),
        ("IGNORE", ()),
    ]
    assert [finals[1].reason, finals[2].reason, finals[4].reason] == [
        UNCONFIRMED,
        CHOSEN_NO_TARGET,
        CHOSEN_NO_TARGET,
    ]


def test_the_decider_schema_lists_the_actions_a_server_can_enforce() -> None:
    """A schema-enforcing server (json_schema, a grammar) keeps a small model's answer to
    the five actions: seen on llama.cpp, an event title was put in ``action`` twice."""
    schema = ExternalDecision.model_json_schema()
    assert schema["properties"]["action"]["enum"] == [
        "ADD",
        "MERGE",
        "SUPERSEDE",
        "CONFLICT",
        "IGNORE",
    ]
    assert ExternalDecision.model_validate({"action": "Sale date"}).action == "Sale date"
