"""Event weights (spec §8): expected values come from the formula written out here."""

import math
from typing import Any

import pytest

from stratagate_plugin.core.events.weights import (
    FLOORS,
    SUPERSEDED_CAP,
    WeightCounters,
    decay_rate,
    memory_weight,
    reinforce,
)
from stratagate_plugin.core.llm.tasks import Criticality


def expected(t: int, n: int, floor: float) -> float:
    rate = 0.15 / (1 + 1.5 * math.log(n))
    return max(floor, math.exp(-rate * t))


@pytest.mark.parametrize(
    ("n", "rate"),
    [(1, 0.15), (0, 0.15), (-3, 0.15), (2, 0.15 / (1 + 1.5 * math.log(2))), (10, 0.0336785)],
)
def test_decay_rate_slows_with_mentions(n: int, rate: float) -> None:
    assert decay_rate(n) == pytest.approx(rate, rel=1e-5)


def test_floors_by_criticality() -> None:
    assert FLOORS == {"routine": 0.0, "preference": 0.3, "identity": 0.9, "safety": 1.0}
    assert SUPERSEDED_CAP == 0.1


@pytest.mark.parametrize("criticality", ["routine", "preference", "identity", "safety"])
@pytest.mark.parametrize(("t", "n"), [(0, 1), (1, 1), (5, 1), (10, 3), (30, 1), (30, 5), (100, 2)])
def test_memory_weight_matches_formula(criticality: Criticality, t: int, n: int) -> None:
    weight = memory_weight(50 + t, 50, n, criticality)
    assert weight == pytest.approx(expected(t, n, FLOORS[criticality]))


@pytest.mark.parametrize(
    ("t", "n", "value"),
    [(0, 1, 1.0), (10, 1, math.exp(-1.5)), (20, 1, math.exp(-3.0)), (4, 1, math.exp(-0.6))],
)
def test_memory_weight_known_routine_values(t: int, n: int, value: float) -> None:
    assert memory_weight(t, 0, n) == pytest.approx(value)


@pytest.mark.parametrize(
    ("criticality", "t", "value"),
    [("preference", 30, 0.3), ("identity", 30, 0.9), ("safety", 0, 1.0), ("safety", 500, 1.0)],
)
def test_memory_weight_floor_holds_after_long_decay(
    criticality: Criticality, t: int, value: float
) -> None:
    assert memory_weight(t, 0, 1, criticality) == pytest.approx(value)


@pytest.mark.parametrize(("floor", "value"), [(0.5, 0.5), (0.0, expected(30, 1, 0.0))])
def test_memory_weight_stored_floor_overrides_criticality(floor: float, value: float) -> None:
    assert memory_weight(30, 0, 1, "identity", floor=floor) == pytest.approx(value)


def test_memory_weight_never_counts_negative_turns() -> None:
    assert memory_weight(3, 9, 1) == 1.0


def test_memory_weight_more_mentions_decay_slower() -> None:
    assert memory_weight(20, 0, 4) > memory_weight(20, 0, 2) > memory_weight(20, 0, 1)


@pytest.mark.parametrize(
    ("kwargs", "value"),
    [
        ({"forced_cap": SUPERSEDED_CAP}, 0.1),
        ({"forced_cap": SUPERSEDED_CAP, "criticality": "safety"}, 0.1),
        ({"forced_cap": 0.5, "status": "superseded"}, 0.5),
        ({"forced_cap": 2.0}, 1.0),
        ({"pinned": True, "criticality": "routine"}, 1.0),
        ({"pinned": True, "forced_cap": SUPERSEDED_CAP}, 1.0),
        ({"status": "forgotten"}, 0.0),
        ({"status": "archived", "criticality": "safety"}, 0.0),
        ({"status": "forgotten", "pinned": True}, 0.0),
        ({"status": "superseded"}, 1.0),
    ],
)
def test_memory_weight_overrides(kwargs: dict[str, Any], value: float) -> None:
    assert memory_weight(10, 10, 1, **kwargs) == pytest.approx(value)


def test_memory_weight_cap_applies_after_decay() -> None:
    decayed = expected(40, 1, 0.0)
    assert decayed < 0.1
    assert memory_weight(40, 0, 1, forced_cap=SUPERSEDED_CAP) == pytest.approx(decayed)


def test_reinforce_counts_one_adoption_at_the_current_turn() -> None:
    counters = WeightCounters(mention_count=1, last_adopted_turn=3)
    once = reinforce(counters, 12)
    assert once == WeightCounters(mention_count=2, last_adopted_turn=12)
    assert reinforce(once, 20) == WeightCounters(mention_count=3, last_adopted_turn=20)
    assert counters.mention_count == 1


def test_reinforce_restarts_decay() -> None:
    after = reinforce(WeightCounters(last_adopted_turn=0), 30)
    assert memory_weight(30, after.last_adopted_turn, after.mention_count) == 1.0
    assert memory_weight(40, after.last_adopted_turn, after.mention_count) == pytest.approx(
        expected(10, 2, 0.0)
    )
