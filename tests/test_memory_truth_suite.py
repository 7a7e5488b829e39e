"""The memory-truth suite's machinery (benchmarks/memory_truth.py, issue 23): a scenario any
engine passes does pass, a broken expectation is reported as a failure with its reason,
and the checks judge states and answers as they say. The suite's pass rate is not asserted
here: it measures the engine."""

import json
import sqlite3
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest

from benchmarks import memory_truth, source_precision
from benchmarks.truth_scenarios import (
    CATEGORIES,
    Import,
    Scenario,
    Session,
    all_scenarios,
    heldout2_scenarios,
    heldout_scenarios,
)
from benchmarks.truth_scenarios.checks import (
    ActiveCount,
    Answer,
    CitesOnly,
    Kept,
    NoAgentOnly,
    Precise,
    Reinforced,
    Replaced,
    Standing,
    content_terms,
    lost_detail,
)
from benchmarks.truth_scenarios.world import Event
from stratagate_plugin.core.clock import utc_now
from stratagate_plugin.core.config import MemoryConfig
from stratagate_plugin.core.events.documents import EVENT_RULES
from stratagate_plugin.core.events.weights import new_card
from stratagate_plugin.core.llm.base import ScriptedModel
from stratagate_plugin.core.memory import StrataGate
from stratagate_plugin.core.store import event_rows

FACT = "We finished the kitchen tiling on Saturday."
SAID = {FACT: ["m1"], "I switched to night shifts.": ["m3"], "Again: I switched.": ["m5"]}


def plain_fact(**expect: object) -> Scenario:
    """One fact in one session, then a question about it in another: true on any engine."""
    steps = (Session("a", 1, (FACT, "The grout is grey.")),)
    fields = {"answer": Answer("When did we finish the kitchen tiling?", has=("tiling",))}
    return Scenario("machinery", "provenance", "en", steps, **{**fields, **expect})  # type: ignore[arg-type]


def event(
    id: str, text: str, *sources: tuple[str, str, str], status: str = "active", mentions: int = 1
) -> Event:
    return Event(id, status, None, mentions, text, list(sources))


USER_FACT = ("m1", "user", FACT)
AGENT_ECHO = ("m2", "assistant", "From what you told me before: - You said: " + FACT)


async def test_a_fact_then_a_question_about_it_passes() -> None:
    outcome = await memory_truth.run_scenario(
        plain_fact(checks=(Standing(FACT), NoAgentOnly()), echo=True)
    )
    assert outcome.passed, outcome.failures
    assert "tiling" in outcome.answer


async def test_broken_expectations_are_failures_with_their_reasons() -> None:
    broken = plain_fact(
        checks=(Standing("I never said this."), ActiveCount(("tiling",), 2)),
        answer=Answer("When did we finish the kitchen tiling?", abstain=True),
    )
    outcome = await memory_truth.run_scenario(broken)
    assert not outcome.passed
    assert outcome.failures[0] == "no event cites 'I never said this.'"
    assert outcome.failures[1] == "1 active events say ('tiling',)"
    assert "instead of abstaining" in outcome.failures[2]


async def test_the_cli_world_runs_the_same_scenario_through_the_commands() -> None:
    scenario = plain_fact(checks=(Standing(FACT),), via="cli")
    outcome = await memory_truth.run_scenario(scenario)
    assert outcome.passed, outcome.failures


async def test_a_crash_is_a_failed_scenario_not_a_failed_run() -> None:
    scenario = replace(plain_fact(), steps=(Import("not JSON", fmt="mem0"),))
    outcome = await memory_truth.run_scenario(scenario)
    assert not outcome.passed and outcome.failures[0].startswith("crashed: ")


def test_the_suite_has_60_scenarios_in_every_category_and_both_languages() -> None:
    scenarios = all_scenarios()
    assert len(scenarios) >= 60
    assert len({s.id for s in scenarios}) == len(scenarios)
    cells = Counter((s.category, s.lang) for s in scenarios)
    assert all(cells[(c, lang)] >= 5 for c in CATEGORIES for lang in ("en", "zh"))
    assert {s.via for s in scenarios} == {"engine", "cli"}
    for s in scenarios:  # every scenario checks something
        assert s.checks or s.answer, s.id


def test_the_heldout_set_has_36_scenarios_three_per_category_and_language() -> None:
    held = heldout_scenarios()
    assert len(held) == 36
    assert all(s.id.startswith("held-") for s in held)
    cells = Counter((s.category, s.lang) for s in held)
    assert cells == {(c, lang): 3 for c in CATEGORIES for lang in ("en", "zh")}
    dev_ids = {s.id for s in all_scenarios()}
    assert len({s.id for s in held}) == 36 and not dev_ids & {s.id for s in held}
    for s in held:
        assert s.checks or s.answer, s.id
    assert [s.id for s in memory_truth.scenario_set("dev")] == [s.id for s in all_scenarios()]
    assert len(memory_truth.scenario_set("all")) == len(dev_ids) + 36 + 36
    assert [s.id for s in memory_truth.selected("merge", "heldout")] == [
        s.id for s in held if s.category == "merge"
    ]
    assert memory_truth.selected("held-prov-en-01", "dev") == []


def test_the_second_heldout_set_has_36_scenarios_three_per_category_and_language() -> None:
    """Built only, never run here: the set stays unseen."""
    held2 = heldout2_scenarios()
    assert len(held2) == 36
    assert all(s.id.startswith("held2-") for s in held2)
    cells = Counter((s.category, s.lang) for s in held2)
    assert cells == {(c, lang): 3 for c in CATEGORIES for lang in ("en", "zh")}
    every = [*all_scenarios(), *heldout_scenarios(), *held2]
    assert len({s.id for s in every}) == len(every)
    for s in held2:
        assert s.checks or s.answer, s.id
        assert all(isinstance(step, Session | Import) for step in s.steps), s.id
    for s in (s for s in held2 if s.category == "abstention"):
        assert s.answer is not None and s.answer.abstain, s.id
    assert [s.id for s in memory_truth.scenario_set("heldout2")] == [s.id for s in held2]
    assert [s.id for s in memory_truth.scenario_set("all")] == [s.id for s in every]
    assert [s.id for s in memory_truth.selected("repeat", "heldout2")] == [
        s.id for s in held2 if s.category == "repeat"
    ]
    assert memory_truth.selected("held2-prov-en-01", "heldout") == []
    assert memory_truth.parse_args(["--set", "heldout2"]).which == "heldout2"


def test_content_terms_are_stemmed_words_and_han_bigrams_without_function_characters() -> None:
    assert content_terms("The user said: I'm running 5k on Tuesdays") == {
        "w:run",
        "w:5k",
        "w:tuesday",
    }
    assert content_terms("我的主管刘婷") == {"h2:主管", "h2:管刘", "h2:刘婷"}


def test_cites_only_wants_exactly_the_stating_message() -> None:
    check = CitesOnly(FACT, ("tiling",))
    assert check.failure([event("e1", FACT, USER_FACT)], SAID) is None
    earlier = ("m0", "user", "My mother lives in Nanjing.")
    failure = check.failure([event("e1", FACT, earlier)], SAID)
    assert failure is not None and "My mother lives in Nanjing." in failure
    assert check.failure([], SAID) == "no active event says ('tiling',)"


def test_precise_and_no_agent_only() -> None:
    unrelated = ("m0", "user", "My mother lives in Nanjing.")
    assert Precise().failure([event("e1", FACT, USER_FACT, AGENT_ECHO)], SAID) is None
    assert "unrelated" in (Precise().failure([event("e1", FACT, unrelated)], SAID) or "")
    assert "only by agent" in (NoAgentOnly().failure([event("e1", FACT, AGENT_ECHO)], SAID) or "")
    old = event("e2", FACT, AGENT_ECHO, status="superseded")
    assert NoAgentOnly().failure([old], SAID) is None


def test_reinforced_wants_one_card_with_every_saying_and_its_mentions() -> None:
    texts = ("I switched to night shifts.", "Again: I switched.")
    first, again = ("m3", "user", texts[0]), ("m5", "user", texts[1])
    check = Reinforced(texts)
    assert check.failure([event("e1", "night shifts", first, again, mentions=2)], SAID) is None
    assert check.failure([event("e1", "x", first), event("e2", "x", again)], SAID) == (
        "2 active events for one fact said 2 times"
    )
    assert "mention count 1" in (check.failure([event("e1", "x", first, again)], SAID) or "")
    hello = ("m7", "user", "Morning!")
    also = check.failure([event("e1", "x", first, again, hello, mentions=3)], SAID)
    assert also == "event 'x' also cites 'Morning!'"


def test_replaced_and_standing() -> None:
    old_text, new_text = "I switched to night shifts.", "Again: I switched."
    old = event("e1", "night", ("m3", "user", old_text), status="superseded")
    new = event("e2", "day", ("m5", "user", new_text))
    assert Replaced(old_text, new_text).failure([old, new], SAID) is None
    still = event("e1", "night", ("m3", "user", old_text))
    assert "still active" in (Replaced(old_text, new_text).failure([still, new], SAID) or "")
    assert Standing(old_text).failure([still], SAID) is None
    assert "superseded" in (Standing(old_text).failure([old], SAID) or "")


def test_kept_and_lost_detail_after_an_import() -> None:
    local = event("e1", "I prefer aisle seats and kosher meals", USER_FACT)
    merged = event("e2", "Prefers aisle seats and kosher meals on flights", ("m9", "user", "x"))
    narrower = event("e3", "Prefers aisle seats", ("m9", "user", "x"))
    replaced = event("e1", local.text, USER_FACT, status="superseded")
    assert lost_detail([local], [replaced, merged], SAID, FACT) is None
    lost = lost_detail([local], [replaced, narrower], SAID, FACT)
    assert lost is not None and "kosher" in lost and "meal" in lost
    assert Kept(("aisle", "kosher")).failure([merged], SAID) is None
    assert Kept(("aisle", "kosher")).failure([narrower], SAID) is not None


@pytest.mark.parametrize(
    ("answer", "expect", "failed"),
    [
        ("I can't confirm that from memory.", Answer("q", abstain=True), False),
        ("我无法从记忆中确认这一点。", Answer("q", abstain=True), False),
        ("From what you told me before:\n- You said: June", Answer("q", abstain=True), True),
        ("I can't confirm that from memory.", Answer("q", has=("June",)), True),
        (
            "From what you told me before:\n- moved to June\n- was May",
            Answer("q", first=("June",)),
            False,
        ),
        (
            "From what you told me before:\n- in May\n- moved to June",
            Answer("q", first=("June",)),
            True,
        ),
        ("From what you told me before:\n- in May", Answer("q", has=("June",)), True),
        (
            "From what you told me before:\n- it was cancelled",
            Answer("q", first=("called off|cancel",)),
            False,
        ),
    ],
)
def test_answer_checks(answer: str, expect: Answer, failed: bool) -> None:
    assert (expect.failure(answer) is not None) is failed


def test_the_question_session_changing_events_is_reported() -> None:
    before = [event("e1", FACT, USER_FACT)]
    after = [
        event("e1", FACT, USER_FACT, status="superseded"),
        event("e2", "You said: " + FACT, AGENT_ECHO),
    ]
    failures = memory_truth.echo_failures(before, after, SAID)
    assert len(failures) == 3
    assert "made event" in failures[0] and "became superseded" in failures[1]
    assert "only by agent" in failures[2]
    assert memory_truth.echo_failures(before, before, SAID) == []
    reinforced_by_echo = [event("e1", FACT, USER_FACT, AGENT_ECHO)]
    [failure] = memory_truth.echo_failures(before, reinforced_by_echo, SAID)
    assert "now cites the agent's answer" in failure


def test_main_prints_the_table_writes_json_and_is_strict_only_when_asked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = Scenario("broken", "abstention", "zh", plain_fact().steps, (Standing("never"),))
    monkeypatch.setattr(memory_truth, "all_scenarios", lambda: [plain_fact(), broken])
    out = tmp_path / "truth.json"
    assert memory_truth.main(["--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "| provenance | 1/1 | 0/0 | 1/1 |" in printed
    assert "| abstention | 0/0 | 0/1 | 0/1 |" in printed
    assert "FAIL broken: no event cites 'never'" in printed
    report = json.loads(out.read_text(encoding="utf-8"))
    assert (report["passed"], report["total"]) == (1, 2)
    assert memory_truth.main(["--strict", "--only", "broken"]) == 1
    assert memory_truth.main(["--strict", "--only", "machinery"]) == 0


async def test_source_precision_counts_person_sources_and_agent_only_events(tmp_path: Path) -> None:
    """A model's careless citations are cleaned by derivation's source check; cards written
    past it (as a store would hold from an older version) are counted as imprecise."""
    db = tmp_path / "m.db"
    model = ScriptedModel.of([])
    async with await StrataGate.open(db, MemoryConfig(block_turn_size=2), model) as memory:
        first = await memory.blocks.append_turn(
            "ns", "t", user="Caroline: I adopted a puppy.", assistant="Melanie: Lovely!"
        )
        second = await memory.blocks.append_turn(
            "ns", "t", user="Caroline: The weather is grim.", assistant="The build passed."
        )
        puppy, melanie = first.message_ids
        weather, agent = second.message_ids

        def card(title: str, *sources: str) -> dict[str, object]:
            return {
                "title": title,
                "summary": title,
                "source_message_ids": [*sources],
                "scope": "user",
            }

        summary = {"title": "T", "tags": [], "summary": "S", "keypoints": ["k"]}
        cards = [
            card("Caroline adopted a puppy", puppy, weather),  # the weather is not about it
            card("Melanie finds the puppy lovely", melanie),  # a person's, as role assistant
            card("The build passed", agent),  # the unnamed agent's alone
        ]
        model.push(summary, {"should_extract": True, "events": cards})
        await memory.derivation.process_pending()
    checked = source_precision.measure(db)
    assert (checked["events"], checked["cited_messages"], checked["source_precision"]) == (2, 2, 1)
    assert (checked["assistant_only_events"], checked["unnamed_assistant_only_events"]) == (1, 0)

    async with await StrataGate.open(db, MemoryConfig(block_turn_size=2)) as memory:
        await memory.db.write(
            lambda raw: _unchecked(raw, "Caroline walks the puppy", puppy, weather)
        )
        await memory.db.write(lambda raw: _unchecked(raw, "The build passed", agent))
    result = source_precision.measure(db)
    assert (result["events"], result["cited_messages"], result["cited_person_messages"]) == (
        4,
        5,
        4,
    )
    assert result["source_precision"] == round(3 / 4, 4)
    assert (result["assistant_only_events"], result["unnamed_assistant_only_events"]) == (2, 1)
    [example] = result["imprecise_examples"]
    assert example["cited"] == "Caroline: The weather is grim."


def _unchecked(raw: sqlite3.Connection, title: str, *sources: str) -> None:
    """A card stored directly, past derivation's source check."""
    card = new_card(
        namespace="ns",
        pool="conversation",
        title=title,
        summary=title,
        tags=[],
        source_block_id=None,
        source_message_ids=list(sources),
        formed_turn=1,
        temporal={},
        scope="user",
        criticality="routine",
        created_at=utc_now(),
    )
    event_rows.insert_event(raw, card, EVENT_RULES)
