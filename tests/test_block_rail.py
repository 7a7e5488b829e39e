"""The block rail's rules, on records alone: level now, sizes and shares of L5, status,
distance, page bounds."""

from datetime import UTC, datetime
from typing import Any

import pytest

from stratagate_plugin.core.blocks import rail
from stratagate_plugin.core.blocks.rail import BlockRail, RailContext
from stratagate_plugin.core.records import Block, MessageIn
from stratagate_plugin.core.text.token_budget import estimate_tokens

NOW = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
MESSAGES = [
    MessageIn(role="user", content="Our kiln fires on Friday; 窑周五烧。"),
    MessageIn(role="assistant", content="Noted: Friday."),
]
RAW = "user: Our kiln fires on Friday; 窑周五烧。\n\nassistant: Noted: Friday."


def block(**fields: Any) -> Block:
    values: dict[str, Any] = {
        "id": "blk_1",
        "namespace": "ns",
        "thread_id": "t",
        "sequence": 1,
        "thread_sequence": 1,
        "start_turn": 1,
        "end_turn": 1,
        "l4_readable": "User: Our kiln fires on Friday; 窑周五烧。\n\nAssistant: Noted: Friday.",
        "l3_condensed": "User: kiln Friday",
        "created_at": NOW,
        "updated_at": NOW,
        **fields,
    }
    return Block(**values)


def ready(**fields: Any) -> Block:
    values = {"processing_status": "ready", "ready_position": 1, "pointer_anchor_position": 1}
    return block(**{**values, **fields})


@pytest.mark.parametrize(
    ("later_ready", "anchor_level", "level"),
    [(0, 5, 5), (1, 5, 5), (2, 5, 4), (4, 5, 3), (6, 5, 2), (8, 5, 1), (9, 5, 0), (2, 2, 1)],
)
def test_level_now_decays_a_ready_block_from_its_anchor(
    later_ready: int, anchor_level: int, level: int
) -> None:
    assert rail.level_now(ready(pointer_anchor_level=anchor_level), 1 + later_ready, 0.3) == level


def test_level_now_keeps_a_pending_block_at_l5() -> None:
    assert rail.level_now(block(), 40, 0.3) == 5


@pytest.mark.parametrize(("tokens", "whole", "percent"), [(5, 20, 25), (1, 3, 33), (30, 20, 150)])
def test_percent_of_rounds_the_share(tokens: int, whole: int, percent: int) -> None:
    assert rail.percent_of(tokens, whole) == percent


def test_percent_of_an_empty_whole_is_zero() -> None:
    assert rail.percent_of(3, 0) == 0


def test_level_sizes_measure_every_view_against_l5() -> None:
    derived = block(
        l0_title="Kiln", l0_tags=["kiln"], l1_summary="Kiln on Friday.", l2_keypoints=[]
    )
    sizes = rail.level_sizes(derived, MESSAGES)
    raw = estimate_tokens(RAW)
    assert [size.level for size in sizes] == [0, 1, 2, 3, 4, 5]
    assert sizes[5].tokens == raw and sizes[5].percent == 100
    assert sizes[0].tokens == estimate_tokens("Kiln\nTags: kiln")
    assert sizes[3].tokens == estimate_tokens("User: kiln Friday")
    assert sizes[3].percent == round(100 * sizes[3].tokens / raw)
    assert sizes[2].tokens == sizes[1].tokens  # empty key points: L2 is L1


def test_level_sizes_count_underived_views_as_zero() -> None:
    sizes = rail.level_sizes(block(), MESSAGES)
    assert [(size.tokens, size.percent) for size in sizes[:3]] == [(0, 0)] * 3


@pytest.mark.parametrize(
    ("fields", "jobs", "status"),
    [
        ({}, ["pending"], "sealed"),
        ({}, [], "sealed"),
        ({}, ["running"], "deriving"),
        ({}, ["succeeded", "pending"], "deriving"),
        ({"l0_title": "x"}, [], "deriving"),
        ({}, ["failed"], "failed"),
        ({}, ["succeeded", "failed"], "failed"),
        ({"processing_status": "ready"}, ["succeeded", "failed"], "ready"),
    ],
)
def test_rail_status_from_the_block_and_its_jobs(
    fields: dict[str, Any], jobs: list[str], status: str
) -> None:
    assert rail.rail_status(block(**fields), jobs) == status


def test_rail_block_counts_distance_and_keeps_the_error_of_a_failed_block() -> None:
    context = RailContext(latest_ready=3, newest_sequence=7, decay_lambda=0.3)
    failed = rail.rail_block(block(thread_sequence=2), MESSAGES, context, ["failed"], error="boom")
    assert (failed.distance, failed.status, failed.error, failed.current_level) == (
        5,
        "failed",
        "boom",
        5,
    )
    done = rail.rail_block(ready(thread_sequence=7), MESSAGES, context, ["failed"], error="old")
    assert (done.distance, done.status, done.error) == (0, "ready", None)


@pytest.mark.parametrize(
    ("total", "offset", "bounds"),
    [(43, 0, (4, 43)), (43, 40, (1, 3)), (40, 0, (1, 40)), (5, 0, (1, 5)), (0, 0, (1, 0))],
)
def test_page_bounds_count_back_from_the_newest(
    total: int, offset: int, bounds: tuple[int, int]
) -> None:
    assert rail.page_bounds(total, offset) == bounds


def test_page_bounds_past_the_end_are_empty() -> None:
    first, last = rail.page_bounds(10, 40)
    assert first > last


def test_block_rail_links_older_and_newer_pages() -> None:
    entry = rail.rail_block(block(), MESSAGES, RailContext(0, 1, 0.3))
    newest = BlockRail("t", total=43, offset=0, blocks=[entry] * 40)
    assert (newest.older, newest.newer) == (40, None)
    oldest = BlockRail("t", total=43, offset=40, blocks=[entry] * 3)
    assert (oldest.older, oldest.newer) == (None, 0)
    middle = BlockRail("t", total=100, offset=40, blocks=[entry] * 40)
    assert (middle.older, middle.newer) == (80, 0)
