"""The timeline's rules and use cases: filters, weight over turns, the filtered paged
listing on its indexes, corrections, the conflict queue and its resolutions, migration 14."""

import sqlite3
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from stratagate_plugin.core.errors import InvalidInput, NotFound
from stratagate_plugin.core.events.cards import EventCard
from stratagate_plugin.core.events.documents import EVENT_RULES
from stratagate_plugin.core.events.weights import card_weight, memory_weight
from stratagate_plugin.core.memory import StrataGate
from stratagate_plugin.core.store import event_rows
from stratagate_plugin.core.store.migrations import migrate
from stratagate_plugin.core.store.search_index import register_functions
from stratagate_plugin.core.store.timeline_rows import CHRONOLOGY
from stratagate_plugin.core.timeline.filters import timeline_filter
from stratagate_plugin.core.timeline.trajectory import sampled_turns, weight_trajectory
from tests.cards import event_card

NS = "ns"


# -- filters (pure) --------------------------------------------------------------------------


def test_filter_dates_cover_whole_days_and_until_is_exclusive() -> None:
    query = timeline_filter(NS, since="2026-04-01", until="2026-04-30")
    assert (query.low, query.high) == ("2026-04-01", "2026-05-01")
    exact = timeline_filter(NS, since="2026-04-01T10:00:00Z")
    assert exact.low == "2026-04-01T10:00:00+00:00"
    assert timeline_filter(NS).statuses == ("active", "superseded")
    assert timeline_filter(NS, status="all").statuses == (
        "active",
        "superseded",
        "forgotten",
        "archived",
    )


@pytest.mark.parametrize(
    "asked",
    [
        {"since": "yesterday"},
        {"until": "2026-13-01"},
        {"status": "deleted"},
        {"source": "import"},
        {"event_type": "party"},
    ],
)
def test_filter_refuses_what_cannot_match(asked: dict[str, str]) -> None:
    with pytest.raises(InvalidInput):
        timeline_filter(NS, **asked)


# -- weight over turns (pure) ---------------------------------------------------------------


def test_trajectory_decays_by_the_weight_rules_and_jumps_at_each_adoption() -> None:
    card = event_card("e", formed_turn=2, last_adopted_turn=6, mention_count=2)
    points = weight_trajectory(card, [6], current_turn=12)
    assert [p.turn for p in points] == list(range(2, 13))
    assert points[3].weight == pytest.approx(memory_weight(5, 2, 1), abs=1e-4)
    assert [p.turn for p in points if p.adopted] == [6]
    assert points[4].weight == 1.0  # adopted at turn 6: t = 0 again
    assert points[-1].weight == pytest.approx(card_weight(card, 12), abs=1e-4)


def test_trajectory_places_unreceipted_reinforcements_at_the_stored_turn() -> None:
    card = event_card("e", formed_turn=0, last_adopted_turn=4, mention_count=3)
    points = weight_trajectory(card, [], current_turn=9)
    assert not any(p.adopted for p in points)
    assert points[-1].weight == pytest.approx(card_weight(card, 9), abs=1e-4)


def test_trajectory_of_a_long_life_stays_bounded_and_keeps_the_adoptions() -> None:
    adoptions = list(range(100, 9000, 50))
    card = event_card("e", formed_turn=0, last_adopted_turn=8950, mention_count=1 + len(adoptions))
    points = weight_trajectory(card, adoptions, current_turn=10_000)
    assert len(points) <= 200
    assert points[0].turn == 0 and points[-1].turn == 10_000
    assert sum(p.adopted for p in points) >= 25
    assert points[-1].weight == pytest.approx(card_weight(card, 10_000), abs=1e-4)
    assert sampled_turns(0, 10, [3], 200) == list(range(11))


def test_trajectory_follows_the_present_flags() -> None:
    pinned = event_card("e", formed_turn=0, last_adopted_turn=0, pinned=True)
    assert {p.weight for p in weight_trajectory(pinned, [], 30)} == {1.0}
    gone = event_card("e", formed_turn=0, last_adopted_turn=0, status="forgotten")
    assert {p.weight for p in weight_trajectory(gone, [], 30)} == {0.0}


# -- the listing through a real database ------------------------------------------------------


async def store(memory: StrataGate, *cards: EventCard) -> None:
    def unit(raw: sqlite3.Connection) -> None:
        for card in cards:
            event_rows.insert_event(raw, card, EVENT_RULES)

    await memory.db.write(unit)


async def world(memory: StrataGate) -> list[str]:
    """A namespace with one sealed block; its message ids."""
    ids: list[str] = []
    for i in range(3):
        receipt = await memory.blocks.append_turn(NS, "t", user=f"kiln talk {i}", assistant="ok")
        ids += receipt.message_ids
    return ids


def when(day: str) -> dict[str, Any]:
    return {"happened_start": f"{day}T00:00:00+00:00", "mentioned_at": "2026-01-01T00:00:00+00:00"}


async def sample(memory: StrataGate) -> None:
    await world(memory)
    await store(
        memory,
        event_card(
            "a",
            title="Kiln fired",
            summary="The kiln was fired",
            temporal=when("2026-03-01") | {"event_type": "release", "participants": ["Ada"]},
        ),
        event_card(
            "b",
            title="Glaze order",
            summary="Ordered blue glaze",
            temporal=when("2026-04-10") | {"event_type": "plan", "participants": ["Ben"]},
        ),
        event_card(
            "c",
            title="Agent note",
            summary="Kiln needs a new shelf",
            pool="agent",
            temporal={"mentioned_at": "2026-05-01T00:00:00+00:00"},
        ),
        event_card(
            "d",
            title="Old plan",
            summary="Dropped idea",
            status="forgotten",
            temporal=when("2026-06-01"),
        ),
    )


async def listed(memory: StrataGate, **asked: str) -> list[str]:
    page = await memory.timeline.events(timeline_filter(NS, **asked))
    return [entry.card.id for entry in page.entries]


async def test_timeline_is_newest_first_by_happened_else_mentioned_time(
    memory: StrataGate,
) -> None:
    await sample(memory)
    assert await listed(memory) == ["c", "b", "a"]  # forgotten d left out by default
    page = await memory.timeline.events(timeline_filter(NS))
    assert page.entries[0].chronology == "2026-05-01T00:00:00+00:00"
    assert page.current_turn == 3 and not page.has_more
    assert page.entries[0].weight == pytest.approx(memory_weight(3, 0, 1))  # formed at turn 0


@pytest.mark.parametrize(
    ("asked", "expected"),
    [
        ({"text": "kiln"}, ["c", "a"]),
        ({"text": "kiln shelf"}, ["c"]),
        ({"since": "2026-04-01"}, ["c", "b"]),
        ({"until": "2026-04-10"}, ["b", "a"]),
        ({"since": "2026-04-01", "until": "2026-04-30"}, ["b"]),
        ({"participant": "ada"}, ["a"]),
        ({"event_type": "plan"}, ["b"]),
        ({"status": "forgotten"}, ["d"]),
        ({"status": "all"}, ["d", "c", "b", "a"]),
        ({"source": "agent"}, ["c"]),
        ({"source": "conversation"}, ["b", "a"]),
    ],
)
async def test_each_filter_narrows_the_timeline(
    memory: StrataGate, asked: dict[str, str], expected: list[str]
) -> None:
    await sample(memory)
    assert await listed(memory, **asked) == expected


async def test_timeline_pages_by_offset(memory: StrataGate) -> None:
    await world(memory)
    days = [f"2026-01-{day:02d}" for day in range(1, 31)]
    await store(memory, *(event_card(f"e{i:02d}", temporal=when(d)) for i, d in enumerate(days)))
    first = await memory.timeline.events(timeline_filter(NS), limit=12)
    second = await memory.timeline.events(timeline_filter(NS), offset=24, limit=12)
    assert [e.card.id for e in first.entries] == [f"e{i:02d}" for i in range(29, 17, -1)]
    assert first.has_more and not second.has_more
    assert [e.card.id for e in second.entries] == [f"e{i:02d}" for i in range(5, -1, -1)]


@pytest.mark.sqlite_only(reason="SQLite's query plan (EXPLAIN QUERY PLAN) walks the timeline index")
def test_the_listing_walks_the_timeline_index(db_path: Path, plain: sqlite3.Connection) -> None:
    raw = sqlite3.connect(db_path, isolation_level=None)
    register_functions(raw)
    migrate(raw)
    raw.close()
    sql = (
        "SELECT * FROM events WHERE namespace = ? AND status IN ('active', 'superseded') "
        f"ORDER BY {CHRONOLOGY} DESC, pk DESC LIMIT 41"
    )
    plan = " ".join(row[3] for row in plain.execute(f"EXPLAIN QUERY PLAN {sql}", (NS,)))
    assert "USING INDEX events_timeline" in plan and "TEMP B-TREE" not in plan


# -- corrections ----------------------------------------------------------------------------


async def test_correct_writes_a_superseding_event_citing_the_old_sources(
    memory: StrataGate,
) -> None:
    messages = await world(memory)
    await store(
        memory,
        event_card(
            "old",
            title="Sale on 14 March",
            summary="The sale is on 14 March",
            source_message_ids=messages[:1],
            temporal=when("2026-03-14"),
        ),
    )
    happened = datetime(2026, 3, 21, tzinfo=UTC)
    result = await memory.curation.correct_event(
        "old", title="Sale on 21 March", summary="Moved to 21 March", happened=happened
    )
    new, old = result.card, await memory.events.get("old")
    assert (old.status, old.superseded_by, old.forced_cap) == ("superseded", new.id, 0.1)
    assert new.temporal["supersedes_event_ids"] == ["old"]
    assert new.temporal["corrected_by"] == "user"
    assert new.temporal["happened_start"] == "2026-03-21T00:00:00+00:00"
    assert new.source_message_ids == messages[:1] and new.status == "active"
    assert result.action.kind == "correct" and result.action.target_id == "old"
    assert result.action.detail["new_event_id"] == new.id
    newer, older = await memory.timeline.event(new.id), await memory.timeline.event("old")
    assert [v.id for v in newer.versions] == ["old", new.id] == [v.id for v in older.versions]
    assert [(link.relation, link.event_id) for link in older.details.links] == [
        ("superseded by", new.id)
    ]
    hits = await memory.events.search(NS, "sale March", track_retrieval=False)
    assert hits[0].card.id == new.id and [h.id for h in hits[0].history] == ["old"]


async def test_correct_refuses_an_empty_text_or_an_event_that_is_not_active(
    memory: StrataGate,
) -> None:
    await world(memory)
    await store(memory, event_card("a"), event_card("f", status="forgotten"))
    with pytest.raises(InvalidInput):
        await memory.curation.correct_event("a", title=" ", summary="x")
    with pytest.raises(InvalidInput):
        await memory.curation.correct_event("f", title="t", summary="s")
    with pytest.raises(NotFound):
        await memory.curation.correct_event("nope", title="t", summary="s")
    assert await memory.curation.actions() == []


# -- conflicts ------------------------------------------------------------------------------


async def conflicted(memory: StrataGate) -> None:
    await world(memory)
    await store(memory, event_card("x", title="Opens at 10"), event_card("y", title="Opens at 9"))
    await store(
        memory,
        event_card("z", title="Opens at 11", temporal={"conflicts_with_event_ids": ["x", "y"]}),
    )


async def pairs(memory: StrataGate) -> list[tuple[str, str]]:
    page = await memory.timeline.conflicts(NS)
    return [(pair.newer.card.id, pair.older.card.id) for pair in page.pairs]


async def test_the_queue_lists_each_pair_of_active_conflicting_events_once(
    memory: StrataGate,
) -> None:
    await conflicted(memory)
    assert await pairs(memory) == [("z", "y"), ("z", "x")]
    await memory.curation.act("forget", "y")
    assert await pairs(memory) == [("z", "x")]


async def test_keep_both_drops_the_link_on_both_sides_with_a_receipt(memory: StrataGate) -> None:
    await conflicted(memory)
    result = await memory.curation.resolve_conflict("z", "x", "keep_both")
    assert await pairs(memory) == [("z", "y")]
    assert (await memory.events.get("z")).temporal["conflicts_with_event_ids"] == ["y"]
    assert "conflicts_with_event_ids" not in (await memory.events.get("x")).temporal
    assert (await memory.events.get("x")).status == "active"
    assert (result.action.kind, result.action.detail) == (
        "resolve",
        {"other_id": "x", "resolution": "keep_both"},
    )
    with pytest.raises(InvalidInput):
        await memory.curation.resolve_conflict("z", "x", "keep_both")  # no longer in conflict


async def test_supersedes_makes_one_side_history_of_the_other(memory: StrataGate) -> None:
    await conflicted(memory)
    await memory.curation.resolve_conflict("y", "z", "supersedes")
    z, y = await memory.events.get("z"), await memory.events.get("y")
    assert (z.status, z.superseded_by) == ("superseded", "y")
    assert y.temporal["supersedes_event_ids"] == ["z"]
    assert await pairs(memory) == []  # z no longer active: its conflict with x is moot
    assert [v.id for v in (await memory.timeline.event("z")).versions] == ["z", "y"]


async def test_resolve_refuses_unknown_actions_and_unlinked_events(memory: StrataGate) -> None:
    await conflicted(memory)
    with pytest.raises(InvalidInput):
        await memory.curation.resolve_conflict("z", "x", "merge")
    with pytest.raises(InvalidInput):
        await memory.curation.resolve_conflict("x", "y", "keep_both")
    with pytest.raises(NotFound):
        await memory.curation.resolve_conflict("z", "nope", "keep_both")


# -- migration 14 ---------------------------------------------------------------------------


def test_migration_14_keeps_receipts_and_allows_corrections(tmp_path: Path) -> None:
    raw = sqlite3.connect(tmp_path / "old.db", isolation_level=None)
    register_functions(raw)
    migrate(raw, 13)  # the version before corrections
    raw.execute(
        "INSERT INTO memory_actions VALUES ('act_1', 'ns', 'pin', 'e', 'user', '{}', 'now')"
    )
    with pytest.raises(sqlite3.IntegrityError):
        raw.execute(
            "INSERT INTO memory_actions VALUES ('a2', 'ns', 'correct', 'e', 'user', '{}', 'n')"
        )
    migrate(raw)
    raw.execute("INSERT INTO memory_actions VALUES ('a3', 'ns', 'resolve', 'e', 'user', '{}', 'n')")
    assert [r[0] for r in raw.execute("SELECT id FROM memory_actions ORDER BY id")] == [
        "a3",
        "act_1",
    ]
    indexes = {r[0] for r in raw.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
    assert {"memory_actions_target", "events_timeline", "events_conflicted"} <= indexes
    raw.close()
