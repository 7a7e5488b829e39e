"""Decay and expand-target rules of spec §2.7–2.8 (pure, no database)."""

import math

import pytest

from stratagate_plugin.core.blocks.rules import (
    UNAVAILABLE,
    block_weight,
    decayed_level,
    normalize_target_level,
    render_level,
)
from stratagate_plugin.core.clock import utc_now
from stratagate_plugin.core.records import Block, MessageIn

# Later ready blocks → level, for a block anchored at L5 with λ = 0.30 (spec table).
LAMBDA_030 = {0: 5, 1: 5, 2: 4, 3: 3, 4: 3, 5: 2, 6: 2, 7: 1, 8: 1, 9: 0, 15: 0}


@pytest.mark.parametrize(("age", "level"), sorted(LAMBDA_030.items()))
def test_decay_table_for_default_lambda(age: int, level: int) -> None:
    assert decayed_level(5, 1, 1 + age, 0.30) == level


def expected_level(age: int, decay: float, anchor: int = 5) -> int:
    weight = math.exp(-decay * age)
    thresholds = [0.7, 0.5, 0.3, 0.15, 0.08]
    dropped = next((i for i, t in enumerate(thresholds) if weight > t), 5)
    return max(0, anchor - dropped)


@pytest.mark.parametrize("age", range(0, 40, 3))
def test_decay_for_a_slower_lambda_matches_the_thresholds(age: int) -> None:
    assert decayed_level(5, 10, 10 + age, 0.1) == expected_level(age, 0.1)


def test_decay_spec_pins() -> None:
    assert decayed_level(5, 0, 4, 0.1) == 4
    assert block_weight(2, 0.3) == pytest.approx(math.exp(-0.6))
    assert decayed_level(5, 1, 100, 0.0) == 5  # λ = 0 never decays


def test_decay_from_a_lower_anchor_never_goes_below_l0() -> None:
    assert decayed_level(2, 1, 6, 0.3) == 0
    assert decayed_level(3, 4, 4, 0.3) == 3


@pytest.mark.parametrize(
    ("target", "current", "expected"),
    [
        ("raw", 1, 5),
        ("L5", 0, 5),
        (5, 2, 5),
        ("5", 2, 5),
        ("next", 2, 3),
        ("+1", 2, 3),
        (None, 4, 5),
        ("next", 5, 5),
        ("L0", 4, 0),
        ("l3", 0, 3),
        ("2", 5, 2),
        (2.6, 0, 3),
        (-4, 3, 0),
        (99, 1, 5),
        ("bogus", 1, 2),
        (float("nan"), 1, 2),
        (True, 1, 2),
        ([], 3, 4),
    ],
)
def test_expand_target_normalisation(target: object, current: int, expected: int) -> None:
    assert normalize_target_level(target, current) == expected


def make_block(**fields: object) -> Block:
    now = utc_now()
    base: dict[str, object] = dict(
        id="blk",
        namespace="ns",
        thread_id="t",
        sequence=1,
        thread_sequence=1,
        start_turn=1,
        end_turn=2,
        l4_readable="L4 text",
        l3_condensed="L3 text",
        created_at=now,
        updated_at=now,
    )
    base.update(fields)
    return Block.model_validate(base)


def test_model_views_are_unavailable_until_derived() -> None:
    messages = [MessageIn(role="user", content="hi")]
    block = make_block()
    assert [render_level(block, level, messages) for level in (0, 1, 2)] == [UNAVAILABLE] * 3
    assert render_level(block, 3, messages) == "L3 text"
    assert render_level(block, 5, messages) == "user: hi"


def test_model_views_render_once_derived() -> None:
    block = make_block(
        l0_title="Kiln plan", l0_tags=["kiln", "sale"], l1_summary="S.", l2_keypoints=["a", "b"]
    )
    assert render_level(block, 0, []) == "Kiln plan\nTags: kiln, sale"
    assert render_level(block, 1, []) == "S."
    assert render_level(block, 2, []) == "- a\n- b"
    assert render_level(make_block(l0_title="T", l0_tags=[]), 0, []) == "T\nTags: none"
