"""memory_remember through the real store: every outcome, provenance, lock discipline."""

import asyncio
import json
import sqlite3
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from stratagate_plugin.core.config import MemoryConfig
from stratagate_plugin.core.errors import InvalidInput
from stratagate_plugin.core.events.cards import EventCard
from stratagate_plugin.core.events.documents import EVENT_RULES
from stratagate_plugin.core.llm.base import ModelServerError, ScriptedModel, StructuredTask, T
from stratagate_plugin.core.llm.offline.model import OfflineModel
from stratagate_plugin.core.memory import StrataGate
from stratagate_plugin.core.records import MessageIn
from stratagate_plugin.core.remember.rules import DECIDE_AGENT_MEMORY, MemoryDecision
from stratagate_plugin.core.remember.service import Remembered, remember
from stratagate_plugin.core.store import event_rows
from stratagate_plugin.core.store.turns import NewSpaceDefaults, ensure_space
from stratagate_plugin.core.text.search_terms import fts_match_any, query_tokens

NOW = datetime(2024, 5, 1, 12, tzinfo=UTC)
NS, THREAD = "ns", "t"
KNOWN = "Alice adopted a grey cat named Miso last spring"
RELATED = "Alice cat Miso likes tuna treats"  # containment 0.5 with KNOWN: ambiguous


async def add_event(
    memory: StrataGate, event_id: str, text: str, pool: str = "conversation"
) -> None:
    card = EventCard(
        id=event_id,
        namespace=NS,
        pool=pool,  # type: ignore[arg-type]
        title=text,
        summary=text,
        tags=["pets"],
        source_block_id=None,
        source_message_ids=[],
        formed_turn=0,
        temporal={},
        scope="user",
        last_adopted_turn=0,
        created_at=NOW,
        updated_at=NOW,
    )

    def unit(raw: sqlite3.Connection) -> None:
        ensure_space(raw, NS, NewSpaceDefaults(3, 0.3), NOW.isoformat())
        event_rows.insert_event(raw, card, EVENT_RULES)

    await memory.db.write(unit)


async def talk(memory: StrataGate, turns: int = 2, thread: str = THREAD) -> list[str]:
    ids: list[str] = []
    for i in range(turns):
        receipt = await memory.blocks.append_turn(
            NS, thread, user=f"question {i}", assistant=f"answer {i}"
        )
        ids += receipt.message_ids
    return ids


def row(plain: sqlite3.Connection, event_id: str) -> sqlite3.Row:
    found: sqlite3.Row = plain.execute("SELECT * FROM events WHERE id = ?", (event_id,)).fetchone()
    return found


def sources(plain: sqlite3.Connection, event_id: str) -> list[str]:
    rows = plain.execute(
        "SELECT message_id FROM event_sources WHERE event_id = ? ORDER BY position", (event_id,)
    )
    return [r[0] for r in rows]


def count(plain: sqlite3.Connection, pool: str = "agent") -> int:
    return int(plain.execute("SELECT COUNT(*) FROM events WHERE pool = ?", (pool,)).fetchone()[0])


def decision(action: str, targets: list[str], confidence: float = 0.9) -> dict[str, Any]:
    return {"action": action, "target_event_ids": targets, "confidence": confidence, "reason": "r"}


# -- added without a decider ------------------------------------------------------------


@pytest.mark.parametrize(
    ("category", "tag", "criticality", "floor", "event_type"),
    [
        (None, "category:fact", "routine", 0.0, "other"),
        ("fact", "category:fact", "routine", 0.0, "other"),
        ("preference", "category:preference", "preference", 0.3, "other"),
        ("decision", "category:decision", "routine", 0.0, "decision"),
        ("correction", "category:correction", "routine", 0.0, "change"),
    ],
)
async def test_remember_clear_new_is_added_to_the_agent_pool(
    memory: StrataGate,
    plain: sqlite3.Connection,
    category: Any,
    tag: str,
    criticality: str,
    floor: float,
    event_type: str,
) -> None:
    ids = await talk(memory)
    model = ScriptedModel.of([])
    text = "Bob prefers green tea! He drinks it every morning."
    result = await remember(memory.storage.remember, model, NS, THREAD, text, category, now=NOW)
    assert (result.action, result.gate, result.recorded, result.weight) == (
        "ADDED",
        "clear-new",
        True,
        1.0,
    )
    stored = row(plain, str(result.event_id))
    assert (stored["pool"], stored["source_block_id"], stored["scope"]) == ("agent", None, "user")
    assert (stored["title"], stored["summary"]) == ("Bob prefers green tea", text)
    assert json.loads(stored["tags_json"]) == ["agent-recorded", tag]
    assert (stored["criticality"], stored["floor_weight"]) == (criticality, floor)
    assert stored["formed_turn"] == stored["last_adopted_turn"] == 2
    temporal = json.loads(stored["temporal_json"])
    assert temporal == {
        "mentioned_at": NOW.isoformat(),
        "thread_id": THREAD,
        "event_type": event_type,
    }
    assert sources(plain, str(result.event_id)) == []  # earlier turns are not its source
    assert result.provenance is not None and result.provenance.kind == "pending"
    turn = await memory.blocks.append_turn(NS, THREAD, user=text, assistant="Noted.")
    assert sources(plain, str(result.event_id)) == [turn.message_ids[0]]
    assert ids and model.requests == []


# -- provenance -------------------------------------------------------------------------


async def test_the_event_cites_the_user_message_of_the_turn_it_was_written_in(
    db_path: Path, plain: sqlite3.Connection
) -> None:
    """Not the tail before it: the turn is recorded after its tools ran, and its recording
    cites its user message in the same transaction; the next turn adds nothing."""
    memory = await StrataGate.open(db_path, MemoryConfig(block_turn_size=10))
    for i in range(4):
        messages = [
            MessageIn(role="user", content=f"u{i}"),
            MessageIn(role="assistant", content="a"),
        ]
        await memory.blocks.record_turn(NS, THREAD, messages)
    result = await remember(memory.storage.remember, None, NS, THREAD, "Carol lives in Oslo")
    assert result.provenance is not None
    assert (result.provenance.kind, result.provenance.thread_id) == ("pending", THREAD)
    assert sources(plain, str(result.event_id)) == []
    said = [
        MessageIn(role="user", content="Please remember that Carol lives in Oslo now"),
        MessageIn(role="tool", content="tool output"),
        MessageIn(role="assistant", content="Noted."),
    ]
    turn = await memory.blocks.record_turn(NS, THREAD, said)
    await memory.blocks.record_turn(
        NS, THREAD, [MessageIn(role="user", content="Carol again: Oslo")]
    )
    assert sources(plain, str(result.event_id)) == [turn.message_ids[0]]
    assert plain.execute("SELECT COUNT(*) FROM pending_citations").fetchone()[0] == 0
    await memory.close()


async def test_a_turn_of_several_user_messages_cites_the_one_stating_the_fact(
    memory: StrataGate, plain: sqlite3.Connection
) -> None:
    await talk(memory, 3)  # a sealed block before: never cited
    result = await remember(memory.storage.remember, None, NS, THREAD, "Carol lives in Oslo")
    turn = await memory.blocks.record_turn(
        NS,
        THREAD,
        [
            MessageIn(role="user", content="Carol lives in Oslo."),
            MessageIn(role="user", content="And what's the weather like?"),
        ],
    )
    assert sources(plain, str(result.event_id)) == [turn.message_ids[0]]
    assert row(plain, str(result.event_id))["source_block_id"] is None


async def test_a_reinforced_event_gains_the_turn_as_a_source(
    memory: StrataGate, plain: sqlite3.Connection
) -> None:
    first = await remember(memory.storage.remember, None, NS, THREAD, "Carol lives in Oslo")
    one = await memory.blocks.append_turn(NS, THREAD, user="Carol lives in Oslo", assistant="ok")
    again = await remember(memory.storage.remember, None, NS, "other", "Carol lives in Oslo")
    two = await memory.blocks.append_turn(
        NS, "other", user="Remember: Carol lives in Oslo", assistant=""
    )
    assert again.action == "REINFORCED" and again.reinforced_event_id == first.event_id
    assert sources(plain, str(first.event_id)) == [one.message_ids[0], two.message_ids[0]]


@pytest.mark.parametrize("namespace", [NS, "brand-new"])
async def test_a_thread_without_messages_cites_nothing(
    memory: StrataGate, plain: sqlite3.Connection, namespace: str
) -> None:
    await talk(memory, thread="other")
    result = await remember(memory.storage.remember, None, namespace, THREAD, "Carol lives in Oslo")
    assert result.provenance is not None and result.provenance.kind == "pending"
    assert result.action == "ADDED" and sources(plain, str(result.event_id)) == []
    stored = row(plain, str(result.event_id))
    assert (stored["namespace"], stored["source_block_id"]) == (namespace, None)


# -- duplicates --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pool", "content", "gate"),
    [
        ("conversation", KNOWN, "exact-duplicate"),
        ("agent", KNOWN, "exact-duplicate"),
        ("conversation", "  alice ADOPTED a grey cat named Miso   last spring ", "exact-duplicate"),
        ("conversation", f"{KNOWN}!", "near-duplicate"),
        ("agent", "Alice adopted a grey cat named Miso", "near-duplicate"),
    ],
)
async def test_duplicates_reinforce_the_existing_event(
    memory: StrataGate, plain: sqlite3.Connection, pool: str, content: str, gate: str
) -> None:
    await add_event(memory, "known", KNOWN, pool)
    await talk(memory)
    before = count(plain, "agent")
    result = await remember(memory.storage.remember, ScriptedModel.of([]), NS, THREAD, content)
    assert (result.action, result.gate, result.reinforced_event_id) == ("REINFORCED", gate, "known")
    assert result.event_id is None and result.weight == 1.0
    assert (row(plain, "known")["mention_count"], row(plain, "known")["last_adopted_turn"]) == (
        2,
        2,
    )
    assert count(plain, "agent") == before


async def test_remembering_twice_reinforces_the_first(
    memory: StrataGate, plain: sqlite3.Connection
) -> None:
    first = await remember(
        memory.storage.remember, None, NS, THREAD, "Dan's laptop is a ThinkPad X1"
    )
    second = await remember(
        memory.storage.remember, None, NS, THREAD, "Dan's laptop is a ThinkPad X1"
    )
    assert second.reinforced_event_id == first.event_id
    assert row(plain, str(first.event_id))["mention_count"] == 2 and count(plain) == 1


async def test_forgotten_events_are_not_duplicates(
    memory: StrataGate, plain: sqlite3.Connection
) -> None:
    await add_event(memory, "known", KNOWN)
    await memory.gate.forget_event("known")
    result = await remember(memory.storage.remember, None, NS, THREAD, KNOWN)
    assert (result.action, result.gate) == ("ADDED", "clear-new")
    assert row(plain, "known")["mention_count"] == 1


# -- the decider --------------------------------------------------------------------------


def links(plain: sqlite3.Connection, event_id: str, key: str) -> list[str]:
    value: list[str] = json.loads(row(plain, event_id)["temporal_json"]).get(key, [])
    return value


@pytest.mark.parametrize(
    ("answer", "action", "downgraded"),
    [
        (decision("ADD", [], 0.9), "ADDED", None),
        (decision("MERGE", ["known"], 0.9), "MERGED", None),
        (decision("SUPERSEDE", ["known"], 0.95), "SUPERSEDED", None),
        (decision("CONFLICT", ["known"], 0.7), "CONFLICT_MARKED", None),
        (decision("CONFLICT", [], 0.7), "CONFLICT_MARKED", None),
        (decision("IGNORE", [], 0.9), "IGNORED", None),
        (decision("MERGE", ["known"], 0.5), "CONFLICT_MARKED", "MERGE"),
        (decision("SUPERSEDE", ["elsewhere"], 0.99), "CONFLICT_MARKED", "SUPERSEDE"),
    ],
)
async def test_decider_outcomes_are_applied(
    memory: StrataGate,
    plain: sqlite3.Connection,
    answer: dict[str, Any],
    action: str,
    downgraded: str | None,
) -> None:
    await add_event(memory, "known", KNOWN)
    model = ScriptedModel.of([answer])
    result = await remember(memory.storage.remember, model, NS, THREAD, RELATED)
    assert (result.action, result.gate, result.downgraded_from) == (action, "decider", downgraded)
    [task] = model.requests
    assert task.name == DECIDE_AGENT_MEMORY
    assert [m["event_id"] for m in task.payload["existing"]] == ["known"]
    await check_applied(memory, plain, result)


async def check_applied(memory: StrataGate, plain: sqlite3.Connection, result: Remembered) -> None:
    """What each outcome must have done to the stored events."""
    known = row(plain, "known")
    written = {
        "ADDED": 1,
        "SUPERSEDED": 1,
        "CONFLICT_MARKED": 1,
        "MERGED": 0,
        "IGNORED": 0,
    }[result.action]
    assert count(plain) == written and result.recorded == (result.action != "IGNORED")
    if result.action == "MERGED":
        assert result.event_id == "known" and known["mention_count"] == 2
        assert known["summary"] == f"{KNOWN} {RELATED}"
        assert json.loads(known["tags_json"]) == ["pets", "agent-recorded", "category:fact"]
        match = fts_match_any(query_tokens("tuna"))
        hits = await memory.db.read(lambda raw: event_rows.fts_event_candidates(raw, NS, match, 5))
        assert [h["id"] for h in hits] == ["known"]
    elif result.action == "SUPERSEDED":
        assert (known["status"], known["superseded_by"], known["forced_cap"]) == (
            "superseded",
            result.event_id,
            0.1,
        )
        assert links(plain, str(result.event_id), "supersedes_event_ids") == ["known"]
    elif result.action == "CONFLICT_MARKED":
        assert links(plain, str(result.event_id), "conflicts_with_event_ids") == ["known"]
        assert links(plain, "known", "conflicts_with_event_ids") == [result.event_id]
        assert known["status"] == "active"
    else:
        assert (known["status"], known["mention_count"]) == ("active", 1)


class SlowModel:
    name = "slow"

    async def complete(self, task: StructuredTask[T]) -> T:
        await asyncio.sleep(10)
        raise AssertionError("unreachable")


@pytest.mark.parametrize(
    ("make", "gate", "reason"),
    [
        (lambda: ScriptedModel.of([ModelServerError("503 from provider")]), "decider-error", "503"),
        (lambda: ScriptedModel.of([{"action": "MAYBE"}]), "decider-error", "invalid output"),
        (SlowModel, "decider-error", "timed out after 0.05s"),
        (lambda: None, "heuristic-conflict", "heuristic-conflict"),
    ],
)
async def test_decider_failure_or_absence_marks_a_conflict(
    memory: StrataGate, plain: sqlite3.Connection, make: Any, gate: str, reason: str
) -> None:
    await add_event(memory, "known", KNOWN)
    result = await asyncio.wait_for(
        remember(memory.storage.remember, make(), NS, THREAD, RELATED, task_timeout_s=0.05), 2
    )
    assert (result.action, result.gate) == ("CONFLICT_MARKED", gate)
    assert reason in result.reason and result.existing_event_ids == ("known",)
    await check_applied(memory, plain, result)


@pytest.mark.parametrize(
    ("content", "action"),
    [
        (RELATED, "ADDED"),
        ("Alice adopted grey cat Miso, now named Momo", "SUPERSEDED"),
        ("Alice did not adopt a grey cat named Miso", "CONFLICT_MARKED"),
        ("Alice adopted the grey cat Miso from a shelter", "MERGED"),
    ],
)
async def test_offline_model_decides_deterministically(
    memory: StrataGate, plain: sqlite3.Connection, content: str, action: str
) -> None:
    await add_event(memory, "known", KNOWN)
    result = await remember(memory.storage.remember, OfflineModel(), NS, THREAD, content)
    assert (result.action, result.gate) == (action, "decider")


# -- lock discipline ------------------------------------------------------------------------


class GatedModel:
    """Answers only once released, so the test can act while the decider is thinking."""

    name = "gated"

    def __init__(self, answer: dict[str, Any]) -> None:
        self.answer = answer
        self.called = asyncio.Event()
        self.release = asyncio.Event()

    async def complete(self, task: StructuredTask[T]) -> T:
        self.called.set()
        await self.release.wait()
        return task.output_type.model_validate(self.answer)


async def while_deciding(memory: StrataGate, answer: dict[str, Any], during: Any) -> Remembered:
    model = GatedModel(answer)
    running = asyncio.create_task(remember(memory.storage.remember, model, NS, THREAD, RELATED))
    await asyncio.wait_for(model.called.wait(), 2)
    await asyncio.wait_for(during(), 2)  # a write succeeds: no lock is held by the decider
    model.release.set()
    return await asyncio.wait_for(running, 2)


async def test_writes_proceed_while_the_decider_runs(
    memory: StrataGate, plain: sqlite3.Connection
) -> None:
    await add_event(memory, "known", KNOWN)
    result = await while_deciding(memory, decision("ADD", []), lambda: talk(memory, 1))
    assert result.action == "ADDED" and sources(plain, str(result.event_id)) == []
    cited = await talk(memory, 1)  # the turn recorded after the event was written
    assert sources(plain, str(result.event_id)) == cited[:1]


async def test_recheck_finds_a_duplicate_written_during_the_decider(
    memory: StrataGate, plain: sqlite3.Connection
) -> None:
    await add_event(memory, "known", KNOWN)
    result = await while_deciding(
        memory, decision("ADD", []), lambda: add_event(memory, "twin", RELATED)
    )
    assert (result.action, result.gate, result.reinforced_event_id) == (
        "REINFORCED",
        "exact-duplicate",
        "twin",
    )
    assert count(plain) == 0 and row(plain, "twin")["mention_count"] == 2


async def test_a_target_forgotten_during_the_decider_is_left_alone(
    memory: StrataGate, plain: sqlite3.Connection
) -> None:
    await add_event(memory, "known", KNOWN)
    result = await while_deciding(
        memory, decision("SUPERSEDE", ["known"], 0.95), lambda: memory.gate.forget_event("known")
    )
    assert (result.action, result.downgraded_from, result.existing_event_ids) == (
        "CONFLICT_MARKED",
        "SUPERSEDE",
        (),
    )
    assert row(plain, "known")["status"] == "forgotten" and count(plain) == 1


# -- input -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("namespace", "thread", "content", "category"),
    [
        (NS, THREAD, "", None),
        (NS, THREAD, " \n ", None),
        (NS, THREAD, 5, None),
        (NS, THREAD, "ok text", "opinion"),
        (NS, "", "ok text", None),
        ("  ", THREAD, "ok text", None),
    ],
)
async def test_remember_rejects_bad_input(
    memory: StrataGate,
    plain: sqlite3.Connection,
    namespace: Any,
    thread: Any,
    content: Any,
    category: Any,
) -> None:
    with pytest.raises(InvalidInput):
        await remember(memory.storage.remember, None, namespace, thread, content, category)
    assert count(plain) == 0


def test_offline_model_answers_the_decider_task() -> None:
    payload = {
        "candidate": {"title": RELATED, "summary": RELATED, "category": "fact"},
        "existing": [{"event_id": "k", "title": KNOWN, "summary": KNOWN, "containment": 0.5}],
    }
    answer = OfflineModel().answer(DECIDE_AGENT_MEMORY, payload)
    assert MemoryDecision.model_validate(answer).action == "ADD"


async def test_a_correction_holding_the_old_words_is_not_a_repeat(memory: StrataGate) -> None:
    """Every word of the old statement is in the correction; the offline engine must not
    count it as the same thing said again (it used to be REINFORCED)."""
    first = await memory.remember.save(NS, THREAD, "The studio opens at 10am on Saturdays.")
    said = "The studio opens at 11am on Saturdays, not 10am."
    corrected = await memory.remember.save(NS, THREAD, said)
    assert corrected.action in {"SUPERSEDED", "CONFLICT_MARKED"}, corrected
    assert corrected.event_id != first.event_id
    again = await memory.remember.save(NS, THREAD, "The studio opens at 11am on Saturdays.")
    assert (again.action, again.reinforced_event_id) == ("REINFORCED", corrected.event_id)


async def test_a_restatement_with_a_new_detail_keeps_the_detail(
    memory: StrataGate, plain: sqlite3.Connection
) -> None:
    """Saying the event again "… in Lyon" adds where: merged (the detail kept), not
    dropped as a repeat."""
    await add_event(memory, "known", KNOWN, "conversation")
    await talk(memory)
    result = await memory.remember.save(NS, THREAD, f"{KNOWN} in Lyon")
    assert result.action == "MERGED" and result.event_id == "known", result
    assert "Lyon" in row(plain, "known")["summary"]
