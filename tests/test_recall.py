"""Automatic context (spec §9): activation query, fusion, exclusions, budget, rendering."""

import json
import sqlite3
from typing import Any

import pytest
from cards import T0, event_card

from stratagate_plugin.core.events.cards import EventCard
from stratagate_plugin.core.events.documents import EVENT_RULES
from stratagate_plugin.core.memory import StrataGate
from stratagate_plugin.core.records import Message, ToolTrace
from stratagate_plugin.core.retrieval import service as retrieval_service
from stratagate_plugin.core.retrieval.recall import (
    HEADING,
    NOTHING,
    RecallConfig,
    activate_events,
    activation_query,
    render_activated,
)
from stratagate_plugin.core.store import event_rows
from stratagate_plugin.core.text.token_budget import estimate_tokens


def card(event_id: str, title: str = "", summary: str = "-", **extra: Any) -> EventCard:
    return event_card(event_id, title=title or event_id, summary=summary, **extra)


def message(turn: int, role: Any, content: str, **extra: Any) -> Message:
    return Message(
        id=f"m{turn}{role}",
        namespace="ns",
        thread_id="t",
        block_id=None,
        position=turn * 2,
        turn=turn,
        role=role,
        content=content,
        created_at=T0,
        **extra,
    )


# -- pure ---------------------------------------------------------------------------------


def test_render_without_items_is_heading_and_nothing() -> None:
    text, shown, _ = render_activated([], [], 900)
    assert text == "\n".join([*HEADING, NOTHING]) and shown == 0


def test_render_writes_one_json_line_per_event() -> None:
    event = card(
        "e1",
        "Kiln",
        "Fires Friday",
        temporal={"happened_start": "2024-05-03", "status": "planned", "mentioned_at": "x"},
    )
    text, shown, _ = render_activated([event, card("e2")], [], 900)
    lines = text.split("\n")
    assert lines[: len(HEADING)] == list(HEADING) and lines[len(HEADING)] == "Events:"
    assert json.loads(lines[len(HEADING) + 1][2:]) == {
        "id": "e1",
        "title": "Kiln",
        "summary": "Fires Friday",
        "happenedStart": "2024-05-03",
        "temporal": {"status": "planned"},
    }
    assert lines[-1] == '- {"id":"e2","title":"e2","summary":"-","temporal":{}}' and shown == 2


def test_render_stops_at_the_first_event_over_budget() -> None:
    big = [card(f"e{i}", summary="word " * 200) for i in range(6)]
    small = card("tiny")
    text, shown, _ = render_activated([*big, small], [], 900)
    heading = estimate_tokens("\n".join(HEADING))
    cost = estimate_tokens("\nEvents:\n- " + text.split("\n")[len(HEADING) + 1][2:])
    assert shown == (900 - heading) // cost and shown < len(big)
    assert "tiny" not in text and estimate_tokens(text) <= 900


def test_activation_query_is_latest_message_plus_last_two_tail_turns() -> None:
    tail = [
        message(1, "user", "first"),
        message(2, "user", "second"),
        message(2, "assistant", "reply", tool_calls=(ToolTrace(name="ls", result="ok"),)),
        message(3, "user", "third"),
    ]
    query = activation_query("now?", tail, 2)
    assert query.split("\n") == [
        "now?",
        "user: second",
        "assistant: reply",
        'toolCalls: [{"name":"ls","arguments":null,"result":"ok"}]',
        "user: third",
    ]


def test_pinned_and_safety_events_join_the_weight_ranking() -> None:
    hit = card("hit", last_adopted_turn=0)
    pinned = card("pinned", pinned=True)
    gone = card("gone", pinned=True, status="forgotten")
    fused = activate_events([hit], [pinned, gone], current_turn=50)
    assert [c.id for c in fused] == ["hit", "pinned"]


# -- through a real database --------------------------------------------------------------


async def sealed_block(memory: StrataGate, thread: str, words: str) -> tuple[str, str]:
    """Three turns in ``thread`` (one sealed block); returns (block id, first message id)."""
    for i in range(3):
        await memory.blocks.append_turn("ns", thread, user=f"{words} {i}", assistant="ok")
    view = [v for v in await memory.blocks.views("ns", thread)][-1]
    return view.block.id, (await memory.blocks.messages(view.block.id))[0].id


async def store(memory: StrataGate, *cards: EventCard) -> None:
    def unit(raw: sqlite3.Connection) -> None:
        for event in cards:
            event_rows.insert_event(raw, event, EVENT_RULES)

    await memory.db.write(unit)


def from_block(event_id: str, title: str, block: tuple[str, str], **extra: Any) -> EventCard:
    return card(event_id, title, source_block_id=block[0], source_message_ids=[block[1]], **extra)


async def test_auto_context_excludes_the_current_thread_and_never_reinforces(
    memory: StrataGate, plain: sqlite3.Connection
) -> None:
    here = await sealed_block(memory, "current", "chatter")
    there = await sealed_block(memory, "other", "chatter")
    await store(
        memory,
        from_block("evt_here", "kiln schedule", here),
        from_block("evt_there", "kiln glaze choice", there),
        from_block("evt_safe", "never leave the kiln unattended", there, criticality="safety"),
        from_block("evt_pin", "user name is Ana", there, pinned=True),
        from_block("evt_noise", "lunch menu", there),
    )
    before = plain.execute(
        "SELECT id, mention_count, last_adopted_turn FROM events ORDER BY id"
    ).fetchall()
    context = await memory.retrieval.auto_context("ns", "current", "what about the kiln?")
    shown = [event.id for event in context.events]
    assert set(shown) == {"evt_there", "evt_safe", "evt_pin"}
    assert all(f'"id":"{i}"' in context.text for i in shown) and "evt_here" not in context.text
    after = plain.execute(
        "SELECT id, mention_count, last_adopted_turn FROM events ORDER BY id"
    ).fetchall()
    assert [tuple(r) for r in after] == [tuple(r) for r in before]
    await memory.events.stamps.flush()
    stamped = plain.execute("SELECT id FROM events WHERE last_retrieved_at IS NOT NULL")
    assert {row[0] for row in stamped} == {"evt_here", "evt_there", "evt_safe"}


async def test_auto_context_query_takes_the_open_tail_and_limits_apply(
    memory: StrataGate,
) -> None:
    there = await sealed_block(memory, "other", "chatter")
    events = [from_block(f"evt_{i}", f"glaze recipe {i}", there) for i in range(6)]
    await store(memory, *events)
    await memory.blocks.append_turn("ns", "current", user="remember the glaze?", assistant="yes")
    context = await memory.retrieval.auto_context("ns", "current", "and then?")
    assert context.query == "and then?\nuser: remember the glaze?\nassistant: yes"
    assert len(context.events) == 4
    tight = RecallConfig(token_budget=estimate_tokens("\n".join(HEADING)) + 30)
    small = await memory.retrieval.auto_context("ns", "current", "and then?", config=tight)
    assert len(small.events) == 1 and small.text.count("\n- ") == 1


async def test_auto_context_with_nothing_relevant_renders_the_empty_block(
    memory: StrataGate,
) -> None:
    await memory.blocks.append_turn("ns", "current", user="hello", assistant="hi")
    context = await memory.retrieval.auto_context("ns", "current", "zebra")
    assert context.events == [] and context.text.endswith(NOTHING)


@pytest.mark.parametrize("own_check_slice", [2, 16])
async def test_auto_context_fuses_bypass_weights_exactly_like_the_cards(
    memory: StrataGate, monkeypatch: pytest.MonkeyPatch, own_check_slice: int
) -> None:
    monkeypatch.setattr(retrieval_service, "OWN_CHECK_SLICE", own_check_slice)
    here = await sealed_block(memory, "current", "chatter")
    there = await sealed_block(memory, "other", "chatter")
    bypass = [
        from_block(
            f"evt_b{i}",
            f"note {i}",
            here if i % 3 == 0 else there,
            pinned=i % 2 == 0,
            criticality="routine" if i % 2 == 0 else "safety",
            last_adopted_turn=i * 7,
            mention_count=i,
        )
        for i in range(8)
    ]
    relevant = [from_block(f"evt_r{i}", f"kiln {'glaze ' * i}", there) for i in range(2)]
    await store(memory, *bypass, *relevant)
    context = await memory.retrieval.auto_context("ns", "current", "kiln glaze")
    hits = await memory.events.search("ns", "kiln glaze", limit=20, track_retrieval=False)
    turn = (
        await memory.db.read(
            lambda raw: raw.execute("SELECT current_turn FROM namespaces").fetchone()
        )
    )[0]
    fused = activate_events([h.card for h in hits], bypass, turn)
    expected = [c.id for c in fused if c.source_block_id != here[0]][:4]
    assert [c.id for c in context.events] == expected
    assert any(i.startswith("evt_b") for i in expected)
