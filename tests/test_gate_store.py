"""Evidence gate through the real store: batches, assess, record_use, receipts, weights, flags."""

import asyncio
import contextlib
import json
import math
import sqlite3
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stratagate_plugin.core.config import MemoryConfig
from stratagate_plugin.core.errors import InvalidInput, NotFound, ReceiptConflict, StrataGateError
from stratagate_plugin.core.events.cards import EventCard
from stratagate_plugin.core.events.documents import EVENT_RULES
from stratagate_plugin.core.events.weights import FLOORS
from stratagate_plugin.core.gate import service as ag
from stratagate_plugin.core.gate.evidence import (
    DEFAULT_MISSING,
    BatchClosed,
    RecordUseRejected,
    UnknownBatch,
)
from stratagate_plugin.core.memory import StrataGate
from stratagate_plugin.core.store import event_rows
from stratagate_plugin.core.store.turns import NewSpaceDefaults, ensure_space
from stratagate_plugin.core.text.search_terms import fts_match_any, query_tokens

NOW = datetime(2024, 5, 1, 12, tzinfo=UTC)
NS, THREAD = "ns", "t"
RAW_REF = "raw:blk_x:msg_x:0"
BLOCK_REF = "block:blk_x:level:2"


async def add_event(memory: StrataGate, event_id: str, title: str = "", **fields: Any) -> None:
    """Insert one event directly (namespace created as needed)."""
    turn = fields.get("last_adopted_turn", 0)
    defaults: dict[str, Any] = {
        "namespace": NS,
        "summary": f"Summary of {event_id}.",
        "source_block_id": None,
        "source_message_ids": [],
        "formed_turn": turn,
        "temporal": {},
        "scope": "user",
        "last_adopted_turn": turn,
        "created_at": NOW,
        "updated_at": NOW,
    }
    card = EventCard(id=event_id, title=title or f"Event {event_id}", **(defaults | fields))

    def unit(raw: sqlite3.Connection) -> None:
        ensure_space(raw, card.namespace, NewSpaceDefaults(3, 0.3), NOW.isoformat())
        event_rows.insert_event(raw, card, EVENT_RULES)

    await memory.db.write(unit)


async def seeded(memory: StrataGate, *ids: str) -> None:
    for event_id in ids or ("e1", "e2", "e3"):
        await add_event(memory, event_id)


def counters(plain: sqlite3.Connection) -> dict[str, tuple[int, int]]:
    rows = plain.execute("SELECT id, mention_count, last_adopted_turn FROM events ORDER BY id")
    return {row[0]: (row[1], row[2]) for row in rows}


async def open_b(memory: StrataGate, refs: tuple[str, ...], thread: str = THREAD) -> str:
    batch = await memory.gate.open_batch(NS, thread, "memory_search_events", refs)
    return batch.id


async def judge(
    memory: StrataGate,
    batch_id: str | None,
    refs: list[Any],
    verdict: object = "sufficient",
    strategy: object = "answer",
    fit: object = "fits",
    missing: object = "",
) -> ag.Assessed:
    return await memory.gate.assess(NS, THREAD, batch_id, verdict, refs, fit, missing, strategy)


async def record(
    memory: StrataGate, batch_id: str | None, refs: list[Any], receipt: str = "r1"
) -> ag.UseRecord:
    return await memory.gate.record_use(NS, THREAD, batch_id, refs, receipt)


# -- batches ----------------------------------------------------------------------------


async def test_open_batch_persists_ids_sequences_and_turn(
    memory: StrataGate, plain: sqlite3.Connection
) -> None:
    await memory.blocks.append_turn(NS, THREAD, user="hello", assistant="hi")
    first = await open_b(memory, ("event:e1", "event:e1", RAW_REF))
    second = await open_b(memory, ())
    other = await memory.gate.open_batch(
        NS, "t2", "memory_expand_event", ["event:e1"], {"event:e1": "One"}
    )
    assert (first, second, other.id) == ("batch_1", "batch_2", "batch_3")
    rows = plain.execute("SELECT id, thread_id, sequence, turn, status FROM batches ORDER BY id")
    assert [tuple(r) for r in rows] == [
        ("batch_1", "t", 1, 1, "unresolved"),
        ("batch_2", "t", 2, 1, "unresolved"),
        ("batch_3", "t2", 1, 1, "unresolved"),
    ]
    assert other.titles == {"event:e1": "One"}
    stored = plain.execute("SELECT evidence_refs_json FROM batches WHERE id = 'batch_1'")
    assert json.loads(stored.fetchone()[0]) == ["event:e1", RAW_REF]


@pytest.mark.parametrize(
    ("tool", "refs"),
    [
        ("memory_list_topics", []),
        ("memory_search_events", ["event:e1", "element:x"]),
        ("memory_remember", []),
        ("memory_search_events", ["nonsense"]),
        ("memory_search_events", ["event:"]),
        ("memory_search_events", "event:e1"),
        ("memory_search_events", [7]),
    ],
)
async def test_open_batch_rejects_other_tools_and_malformed_refs(
    memory: StrataGate, tool: str, refs: Any
) -> None:
    with pytest.raises(InvalidInput):
        await memory.gate.open_batch(NS, THREAD, tool, refs)


@pytest.mark.parametrize(("namespace", "thread"), [("", THREAD), (NS, "  "), (NS, None)])
async def test_open_batch_needs_names(memory: StrataGate, namespace: Any, thread: Any) -> None:
    with pytest.raises(InvalidInput):
        await memory.gate.open_batch(namespace, thread, "memory_search_events", [])


# -- assessment normalisation (§7.1), via the store ------------------------------------

REFS = ("event:e1", "event:e2", RAW_REF)
LONG = "  lots   of\n space " + "x" * 300


@pytest.mark.parametrize(
    ("verdict", "refs", "strategy", "expected"),
    [
        ("sufficient", ["event:e1"], "answer", ("sufficient", ("event:e1",), "answer")),
        ("sufficient", ["event:e1"], "expand_event", ("partial", ("event:e1",), "expand_event")),
        ("sufficient", [], "answer", ("partial", (), "search_events")),
        ("sufficient", ["event:zz"], "answer", ("partial", (), "search_events")),
        ("sufficient", [RAW_REF], "answer", ("sufficient", (RAW_REF,), "answer")),
        ("partial", ["event:e1"], "answer", ("partial", ("event:e1",), "search_events")),
        ("wrong", ["event:e2"], "answer", ("wrong", ("event:e2",), "search_events")),
        ("wrong", [], "search_graph", ("wrong", (), "search_graph")),
        ("maybe", ["event:e1"], "answer", ("partial", ("event:e1",), "search_events")),
        (None, [], "dig", ("partial", (), "search_events")),
        ("sufficient", [" event:e1 "], "answer", ("sufficient", ("event:e1",), "answer")),
    ],
)
async def test_assess_normalises_verdict_refs_and_strategy(
    memory: StrataGate,
    plain: sqlite3.Connection,
    verdict: object,
    refs: list[Any],
    strategy: object,
    expected: tuple[str, tuple[str, ...], str],
) -> None:
    batch_id = await open_b(memory, REFS)
    judged = (await judge(memory, batch_id, refs, verdict, strategy)).assessment
    assert (judged.verdict, judged.evidence_refs, judged.next_strategy) == expected
    row = plain.execute("SELECT assessment_json FROM batches WHERE id = ?", (batch_id,))
    stored = json.loads(row.fetchone()[0])
    assert (stored["verdict"], tuple(stored["evidence_refs"]), stored["next_strategy"]) == expected


@pytest.mark.parametrize(
    ("verdict", "fit", "missing", "out_fit", "out_missing"),
    [
        ("sufficient", " a\n\tb ", "ignored", "a b", ""),
        ("partial", "ok", "  need   the date ", "ok", "need the date"),
        ("partial", "ok", "   ", "ok", DEFAULT_MISSING),
        ("partial", 42, None, "", DEFAULT_MISSING),
        ("partial", LONG, LONG, " ".join(LONG.split())[:160], " ".join(LONG.split())[:160]),
    ],
)
async def test_assess_clips_fit_and_missing(
    memory: StrataGate, verdict: str, fit: object, missing: object, out_fit: str, out_missing: str
) -> None:
    batch_id = await open_b(memory, REFS)
    judged = (
        await judge(memory, batch_id, ["event:e1"], verdict, "answer", fit, missing)
    ).assessment
    assert (judged.fit, judged.missing) == (out_fit, out_missing)
    assert len(judged.fit) <= 160 and len(judged.missing) <= 160


MANY = tuple(f"event:m{i}" for i in range(10))


@pytest.mark.parametrize(
    ("batch_refs", "refs", "reasons", "accepted"),
    [
        (REFS, ["", "event:e1"], [(0, "invalid_ref")], 1),
        (REFS, ["  ", None, 5], [(0, "invalid_ref"), (1, "invalid_ref"), (2, "invalid_ref")], 0),
        (REFS, ["event:e1", "event:e1 "], [(1, "duplicate")], 1),
        (REFS, ["event:zz", "block:b:level:1"], [(0, "not_in_batch"), (1, "not_in_batch")], 0),
        (MANY, list(MANY), [(8, "limit_exceeded"), (9, "limit_exceeded")], 8),
    ],
)
async def test_assess_reports_rejected_refs(
    memory: StrataGate,
    batch_refs: tuple[str, ...],
    refs: list[Any],
    reasons: list[tuple[int, str]],
    accepted: int,
) -> None:
    batch_id = await open_b(memory, batch_refs)
    judged = (await judge(memory, batch_id, refs)).assessment
    assert [(r.input_index, r.reason) for r in judged.rejected_evidence_refs] == reasons
    assert len(judged.evidence_refs) == accepted


async def test_assess_overwrites_and_defaults_to_the_latest_batch(memory: StrataGate) -> None:
    first = await open_b(memory, REFS)
    second = await open_b(memory, ("event:e3",))
    result = await judge(memory, None, ["event:e3"])
    assert (result.batch.id, result.latest_batch_id) == (second, second)
    await judge(memory, first, ["event:e1"], "partial", "search_graph")
    again = await judge(memory, first, ["event:e2"])
    assert again.assessment.evidence_refs == ("event:e2",) and again.latest_batch_id == second
    assert again.batch.status == "unresolved"


async def test_unknown_batch_lists_open_batches(memory: StrataGate) -> None:
    with pytest.raises(UnknownBatch, match="No retrieval batch"):
        await judge(memory, None, [])
    first = await open_b(memory, REFS)
    second = await open_b(memory, REFS)
    await record(memory, first, [])
    with pytest.raises(UnknownBatch) as caught:
        await judge(memory, "batch_99", [])
    assert caught.value.unresolved_batch_ids == [second]
    assert caught.value.available_batch_ids == [first, second]
    assert second in str(caught.value)
    with pytest.raises(UnknownBatch):  # batches of another thread are not this thread's
        await memory.gate.assess(NS, "other", first, "partial", [], "", "", "search_events")


# -- record_use (§7.2–7.3) --------------------------------------------------------------


@pytest.mark.parametrize(
    ("verdict", "adopt", "refs", "reasons"),
    [
        ("sufficient", ["event:e1"], ["event:e2"], ["not_adopted"]),
        ("partial", ["event:e1"], ["event:e1"], ["not_adopted"]),
        (None, [], ["event:e1"], ["not_adopted"]),
        ("sufficient", ["event:e1"], ["event:zz"], ["not_in_batch"]),
        ("sufficient", ["event:e1"], ["", "event:e1", 3], ["invalid_ref", "invalid_ref"]),
        ("sufficient", ["event:e1"], ["event:e2", "event:zz"], ["not_adopted", "not_in_batch"]),
    ],
)
async def test_record_use_rejects_refs_not_adopted(
    memory: StrataGate,
    plain: sqlite3.Connection,
    verdict: str | None,
    adopt: list[str],
    refs: list[Any],
    reasons: list[str],
) -> None:
    await seeded(memory)
    batch_id = await open_b(memory, REFS)
    if verdict:
        await judge(memory, batch_id, adopt, verdict)
    before = counters(plain)
    with pytest.raises(RecordUseRejected) as caught:
        await record(memory, batch_id, refs)
    assert [issue.reason for issue in caught.value.issues] == reasons
    assert caught.value.available_refs == list(REFS)
    assert counters(plain) == before
    assert plain.execute("SELECT COUNT(*) FROM usage_receipts").fetchone()[0] == 0
    assert [b.id for b in await memory.gate.unresolved_batches(NS, THREAD)] == [batch_id]


async def test_record_use_of_nothing_is_always_allowed(
    memory: StrataGate, plain: sqlite3.Connection
) -> None:
    await seeded(memory)
    batch_id = await open_b(memory, REFS)
    before = counters(plain)
    result = await record(memory, None, [])
    assert (result.batch_id, result.batch_status, result.incremented) == (batch_id, "recorded", ())
    assert result.verdict is None and result.unresolved_batch_ids == ()
    assert counters(plain) == before
    assert await memory.gate.unresolved_batches(NS, THREAD) == []


async def test_record_use_reinforces_only_adopted_events(
    memory: StrataGate, plain: sqlite3.Connection
) -> None:
    await seeded(memory)
    for i in range(4):
        await memory.blocks.append_turn(NS, THREAD, user=f"turn {i}", assistant="ok")
    refs = ("event:e1", "event:e2", RAW_REF, BLOCK_REF)
    batch = await memory.gate.open_batch(
        NS, THREAD, "memory_search_events", refs, {"event:e1": "Kiln"}
    )
    other = await open_b(memory, ("event:e3",))
    await judge(memory, batch.id, ["event:e1", RAW_REF, BLOCK_REF])
    result = await record(memory, batch.id, ["event:e1", RAW_REF, "event:e1", BLOCK_REF], "rc")
    assert result.incremented == ("e1",) and result.event_ids == ("e1",)
    assert result.duplicate_evidence_refs == ("event:e1",)
    assert result.unresolved_batch_ids == (other,) and result.retrieved_count == 4
    assert counters(plain) == {"e1": (2, 4), "e2": (1, 0), "e3": (1, 0)}
    audit = json.loads(plain.execute("SELECT audit_json FROM usage_receipts").fetchone()[0])
    assert [c["evidence_ref"] for c in audit["citations"]] == ["event:e1", RAW_REF, BLOCK_REF]
    assert audit["citations"][0]["title"] == "Kiln" and audit["turn"] == 4
    assert (audit["thread_id"], audit["batch_id"], audit["verdict"]) == (
        THREAD,
        batch.id,
        "sufficient",
    )


async def test_record_use_skips_forgotten_and_foreign_events(
    memory: StrataGate, plain: sqlite3.Connection
) -> None:
    await seeded(memory, "e1", "e2")
    await add_event(memory, "x1", namespace="elsewhere")
    await memory.gate.forget_event("e2")
    batch_id = await open_b(memory, ("event:e1", "event:e2", "event:x1", "event:gone"))
    await judge(memory, batch_id, ["event:e1", "event:e2", "event:x1", "event:gone"])
    result = await record(memory, batch_id, ["event:e1", "event:e2", "event:x1", "event:gone"])
    assert result.incremented == ("e1",)
    assert {k: v[0] for k, v in counters(plain).items()} == {"e1": 2, "e2": 1, "x1": 1}


# -- receipts ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("replay", "outcome"),
    [
        ({"batch": "same", "refs": ["event:e1"]}, "replay"),
        ({"batch": None, "refs": ["event:e1"]}, "replay"),
        ({"batch": "same", "refs": [" event:e1", "event:e1"]}, "replay"),
        ({"batch": "same", "refs": []}, "conflict"),
        ({"batch": "same", "refs": ["event:e1", "event:e2"]}, "conflict"),
        ({"batch": "other", "refs": []}, "conflict"),
        ({"batch": "same", "refs": ["event:e3"]}, "rejected"),
    ],
)
async def test_receipt_replay_is_a_no_op_and_a_conflict_an_error(
    memory: StrataGate, plain: sqlite3.Connection, replay: dict[str, Any], outcome: str
) -> None:
    await seeded(memory)
    batch_id = await open_b(memory, ("event:e1", "event:e2", "event:e3"))
    await judge(memory, batch_id, ["event:e1", "event:e2"])
    first = await record(memory, batch_id, ["event:e1"], "tool:1")
    assert (first.replayed, first.incremented) == (False, ("e1",))
    other = await open_b(memory, ("event:e2",))  # a later batch: the thread's latest now
    after = counters(plain)
    target = {"same": batch_id, "other": other, None: None}[replay["batch"]]
    if outcome == "replay":
        again = await record(memory, target, replay["refs"], "tool:1")
        assert (again.replayed, again.incremented, again.batch_id) == (True, (), batch_id)
    else:
        error = ReceiptConflict if outcome == "conflict" else RecordUseRejected
        with pytest.raises(error):
            await record(memory, target, replay["refs"], "tool:1")
    assert counters(plain) == after
    assert plain.execute("SELECT COUNT(*) FROM usage_receipts").fetchone()[0] == 1


async def test_recorded_batch_cannot_be_assessed_or_recorded_again(memory: StrataGate) -> None:
    await seeded(memory)
    batch_id = await open_b(memory, REFS)
    await judge(memory, batch_id, ["event:e1"])
    await record(memory, batch_id, ["event:e1"], "a")
    with pytest.raises(BatchClosed):
        await record(memory, batch_id, ["event:e1"], "b")
    with pytest.raises(BatchClosed):
        await judge(memory, batch_id, ["event:e1"])


@pytest.mark.parametrize("receipt", ["", "   ", None])
async def test_record_use_needs_a_receipt(memory: StrataGate, receipt: Any) -> None:
    await open_b(memory, REFS)
    with pytest.raises(InvalidInput):
        await memory.gate.record_use(NS, THREAD, None, [], receipt)


# -- reinforcement only on adoption -----------------------------------------------------


async def test_reads_and_unrecorded_batches_never_reinforce(
    memory: StrataGate, plain: sqlite3.Connection
) -> None:
    await seeded(memory)
    await memory.blocks.append_turn(NS, THREAD, user="kiln", assistant="ok")
    snapshot = plain.execute("SELECT * FROM events ORDER BY id").fetchall()
    for i in range(1000):
        await memory.events.get(f"e{i % 3 + 1}")
        await memory.events.cards(NS)
        await memory.gate.event_weight("e1")
        await memory.db.read(
            lambda raw: event_rows.fts_event_candidates(raw, NS, fts_match_any(["w:event"]), 5)
        )
        batch_id = await open_b(memory, ("event:e1", "event:e2"))
        await judge(memory, batch_id, ["event:e1", "event:e2"])
    assert plain.execute("SELECT * FROM events ORDER BY id").fetchall() == snapshot
    assert len(await memory.gate.unresolved_batches(NS, THREAD)) == 1000


async def test_batches_survive_close_and_reopen_mid_turn(
    db_path: Path, plain: sqlite3.Connection
) -> None:
    memory = await StrataGate.open(db_path, MemoryConfig(block_turn_size=3))
    await seeded(memory)
    await memory.blocks.append_turn(NS, THREAD, user="kiln?", assistant="")
    batch_id = await open_b(memory, ("event:e1", RAW_REF))
    await memory.close()
    reopened = await StrataGate.open(db_path, MemoryConfig(block_turn_size=3))
    assert [b.id for b in await reopened.gate.unresolved_batches(NS, THREAD)] == [batch_id]
    await judge(reopened, None, ["event:e1"])
    result = await record(reopened, None, ["event:e1"])
    assert (result.batch_id, result.incremented) == (batch_id, ("e1",))
    assert counters(plain)["e1"] == (2, 1)
    await reopened.close()


# -- weights (§8) -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fields", "turn", "expected"),
    [
        ({}, 0, 1.0),
        ({}, 10, math.exp(-1.5)),
        ({"last_adopted_turn": 12}, 10, 1.0),
        ({"mention_count": 3}, 10, math.exp(-10 * 0.15 / (1 + 1.5 * math.log(3)))),
        ({"criticality": "preference", "floor_weight": 0.3}, 100, 0.3),
        ({"criticality": "safety", "floor_weight": 1.0}, 1000, 1.0),
        ({"floor_weight": 0.5}, 100, 0.5),
        ({"status": "superseded", "forced_cap": 0.1}, 0, 0.1),
        ({"pinned": True}, 500, 1.0),
        ({"pinned": True, "status": "forgotten"}, 0, 0.0),
        ({"status": "archived"}, 0, 0.0),
    ],
)
async def test_weight_is_computed_from_stored_fields(
    memory: StrataGate, fields: dict[str, Any], turn: int, expected: float
) -> None:
    await add_event(memory, "w", **fields)
    assert await memory.gate.event_weight("w", turn) == pytest.approx(expected)


async def test_weight_defaults_to_the_namespace_turn_and_adoption_refreshes_it(
    memory: StrataGate,
) -> None:
    await add_event(memory, "w", criticality="preference", floor_weight=0.3)
    for i in range(6):
        await memory.blocks.append_turn(NS, THREAD, user=f"u{i}", assistant="a")
    assert await memory.gate.event_weight("w") == pytest.approx(math.exp(-0.9))
    batch_id = await open_b(memory, ("event:w",))
    await judge(memory, batch_id, ["event:w"])
    await record(memory, batch_id, ["event:w"])
    assert await memory.gate.event_weight("w") == 1.0
    lam = 0.15 / (1 + 1.5 * math.log(2))
    assert await memory.gate.event_weight("w", 16) == pytest.approx(math.exp(-lam * 10))
    assert FLOORS["preference"] == 0.3


# -- pin / unpin / forget / restore -----------------------------------------------------


async def test_pin_and_unpin_are_reversible(memory: StrataGate, plain: sqlite3.Connection) -> None:
    await add_event(memory, "p")
    assert (await memory.gate.pin_event("p")).pinned
    assert plain.execute("SELECT pinned FROM events").fetchone()[0] == 1
    assert await memory.gate.event_weight("p", 1000) == 1.0
    assert not (await memory.gate.unpin_event("p")).pinned
    assert await memory.gate.event_weight("p", 1000) < 1e-6


async def test_forget_hides_the_event_everywhere_and_restore_brings_it_back(
    memory: StrataGate, plain: sqlite3.Connection
) -> None:
    receipt = await memory.blocks.append_turn(NS, THREAD, user="kiln", assistant="ok")
    await add_event(memory, "f", "Kiln firing", source_message_ids=receipt.message_ids)
    await add_event(memory, "s", "Kiln old", status="superseded", superseded_by="f")

    async def visible() -> set[str]:
        match = fts_match_any(query_tokens("kiln"))
        listed = {e.id for e in await memory.events.cards(NS)}
        found = await memory.db.read(
            lambda raw: event_rows.fts_event_candidates(raw, NS, match, 10)
        )
        recent = await memory.db.read(lambda raw: event_rows.recent_events(raw, NS, 10))
        assert listed == {r["id"] for r in found} == {e.id for e in recent}
        return listed

    assert await visible() == {"f", "s"}
    assert (await memory.gate.forget_event("f")).status == "forgotten"
    assert (await memory.gate.forget_event("s")).status == "forgotten"
    assert await visible() == set()
    assert await memory.gate.event_weight("f", 0) == 0.0
    sources = plain.execute(
        "SELECT message_id FROM event_sources WHERE event_id = 'f' ORDER BY position"
    )
    assert [r[0] for r in sources] == receipt.message_ids
    assert {e.id for e in await memory.events.cards(NS, include_hidden=True)} == {"f", "s"}
    assert (await memory.gate.restore_event("f")).status == "active"
    assert (await memory.gate.restore_event("s")).status == "superseded"
    assert (await memory.gate.restore_event("s")).status == "superseded"
    assert await visible() == {"f", "s"}


async def test_forget_errors(memory: StrataGate) -> None:
    await add_event(memory, "a", status="archived")
    with pytest.raises(InvalidInput):
        await memory.gate.forget_event("a")
    for action in (memory.gate.pin_event, memory.gate.forget_event, memory.gate.restore_event):
        with pytest.raises(NotFound):
            await action("missing")
    with pytest.raises(NotFound):
        await memory.gate.event_weight("missing")


# -- property: reinforcement only on adoption, once per receipt --------------------------

EVENT_REFS = ("event:e1", "event:e2", "event:e3", "event:e4")
ALL_REFS = (*EVENT_REFS, RAW_REF)
PICK = st.one_of(st.none(), st.none(), st.integers(0, 4))
SLOTS = st.lists(st.integers(0, 5), max_size=4)  # positions in the batch's refs; 5 = foreign
RECEIPT = st.sampled_from(["r1", "r2", "r3", "fresh"])
OPS = st.one_of(
    st.tuples(st.just("open"), st.lists(st.sampled_from(ALL_REFS), min_size=1, max_size=4)),
    st.tuples(
        st.just("assess"),
        PICK,
        st.sampled_from(["sufficient", "sufficient", "partial", "wrong", "bogus"]),
        SLOTS,
        st.sampled_from(["answer", "answer", "search_events"]),
    ),
    st.tuples(
        st.just("record"),
        PICK,
        SLOTS,
        RECEIPT,
        st.sampled_from(["adopted", "adopted", "any"]),  # slots into adopted or exposed refs
    ),
    st.tuples(st.just("read"), st.sampled_from(EVENT_REFS)),
    st.tuples(st.just("cycle"), st.lists(st.sampled_from(ALL_REFS), min_size=1), SLOTS, RECEIPT),
)


class GateWorld:
    """The real store plus what the property expects of it."""

    def __init__(self, memory: StrataGate, plain: sqlite3.Connection) -> None:
        self.memory, self.plain = memory, plain
        self.batches: dict[str, tuple[str, ...]] = {}
        self.expected = {f"e{i}": 1 for i in range(1, 5)}
        self.receipts: dict[str, str] = {}
        self.adoptions = 0

    def pick(self, index: int | None) -> str | None:
        if index is None:
            return None
        return list(self.batches)[index] if index < len(self.batches) else "batch_999"

    def receipt(self, name: str) -> str:
        return f"fresh-{len(self.receipts)}" if name == "fresh" else name

    def refs(self, batch_id: str | None, slots: list[int]) -> list[str]:
        chosen = batch_id or (list(self.batches)[-1] if self.batches else "")
        exposed = self.batches.get(chosen, ())
        return [exposed[i] if i < len(exposed) else "event:zz" for i in slots]

    async def run(self, op: tuple[Any, ...]) -> None:
        with contextlib.suppress(StrataGateError):
            await self._apply(op)
        assert {k: v[0] for k, v in counters(self.plain).items()} == self.expected

    async def _apply(self, op: tuple[Any, ...]) -> None:
        kind = op[0]
        if kind == "open":
            batch_id = await open_b(self.memory, tuple(op[1]))
            self.batches[batch_id] = tuple(dict.fromkeys(op[1]))
        elif kind == "assess":
            picked = self.pick(op[1])
            await judge(self.memory, picked, self.refs(picked, op[3]), op[2], op[4])
        elif kind == "record":
            await self._record_op(self.pick(op[1]), op[2], self.receipt(op[3]), op[4])
        elif kind == "cycle":  # open → sufficient assessment → record, each step as above
            await self._apply(("open", op[1]))
            await self._apply(("assess", None, "sufficient", op[2], "answer"))
            await self._apply(("record", None, op[2], op[3], "adopted"))
        else:
            await self.memory.events.get(op[1].removeprefix("event:"))

    async def _record_op(
        self, batch_id: str | None, slots: list[int], receipt: str, mode: str
    ) -> None:
        adopted = await self._adopted(batch_id, receipt)
        refs = self.refs(batch_id, slots)
        if mode == "adopted":  # slots index the adopted refs instead of the exposed ones
            refs = [sorted(adopted)[i % len(adopted)] for i in slots] if adopted else []
        await self._record(batch_id, refs, receipt, adopted)

    async def _record(
        self, batch_id: str | None, refs: list[str], receipt: str, adopted: set[str]
    ) -> None:
        result = await record(self.memory, batch_id, refs, receipt)
        if result.replayed:
            assert result.incremented == () and self.receipts[receipt] == result.batch_id
            return
        assert receipt not in self.receipts
        self.receipts[receipt] = result.batch_id
        assert {f"event:{i}" for i in result.incremented} <= adopted
        self.adoptions += len(result.incremented)
        for event_id in result.incremented:
            self.expected[event_id] += 1

    async def _adopted(self, batch_id: str | None, receipt: str) -> set[str]:
        batches = {b.id: b for b in await self.memory.gate.list_batches(NS, THREAD)}
        wanted = batch_id or self.receipts.get(receipt) or (list(batches)[-1] if batches else "")
        judged = batches[wanted].assessment if wanted in batches else None
        return set(judged.evidence_refs) if judged and judged.verdict == "sufficient" else set()


async def _run_ops(path: Path, ops: list[tuple[Any, ...]]) -> None:
    memory = await StrataGate.open(path)
    plain = sqlite3.connect(path)
    try:
        await seeded(memory, "e1", "e2", "e3", "e4")
        world = GateWorld(memory, plain)
        for op in ops:
            await world.run(op)
        used = plain.execute("SELECT batch_id FROM usage_receipts").fetchall()
        assert len(used) == len(set(used))  # one receipt per batch at most
    finally:
        plain.close()
        await memory.close()


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(OPS, min_size=1, max_size=20))
def test_property_random_gate_sequences_reinforce_only_adoptions(
    ops: list[tuple[Any, ...]],
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        asyncio.run(_run_ops(Path(tmp) / "memory.db", ops))


async def test_a_loop_of_a_thousand_searches_changes_no_adoption_counter(
    memory: StrataGate, plain: sqlite3.Connection
) -> None:
    await seeded(memory)
    for i in range(4):  # a sealed block so raw search and retrieve have something to find
        await memory.blocks.append_turn(NS, THREAD, user=f"event summary {i}", assistant="ok")
    before = counters(plain)
    hits = 0
    for i in range(1000):
        found = await memory.events.search(NS, "event summary")
        hits += len(found)
        if i % 10 == 0:
            hits += len(await memory.retrieval.search_raw(NS, "event summary"))
            hits += len(await memory.retrieval.retrieve(NS, "event summary"))
            await memory.retrieval.auto_context(NS, "another-thread", "event summary")
    assert hits >= 3000
    assert counters(plain) == before
    await memory.events.stamps.flush()
    stamped = plain.execute("SELECT COUNT(*) FROM events WHERE last_retrieved_at IS NOT NULL")
    assert stamped.fetchone()[0] == 3  # searches record retrieval time only
