"""An import MERGE never loses (issue 23): a merged text keeps every detail of the local
event it replaces and of the imported memory, whoever proposed or chose the merge."""

import json
from pathlib import Path

import pytest
from imports import NS, analysed, candidate, decision, document, seed

from stratagate_plugin.core.config import MemoryConfig
from stratagate_plugin.core.importer.decider import ExternalDecision, settle
from stratagate_plugin.core.importer.jobs import MatchedEvent
from stratagate_plugin.core.importer.merge import contains, merged_text
from stratagate_plugin.core.llm.base import ScriptedModel
from stratagate_plugin.core.memory import StrataGate
from stratagate_plugin.core.remember.rules import Match

PAIRS = [  # (said locally, imported from another AI's memory, a detail of each side)
    (
        "I prefer window seats and vegetarian meals.",
        "Prefers window seats on flights",
        ("vegetarian", "flights"),
    ),
    ("我喜欢靠窗的座位和素食餐。", "喜欢飞机上靠窗的座位", ("素食", "飞机")),
    (
        "My brother Tom moved to Oslo and works as a nurse.",
        "Brother Tom moved to Oslo",
        ("nurse", "Oslo"),
    ),
    ("我喜欢喝绿茶和乌龙茶。", "喜欢喝绿茶", ("乌龙茶", "绿茶")),
]


def mem0(memory: str) -> str:
    return json.dumps([{"id": "m1", "memory": memory, "user_id": "u"}], ensure_ascii=False)


async def said_then_imported(db: Path, local: str, imported: str) -> list[str]:
    """The local statement derived by the offline model, then the import committed with its
    proposals; the active events' summaries after."""
    async with await StrataGate.open(db, MemoryConfig(block_turn_size=1)) as memory:
        await memory.blocks.append_turn(NS, "t", user=local, assistant="OK.")
        await memory.blocks.seal_tail(NS, "t")
        await memory.derivation.process_pending()
        job = await analysed(memory, mem0(imported))
        await memory.imports.commit(job.id, take_proposals=True)
        return [card.summary for card in await memory.events.cards(NS) if card.status == "active"]


@pytest.mark.parametrize(("local", "imported", "details"), PAIRS)
async def test_after_an_import_every_detail_of_both_sides_is_still_active(
    db_path: Path, local: str, imported: str, details: tuple[str, ...]
) -> None:
    active = await said_then_imported(db_path, local, imported)
    assert any(all(detail in summary for detail in details) for summary in active), active


async def test_a_model_merge_that_drops_local_content_is_committed_with_both(
    memory: StrataGate,
) -> None:
    await seed(memory, "evt_seat", "I prefer window seats and vegetarian meals")
    answer = decision("MERGE", ["evt_seat"]) | {  # §11.2's camelCase name
        "mergedCandidate": {"title": "Seats", "summary": "Prefers window seats on flights."}
    }
    memory.model = ScriptedModel.of([answer])
    job = await analysed(memory, document(candidate("Prefers window seats on flights")))
    [item] = job.items
    assert item.action == "MERGE" and item.merged_summary is not None
    assert "vegetarian meals" in item.merged_summary and "on flights" in item.merged_summary
    batch = await memory.imports.commit(job.id)
    [new] = [await memory.events.get(event_id) for event_id in batch.event_ids]
    assert "vegetarian meals" in new.summary and "on flights" in new.summary


async def test_a_merge_the_person_chooses_keeps_both_too(memory: StrataGate) -> None:
    await seed(memory, "evt_seat", "I prefer window seats and vegetarian meals")
    memory.model = ScriptedModel.of([decision("ADD", [], 0.5)])
    job = await analysed(memory, document(candidate("Prefers window seats on flights")))
    batch = await memory.imports.commit(job.id, {0: "MERGE"})
    [new] = [await memory.events.get(event_id) for event_id in batch.event_ids]
    assert "vegetarian meals" in new.summary and "on flights" in new.summary
    assert (await memory.events.get("evt_seat")).status == "superseded"


MATCH = Match(event_id="evt_a", title="Tea", summary="Drinks green tea at 7am", containment=0.7)
SHOWN = [MatchedEvent(id="evt_a", title="Tea", summary=MATCH.summary, status="active")]


def answer(**fields: object) -> ExternalDecision:
    return ExternalDecision.model_validate(
        {"action": "MERGE", "target_event_ids": ["evt_a"], "confidence": 0.9, **fields}
    )


def test_a_merge_that_already_contains_the_local_event_is_written_as_proposed() -> None:
    whole = "Drinks green tea at 7am every weekday"
    settled = settle(answer(), [MATCH], SHOWN, forced=False, summary=whole)
    assert settled.action == "MERGE" and settled.merged_summary is None
    merged = {"summary": "Drinks green tea at 7am, oolong on weekends"}
    kept = settle(
        answer(merged_candidate=merged), [MATCH], SHOWN, forced=False, summary="Loves tea"
    )
    assert kept.merged_summary is not None and kept.merged_summary.startswith("Drinks green tea")
    assert kept.merged_summary.endswith("Loves tea.")  # what the proposal dropped of it


def test_a_merge_that_would_lose_local_content_keeps_both_and_says_so() -> None:
    settled = settle(answer(), [MATCH], SHOWN, forced=False, summary="Likes tea")
    assert settled.merged_summary == "Drinks green tea at 7am. Likes tea."
    assert settled.reason.endswith("keeps every detail of both")


@pytest.mark.parametrize(
    ("proposal", "targets", "kept"),
    [
        ("Prefers window seats", ["I prefer window seats and vegetarian meals"], False),
        (
            "The user said: prefers window seats, vegetarian meals",
            ["I prefer window seats and vegetarian meals. [today = 2026-12-01]"],
            True,
        ),
        ("喜欢靠窗的座位", ["用户说：我喜欢靠窗的座位和素食餐。"], False),
        ("喜欢靠窗的座位和素食餐", ["用户说：我喜欢靠窗的座位和素食餐。"], True),
    ],
)
def test_containment_reads_words_and_han_characters_without_the_frame(
    proposal: str, targets: list[str], kept: bool
) -> None:
    assert all(contains(proposal, target) for target in targets) is kept
    merged = merged_text(proposal, targets)
    assert all(contains(merged, target) for target in targets) and contains(merged, proposal)
    assert (merged == proposal) is kept


async def test_a_model_merge_that_keeps_everything_is_written_as_the_model_put_it(
    memory: StrataGate,
) -> None:
    await seed(memory, "evt_seat", "I prefer window seats and vegetarian meals")
    whole = "Prefers window seats on flights, and vegetarian meals."
    answer = decision("MERGE", ["evt_seat"]) | {"mergedCandidate": {"summary": whole}}
    memory.model = ScriptedModel.of([answer])
    job = await analysed(memory, document(candidate("Prefers window seats on flights")))
    assert job.items[0].merged_summary == whole
    assert not job.items[0].reason.endswith("keeps every detail of both")  # nothing was lost
    batch = await memory.imports.commit(job.id)
    assert [(await memory.events.get(i)).summary for i in batch.event_ids] == [whole]


async def test_a_remembered_memory_is_kept_whole_by_an_import_merge(memory: StrataGate) -> None:
    """The local side recorded by ``memory_remember`` (the agent pool)."""
    await memory.remember.save(NS, "t", "I prefer window seats and vegetarian meals", "preference")
    job = await analysed(memory, mem0("Prefers window seats on flights"))
    await memory.imports.commit(job.id, take_proposals=True)
    active = [card.summary for card in await memory.events.cards(NS) if card.status == "active"]
    assert any("vegetarian meals" in summary for summary in active), active


async def test_a_merged_card_cites_the_local_statement_too_and_undo_restores_it(
    db_path: Path,
) -> None:
    async with await StrataGate.open(db_path, MemoryConfig(block_turn_size=1)) as memory:
        said = await memory.blocks.append_turn(NS, "t", user=PAIRS[0][0], assistant="OK.")
        await memory.blocks.seal_tail(NS, "t")
        await memory.derivation.process_pending()
        [local] = await memory.events.cards(NS)
        job = await analysed(memory, mem0(PAIRS[0][1]))
        batch = await memory.imports.commit(job.id, take_proposals=True)
        [merged] = [await memory.events.get(event_id) for event_id in batch.event_ids]
        assert said.message_ids[0] in merged.source_message_ids  # the user's own words
        assert merged.source_message_ids[0] != said.message_ids[0]  # the import's first
        await memory.imports.undo(batch.id)
        assert (await memory.events.get(local.id)).status == "active"
        assert set((await memory.events.get(local.id)).source_message_ids) == {said.message_ids[0]}
