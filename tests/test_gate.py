"""Evidence gate (spec §7): refs, assessment normalisation, record-use plans, receipts."""

import contextlib
import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from stratagate_plugin.core.errors import InvalidInput, NotFound, ReceiptConflict, StrataGateError
from stratagate_plugin.core.events.weights import WeightCounters, reinforce
from stratagate_plugin.core.gate.evidence import (
    BATCH_TOOLS,
    DEFAULT_MISSING,
    STRATEGIES,
    BatchClosed,
    MemoryProtocolError,
    RecordUseRejected,
    UnknownBatch,
    assess_batch,
    check_record_use,
    mark_recorded,
    plan_record_use,
    receipt_decision,
    receipt_payload,
    select_batch,
    with_assessment,
)
from stratagate_plugin.core.gate.records import Batch, EvidenceRef, format_ref, parse_ref

NOW = datetime(2024, 5, 1, 12, tzinfo=UTC)
REFS = (
    "event:evt_1",
    "event:evt_2",
    "raw:blk_1:msg_1:0",
    "block:blk_1:level:2",
    "graph-node:node_1",
    "graph-node:node_1:expanded",
)


def make_batch(refs: tuple[str, ...] = REFS, batch_id: str = "batch_1", sequence: int = 1) -> Batch:
    return Batch(
        id=batch_id,
        sequence=sequence,
        namespace="ns",
        thread_id="thread",
        tool="memory_search_events",
        evidence_refs=refs,
        titles={"event:evt_1": "First event"},
        created_at=NOW,
    )


def assess(batch: Batch, verdict: object = "sufficient", refs: Any = REFS[:1], **kw: Any) -> Any:
    args = {"fit": "fits", "missing": "", "next_strategy": "answer"} | kw
    return assess_batch(batch, verdict, refs, args["fit"], args["missing"], args["next_strategy"])


def judged(batch: Batch, verdict: object = "sufficient", refs: Any = REFS, **kw: Any) -> Batch:
    return with_assessment(batch, assess(batch, verdict, refs, **kw))


# -- refs -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "ref"),
    [
        ("event:evt_1", EvidenceRef("event", "evt_1")),
        ("raw:blk_1:msg_2:3", EvidenceRef("raw", "blk_1", message_id="msg_2", index=3)),
        ("block:blk_1:level:0", EvidenceRef("block", "blk_1", level=0)),
        ("block:blk_1:level:5", EvidenceRef("block", "blk_1", level=5)),
        ("graph-node:n_1", EvidenceRef("graph-node", "n_1")),
        ("graph-node:n_1:expanded", EvidenceRef("graph-node", "n_1", expanded=True)),
    ],
)
def test_parse_ref_round_trips(text: str, ref: EvidenceRef) -> None:
    assert parse_ref(text) == ref
    assert format_ref(ref) == str(ref) == text


@pytest.mark.parametrize(
    "text",
    [
        "",
        "event:",
        "event:a:b",
        " event:a",
        "raw:b:m",
        "raw:b:m:x",
        "block:b:level:6",
        "block:b:L:1",
        "graph-node:n:expandedX",
        "element:e",
        "evt_1",
    ],
)
def test_parse_ref_rejects_other_shapes(text: str) -> None:
    assert parse_ref(text) is None


def test_batch_refs_are_validated_and_deduplicated() -> None:
    assert make_batch(("event:a", "event:a", "event:b")).evidence_refs == ("event:a", "event:b")
    with pytest.raises(ValidationError):
        make_batch(("event:a", "nonsense"))


def test_batch_tools_are_the_nine_retrievals() -> None:
    assert len(BATCH_TOOLS) == 9
    assert {"memory_search_events", "memory_expand_block", "memory_get_blocks"} <= BATCH_TOOLS
    assert "memory_list_topics" not in BATCH_TOOLS


# -- assessment normalisation (§7.1) --------------------------------------------------


@pytest.mark.parametrize(
    ("verdict", "refs", "strategy", "out_verdict", "out_strategy"),
    [
        ("sufficient", ["event:evt_1"], "answer", "sufficient", "answer"),
        ("sufficient", ["event:evt_1"], "expand_event", "partial", "expand_event"),
        ("sufficient", [], "answer", "partial", "search_events"),
        ("sufficient", ["event:nope"], "answer", "partial", "search_events"),
        ("sufficient", ["", None], "answer", "partial", "search_events"),
        ("sufficient", ["event:evt_1"], "dig deeper", "partial", "search_events"),
        ("partial", ["event:evt_1"], "answer", "partial", "search_events"),
        ("partial", [], "search_graph", "partial", "search_graph"),
        ("wrong", ["event:evt_1"], "answer", "wrong", "search_events"),
        ("wrong", [], "search_raw_memory", "wrong", "search_raw_memory"),
        ("SUFFICIENT", ["event:evt_1"], "answer", "partial", "search_events"),
        ("maybe", [], "expand_block", "partial", "expand_block"),
        (None, [], None, "partial", "search_events"),
        (3, ["event:evt_1"], 7, "partial", "search_events"),
    ],
)
def test_assess_normalises_verdict_and_strategy(
    verdict: object, refs: list[object], strategy: object, out_verdict: str, out_strategy: str
) -> None:
    result = assess(make_batch(), verdict, refs, next_strategy=strategy)
    assert (result.verdict, result.next_strategy) == (out_verdict, out_strategy)


@pytest.mark.parametrize("strategy", [s for s in STRATEGIES if s != "answer"])
def test_assess_keeps_every_known_strategy(strategy: str) -> None:
    assert assess(make_batch(), "partial", [], next_strategy=strategy).next_strategy == strategy


TEN = tuple(f"event:e{i}" for i in range(10))


@pytest.mark.parametrize(
    ("batch_refs", "refs", "accepted", "rejected"),
    [
        (
            REFS,
            [5, "", "   ", None],
            [],
            [(0, "invalid_ref"), (1, "invalid_ref"), (2, "invalid_ref"), (3, "invalid_ref")],
        ),
        (REFS, ["event:evt_1", "event:evt_1"], ["event:evt_1"], [(1, "duplicate")]),
        (REFS, [" event:evt_1 ", "event:evt_1"], ["event:evt_1"], [(1, "duplicate")]),
        (REFS, ["event:zzz", "event:zzz"], [], [(0, "not_in_batch"), (1, "duplicate")]),
        (REFS, ["element:e1", "event:evt_2"], ["event:evt_2"], [(0, "not_in_batch")]),
        (TEN, list(TEN), list(TEN[:8]), [(8, "limit_exceeded"), (9, "limit_exceeded")]),
        (TEN, ["event:x", *TEN[:9]], list(TEN[:8]), [(0, "not_in_batch"), (9, "limit_exceeded")]),
        (TEN, [*TEN[:8], TEN[0], TEN[9]], list(TEN[:8]), [(8, "duplicate"), (9, "limit_exceeded")]),
        (REFS, list(REFS), list(REFS), []),
    ],
)
def test_assess_rejects_refs_per_input(
    batch_refs: tuple[str, ...],
    refs: list[object],
    accepted: list[str],
    rejected: list[tuple[int, str]],
) -> None:
    result = assess(make_batch(batch_refs), "partial", refs, next_strategy="search_events")
    assert list(result.evidence_refs) == accepted
    assert [(r.input_index, r.reason) for r in result.rejected_evidence_refs] == rejected
    assert all(r.detail for r in result.rejected_evidence_refs)


def test_assess_rejection_shows_the_input_as_given() -> None:
    result = assess(make_batch(), "partial", [5, " event:zzz "])
    assert [r.ref for r in result.rejected_evidence_refs] == ["5", " event:zzz "]


LONG = "x" * 200


@pytest.mark.parametrize(
    ("verdict", "fit", "missing", "out_fit", "out_missing"),
    [
        ("sufficient", "  direct   answer\n here ", "leftover", "direct answer here", ""),
        ("partial", "ok", "  dates\t\tmissing ", "ok", "dates missing"),
        ("partial", "ok", "   ", "ok", DEFAULT_MISSING),
        ("wrong", None, None, "", DEFAULT_MISSING),
        ("partial", LONG, LONG, "x" * 160, "x" * 160),
        ("partial", " a " + "b" * 170, "", "a " + "b" * 158, DEFAULT_MISSING),
    ],
)
def test_assess_trims_fit_and_missing(
    verdict: str, fit: object, missing: object, out_fit: str, out_missing: str
) -> None:
    result = assess(make_batch(), verdict, ["event:evt_1"], fit=fit, missing=missing)
    assert (result.fit, result.missing) == (out_fit, out_missing)


def test_assess_refuses_a_recorded_batch() -> None:
    with pytest.raises(BatchClosed):
        assess(mark_recorded(make_batch()))


@pytest.mark.parametrize("refs", ["event:evt_1", None, {"event:evt_1": 1}])
def test_ref_lists_must_be_lists(refs: Any) -> None:
    with pytest.raises(InvalidInput):
        assess(make_batch(), "sufficient", refs)
    with pytest.raises(InvalidInput):
        check_record_use(judged(make_batch()), refs)


def test_a_new_assessment_overwrites_the_old_one() -> None:
    batch = judged(make_batch(), "sufficient", ["event:evt_1"])
    again = judged(batch, "wrong", [], next_strategy="search_graph")
    assert again.assessment is not None and again.assessment.verdict == "wrong"
    assert again.status == "unresolved"


# -- batch selection ------------------------------------------------------------------


def test_select_batch_defaults_to_the_latest_by_sequence() -> None:
    batches = [make_batch(batch_id="batch_9", sequence=9), make_batch(batch_id="batch_2")]
    assert select_batch(batches, None).id == "batch_9"
    assert select_batch(batches, "batch_2").id == "batch_2"


def test_select_batch_unknown_lists_open_batches() -> None:
    batches = [mark_recorded(make_batch()), make_batch(batch_id="batch_2", sequence=2)]
    with pytest.raises(UnknownBatch) as caught:
        select_batch(batches, "batch_7")
    error = caught.value
    assert (error.latest_batch_id, error.unresolved_batch_ids) == ("batch_2", ["batch_2"])
    assert error.available_batch_ids == ["batch_1", "batch_2"]
    assert "batch_7" in str(error) and "unresolved: batch_2" in str(error)
    assert isinstance(error, NotFound) and isinstance(error, MemoryProtocolError)


@pytest.mark.parametrize("batch_id", [None, "batch_1"])
def test_select_batch_without_batches(batch_id: str | None) -> None:
    with pytest.raises(UnknownBatch, match="No retrieval batch"):
        select_batch([], batch_id)


# -- record use (§7.2) ----------------------------------------------------------------


@pytest.mark.parametrize("verdict", [None, "sufficient", "partial", "wrong"])
def test_record_use_always_allows_an_empty_list(verdict: str | None) -> None:
    batch = make_batch() if verdict is None else judged(make_batch(), verdict)
    plan = check_record_use(batch, [])
    assert (plan.evidence_refs, plan.event_ids, plan.citations) == ((), (), ())
    assert plan.batch_id == "batch_1"


def test_record_use_reinforces_only_event_refs() -> None:
    plan = check_record_use(judged(make_batch()), list(REFS))
    assert plan.event_ids == ("evt_1", "evt_2")
    assert plan.evidence_refs == REFS


@pytest.mark.parametrize(
    ("ref", "kind", "target", "detail_kind", "extra"),
    [
        (REFS[0], "event", "evt_1", "eventId", {"title": "First event"}),
        (REFS[1], "event", "evt_2", "eventId", {}),
        (REFS[2], "block", "blk_1", "blockId", {"message_id": "msg_1"}),
        (REFS[3], "block", "blk_1", "blockId", {"level": 2}),
        (REFS[4], "graph", "node_1", "nodeId", {"expanded": False}),
        (REFS[5], "graph", "node_1", "nodeId", {"expanded": True}),
    ],
)
def test_record_use_cites_every_adopted_ref(
    ref: str, kind: str, target: str, detail_kind: str, extra: dict[str, Any]
) -> None:
    (citation,) = check_record_use(judged(make_batch()), [ref]).citations
    assert (
        citation.model_dump(exclude_none=True)
        == {
            "kind": kind,
            "id": target,
            "detail_kind": detail_kind,
            "evidence_ref": ref,
            "batch_id": "batch_1",
            "title": "",
        }
        | extra
    )


def test_record_use_reports_duplicates_without_failing() -> None:
    plan = check_record_use(judged(make_batch()), ["event:evt_1", " event:evt_1", "event:evt_1"])
    assert plan.evidence_refs == ("event:evt_1",)
    assert plan.duplicate_evidence_refs == ("event:evt_1",)
    assert plan.event_ids == ("evt_1",)


ADOPTED_ONE = ("sufficient", ["event:evt_1"])


@pytest.mark.parametrize(
    ("assessment", "refs", "issues"),
    [
        (ADOPTED_ONE, ["", 4], [(0, "invalid_ref"), (1, "invalid_ref")]),
        (ADOPTED_ONE, ["event:zzz"], [(0, "not_in_batch")]),
        (ADOPTED_ONE, ["event:evt_1", "event:evt_2"], [(1, "not_adopted")]),
        (("partial", ["event:evt_1"]), ["event:evt_1"], [(0, "not_adopted")]),
        (("wrong", ["event:evt_1"]), ["event:evt_1"], [(0, "not_adopted")]),
        (None, ["event:evt_1"], [(0, "not_adopted")]),
        (
            ADOPTED_ONE,
            [None, "event:x", "event:evt_2", "event:evt_1"],
            [(0, "invalid_ref"), (1, "not_in_batch"), (2, "not_adopted")],
        ),
    ],
)
def test_record_use_aggregates_every_issue(
    assessment: tuple[str, list[str]] | None, refs: list[object], issues: list[tuple[int, str]]
) -> None:
    batch = make_batch() if assessment is None else judged(make_batch(), *assessment)
    with pytest.raises(RecordUseRejected) as caught:
        check_record_use(batch, refs)
    error = caught.value
    assert [(i.input_index, i.reason) for i in error.issues] == issues
    assert (error.batch_id, error.batch_status) == ("batch_1", "unresolved")
    assert error.available_refs == list(REFS)
    expected_adopted = ["event:evt_1"] if assessment == ADOPTED_ONE else []
    assert error.adopted_refs == expected_adopted
    assert isinstance(error, InvalidInput)


def test_record_use_refuses_a_recorded_batch_but_plans_its_replay() -> None:
    batch = mark_recorded(judged(make_batch()))
    with pytest.raises(BatchClosed):
        check_record_use(batch, [])
    assert plan_record_use(batch, ["event:evt_1"]).event_ids == ("evt_1",)


def test_record_use_audit_keeps_assessment_and_citations() -> None:
    batch = judged(make_batch(), "sufficient", ["event:evt_1"], fit="direct")
    audit = check_record_use(batch, ["event:evt_1"]).audit("thread", 7)
    assert audit["turn"] == 7 and audit["thread_id"] == "thread" and audit["batch_id"] == "batch_1"
    assert (audit["verdict"], audit["fit"], audit["missing"]) == ("sufficient", "direct", "")
    assert audit["next_strategy"] == "answer"
    assert audit["citations"][0]["evidence_ref"] == "event:evt_1"
    json.dumps(audit)
    bare = check_record_use(make_batch(), []).audit("thread", 7)
    assert bare["verdict"] is None and bare["citations"] == []


# -- receipts (§7.3) ------------------------------------------------------------------


def test_receipt_payload_sorts_and_deduplicates_event_ids() -> None:
    payload = json.loads(receipt_payload(["b", "a", "b"], {"turn": 1}))
    assert payload == {"event_ids": ["a", "b"], "audit": {"turn": 1}}


@pytest.mark.parametrize(
    ("existing", "new", "decision"),
    [
        (None, receipt_payload(["a"], {"x": 1}), "new"),
        (receipt_payload(["a"], {"x": 1}), receipt_payload(["a"], {"x": 1}), "replay"),
        (receipt_payload(["a", "b"], {}), receipt_payload(["b", "a"], {}), "replay"),
        ('{"audit": {}, "event_ids": []}', '{"event_ids":[],"audit":{}}', "replay"),
    ],
)
def test_receipt_decision_new_or_replay(existing: str | None, new: str, decision: str) -> None:
    assert receipt_decision(existing, new) == decision


@pytest.mark.parametrize(
    ("existing", "new"),
    [
        (receipt_payload(["a"], {"x": 1}), receipt_payload(["a", "b"], {"x": 1})),
        (receipt_payload(["a"], {"x": 1}), receipt_payload(["a"], {"x": 2})),
        (receipt_payload([], {"batch_id": "batch_1"}), receipt_payload([], {"batch_id": "b2"})),
    ],
)
def test_receipt_decision_conflicting_replay_raises(existing: str, new: str) -> None:
    with pytest.raises(ReceiptConflict):
        receipt_decision(existing, new)


def test_protocol_errors_are_memory_errors() -> None:
    assert issubclass(MemoryProtocolError, StrataGateError)
    assert issubclass(BatchClosed, MemoryProtocolError)


# -- property: the gate over random protocol runs -------------------------------------

UNIVERSE = (*(f"event:e{i}" for i in range(4)), "raw:b:m:0", "block:b:level:3", "graph-node:n")
# An int picks the selected batch's ref at that position; strings are sent as they are.
ref_inputs = st.lists(
    st.sampled_from((0, 0, 1, 1, 2, 3, "event:ghost", "", " event:e0", "raw:b:m:0")),
    max_size=4,
)
batch_pick = st.sampled_from((None, None, None, 0, 1, 2, -1))
exposed = st.lists(st.sampled_from(UNIVERSE), min_size=1, max_size=5)
verdicts = st.sampled_from(("sufficient", "sufficient", "sufficient", "partial", "wrong", "bogus"))
strategies = st.sampled_from(("answer", "answer", "answer", "search_events", "bogus"))
receipts = st.sampled_from("rstu")
picks = st.lists(st.sampled_from((0, 1, 2, 3, 4, "event:ghost")), min_size=1, max_size=4)
operations = st.lists(
    st.one_of(
        st.tuples(st.just("open"), exposed),
        st.tuples(st.just("assess"), batch_pick, verdicts, ref_inputs, strategies),
        st.tuples(st.just("record"), batch_pick, ref_inputs, receipts),
        st.tuples(st.just("replay"), st.integers(0, 5)),
        st.tuples(st.just("cycle"), exposed, verdicts, picks, strategies, picks, receipts),
    ),
    max_size=30,
)


@dataclass
class World:
    """A tiny in-memory store driven only through the pure gate functions."""

    batches: dict[str, Batch] = field(default_factory=dict)
    counters: dict[str, WeightCounters] = field(default_factory=dict)
    receipts: dict[str, str] = field(default_factory=dict)
    reinforced: list[tuple[str, str, str]] = field(default_factory=list)
    calls: list[tuple[str | None, list[object], str, int]] = field(default_factory=list)
    turn: int = 0

    def batch_id(self, pick: int | None) -> str | None:
        ids = list(self.batches)
        return None if pick is None else ids[pick] if 0 <= pick < len(ids) else "batch_missing"

    def open(self, refs: list[str]) -> None:
        n = len(self.batches) + 1
        self.batches[f"batch_{n}"] = make_batch(tuple(refs), f"batch_{n}", n)

    def select(self, pick: int | None, inputs: list[object]) -> tuple[Batch, list[object]]:
        """The batch, and inputs with ints resolved to its assessed (else exposed) refs."""
        batch = select_batch(list(self.batches.values()), self.batch_id(pick))
        judgement = batch.assessment
        refs = judgement.evidence_refs if judgement and judgement.evidence_refs else ()
        refs = refs or batch.evidence_refs
        return batch, [refs[i % len(refs)] if isinstance(i, int) else i for i in inputs]

    def assess(self, pick: int | None, verdict: str, inputs: list[object], strategy: str) -> None:
        batch, refs = self.select(pick, inputs)
        was_recorded = batch.status == "recorded"
        try:
            result = assess(batch, verdict, refs, next_strategy=strategy)
        except BatchClosed:
            assert was_recorded
            return
        assert not was_recorded
        self.batches[batch.id] = with_assessment(batch, result)

    def record(self, batch_id: str | None, refs: list[object], receipt: str, turn: int) -> None:
        batch = select_batch(list(self.batches.values()), batch_id)
        plan = plan_record_use(batch, refs)
        payload = receipt_payload(plan.event_ids, plan.audit("thread", turn))
        if receipt_decision(self.receipts.get(receipt), payload) == "replay":
            return
        check_record_use(batch, refs)
        self.calls.append((batch.id, refs, receipt, turn))
        for event_id in dict.fromkeys(plan.event_ids):
            start = WeightCounters(last_adopted_turn=0)
            self.counters[event_id] = reinforce(self.counters.get(event_id, start), turn)
            self.reinforced.append((receipt, batch.id, event_id))
        self.receipts[receipt] = payload
        self.batches[batch.id] = mark_recorded(batch)

    def run(self, op: tuple[Any, ...]) -> None:
        self.turn += 1
        match op:
            case ("open", refs):
                self.open(refs)
            case ("assess", pick, verdict, refs, strategy):
                self.assess(pick, verdict, refs, strategy)
            case ("record", pick, inputs, receipt):
                batch, refs = self.select(pick, inputs)
                self.record(batch.id, refs, receipt, self.turn)
            case ("cycle", refs, verdict, assessed, strategy, adopted, receipt):
                self.open(refs)
                self.run(("assess", None, verdict, assessed, strategy))
                self.run(("record", None, adopted, receipt))
            case ("replay", index) if self.calls:
                self.replay(self.calls[index % len(self.calls)])

    def replay(self, call: tuple[str | None, list[object], str, int]) -> None:
        before = (dict(self.counters), len(self.reinforced))
        try:
            self.record(*call)
        except StrataGateError as error:
            raise AssertionError(f"an identical replay must be a no-op: {error}") from error
        assert (self.counters, len(self.reinforced)) == before


def adopted_events(batch: Batch) -> set[str]:
    judgement = batch.assessment
    if judgement is None or judgement.verdict != "sufficient":
        return set()
    return {ref.removeprefix("event:") for ref in judgement.evidence_refs if ref[:6] == "event:"}


@settings(max_examples=300, deadline=None)
@given(operations)
def test_gate_reinforces_only_adopted_events_once_per_receipt(ops: list[tuple[Any, ...]]) -> None:
    world = World()
    for op in ops:
        with contextlib.suppress(StrataGateError):
            world.run(op)
    pairs = [(receipt, event_id) for receipt, _, event_id in world.reinforced]
    assert len(pairs) == len(set(pairs))
    for _, batch_id, event_id in world.reinforced:
        batch = world.batches[batch_id]
        assert batch.status == "recorded"
        assert event_id in adopted_events(batch)
    for event_id, counters in world.counters.items():
        times = sum(1 for _, _, e in world.reinforced if e == event_id)
        assert counters.mention_count == 1 + times


def test_gate_scenario_record_replay_conflict() -> None:
    world = World()
    world.run(("open", ["event:e0", "event:e1", "raw:b:m:0"]))
    world.run(("assess", None, "sufficient", ["event:e0", "raw:b:m:0"], "answer"))
    world.run(("record", None, ["event:e0", "raw:b:m:0"], "r"))
    assert world.counters["e0"] == WeightCounters(mention_count=2, last_adopted_turn=3)
    assert "e1" not in world.counters
    world.run(("replay", 0))
    with pytest.raises(BatchClosed):
        world.run(("record", None, [], "s"))
    with pytest.raises(ReceiptConflict):
        world.run(("record", None, ["event:e0"], "r"))
    assert world.counters["e0"].mention_count == 2
