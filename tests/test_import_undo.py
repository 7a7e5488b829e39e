"""Undoing an import batch, and the export that round-trips (spec §11.4, issue 17)."""

import asyncio
import json
import sqlite3
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from imports import (
    COFFEE,
    NS,
    TEA,
    analysed,
    candidate,
    counts,
    decision,
    document,
    imported,
    seed,
    stored,
)

from stratagate_plugin.core.config import MemoryConfig
from stratagate_plugin.core.errors import InvalidInput, NotFound
from stratagate_plugin.core.llm.base import ScriptedModel
from stratagate_plugin.core.memory import StrataGate
from stratagate_plugin.core.store import event_rows


def graph_names(plain: sqlite3.Connection, event_ids: list[str] | None = None) -> set[str]:
    """Node names, with the events citing them restricted to ``event_ids`` if given."""
    rows = plain.execute(
        "SELECT n.name, s.event_id FROM graph_nodes n JOIN graph_sources s "
        "ON s.record_kind = 'node' AND s.record_id = n.id"
    ).fetchall()
    return {name for name, event in rows if event_ids is None or event in event_ids}


async def test_undo_restores_what_the_batch_superseded(
    memory: StrataGate, plain: sqlite3.Connection
) -> None:
    await seed(memory, "evt_tea", TEA)
    memory.model = ScriptedModel.of([decision("SUPERSEDE", ["evt_tea"])])
    before = counts(plain)
    batch = await imported(memory, document(candidate(COFFEE)))
    assert stored(plain, "evt_tea")["status"] == "superseded"  # type: ignore[index]
    undone = await memory.imports.undo(batch.id)
    assert undone.removed_event_ids == batch.event_ids and undone.restored_event_ids == ["evt_tea"]
    tea = stored(plain, "evt_tea")
    assert tea is not None and (tea["status"], tea["superseded_by"], tea["forced_cap"]) == (
        "active",
        None,
        None,
    )
    assert stored(plain, batch.event_ids[0]) is None
    left = {k: v for k, v in counts(plain).items() if k != "graph_batches" and k != "jobs"}
    assert left == {k: v for k, v in before.items() if k != "graph_batches" and k != "jobs"}
    assert plain.execute("SELECT COUNT(*) FROM graph_batch_events").fetchone()[0] == 0
    [listed] = await memory.imports.batches(NS)
    assert (listed.status, (await memory.imports.job(batch.job_id)).status) == ("undone", "undone")


async def test_an_event_superseded_by_another_too_stays_superseded(
    memory: StrataGate, plain: sqlite3.Connection
) -> None:
    await seed(memory, "evt_tea", TEA)
    memory.model = ScriptedModel.of(
        [decision("SUPERSEDE", ["evt_tea"]), decision("SUPERSEDE", ["evt_tea"])]
    )
    first = await imported(memory, document(candidate(COFFEE)))
    second = await imported(memory, document(candidate(COFFEE + " daily")))
    undone = await memory.imports.undo(second.id)
    assert undone.restored_event_ids == []
    tea = stored(plain, "evt_tea")
    assert tea is not None and (tea["status"], tea["superseded_by"]) == (
        "superseded",
        first.event_ids[0],
    )


async def test_undo_strips_graph_provenance_and_keeps_shared_nodes(
    memory: StrataGate, plain: sqlite3.Connection
) -> None:
    first = await imported(
        memory, document(candidate("Moved to Lyon", "Caroline lives in Lyon, France."))
    )
    await memory.derivation.process_pending()
    text = document(candidate("Joined Acme", "Caroline works at Acme Corp in Lyon."))
    second = await imported(memory, text, {0: "ADD"})  # related to the first: confirmed
    await memory.derivation.process_pending()
    assert {"Caroline", "Acme Corp", "Lyon"} <= graph_names(plain, second.event_ids)
    works_at = "SELECT COUNT(*) FROM graph_edges WHERE relation = 'works_at'"
    assert plain.execute(works_at).fetchone()[0] == 1
    undone = await memory.imports.undo(second.id)
    assert graph_names(plain, second.event_ids) == set()
    # Caroline, Lyon and France are also the first import's: they stay, citing it alone
    kept = {"Caroline", "Lyon", "France"}
    assert graph_names(plain) == graph_names(plain, first.event_ids) == kept
    left = {r[0] for r in plain.execute("SELECT name FROM graph_nodes").fetchall()}
    assert left == kept and len(undone.removed_graph_node_ids) >= 1
    assert plain.execute(works_at).fetchone()[0] == 0


async def test_undo_scrubs_links_from_other_events(
    memory: StrataGate, plain: sqlite3.Connection
) -> None:
    await seed(memory, "evt_tea", TEA)
    memory.model = ScriptedModel.of([decision("CONFLICT", ["evt_tea"])])
    batch = await imported(memory, document(candidate(COFFEE)))
    await memory.imports.undo(batch.id)
    tea = stored(plain, "evt_tea")
    assert tea is not None and "conflicts_with_event_ids" not in json.loads(tea["temporal_json"])


async def test_undo_twice_or_of_an_unknown_batch_is_an_error(memory: StrataGate) -> None:
    batch = await imported(memory, document(candidate("Lives in Lyon")))
    await memory.imports.undo(batch.id)
    with pytest.raises(InvalidInput, match="already undone"):
        await memory.imports.undo(batch.id)
    with pytest.raises(NotFound, match="no import batch"):
        await memory.imports.undo("blk_nothing")
    with pytest.raises(InvalidInput, match="cannot be committed"):
        await memory.imports.commit(batch.job_id)


async def test_concurrent_undos_apply_once(db_path: Path, plain: sqlite3.Connection) -> None:
    async with await StrataGate.open(db_path) as memory:
        batch = await imported(
            memory, document(candidate("Lives in Lyon"), candidate("Works at Acme"))
        )
    first, second = await StrataGate.open(db_path), await StrataGate.open(db_path)
    try:
        results = await asyncio.gather(
            first.imports.undo(batch.id), second.imports.undo(batch.id), return_exceptions=True
        )
    finally:
        await first.close()
        await second.close()
    errors = [r for r in results if isinstance(r, BaseException)]
    assert len(errors) == 1 and isinstance(errors[0], InvalidInput)
    assert plain.execute("SELECT COUNT(*) FROM events").fetchone()[0] == 0
    assert plain.execute("SELECT COUNT(*) FROM blocks").fetchone()[0] == 0


# -- export --------------------------------------------------------------------------------

ROUND_TRIP = ("title", "summary", "tags", "quotes", "scope", "criticality")
V2_TIMES = (
    "mentioned_at",
    "happened_start",
    "happened_end",
    "original_text",
    "precision",
    "basis",
    "status",
    "participants",
    "event_type",
)


def comparable(card: Any) -> tuple[Any, ...]:
    temporal = {k: card.temporal[k] for k in V2_TIMES if k in card.temporal}
    return (
        *(json.dumps(getattr(card, f)) for f in ROUND_TRIP),
        json.dumps(temporal, sort_keys=True),
    )


async def conversation_memory(path: Path) -> StrataGate:
    """A space whose events were extracted from conversations (times, quotes, tags)."""
    memory = await StrataGate.open(path, MemoryConfig(block_turn_size=2))
    lines = [
        ("I moved to Lyon last March with my sister Anna.", "Nice, Lyon is lovely."),
        ("I started working at Acme Corp as a data engineer on 2024-02-01.", "Congratulations!"),
        ("Please always answer me in French from now on.", "D'accord."),
        ("My dog Rex turned five yesterday.", "Happy birthday to Rex!"),
    ]
    for i, (user, assistant) in enumerate(lines):
        at = datetime(2024, 5, 1 + i, 9, tzinfo=UTC)
        await memory.blocks.append_turn(NS, "t", user=user, assistant=assistant, at=at)
    await memory.blocks.seal_idle_tails(datetime(2100, 1, 1, tzinfo=UTC))
    await memory.derivation.process_pending()
    return memory


async def test_an_export_imported_into_an_empty_database_gives_the_same_events(
    tmp_path: Path,
) -> None:
    source = await conversation_memory(tmp_path / "source.db")
    try:
        exported = await source.imports.export_space(NS)
        original = await source.db.read(lambda raw: event_rows.list_events(raw, NS, ("active",)))
        assert len(original) >= 3
        again = await analysed(source, json.dumps(exported))
        assert {i.action for i in again.items} == {"IGNORE"}
    finally:
        await source.close()
    async with await StrataGate.open(tmp_path / "empty.db") as target:
        batch = await imported(target, json.dumps(exported))
        copied = await target.db.read(lambda raw: event_rows.list_events(raw, NS, ("active",)))
    assert len(batch.event_ids) == len(original)
    assert sorted(map(comparable, copied)) == sorted(map(comparable, original))


async def test_export_includes_the_profile_only_when_asked(memory: StrataGate) -> None:
    await imported(memory, document(candidate("Lives in Lyon", category="identity")))
    await memory.profile.update("user_preferred_name", "Cam")
    plain_export = await memory.imports.export_space(NS)
    assert "profile" not in plain_export and plain_export["schemaVersion"].endswith(".v2")
    assert plain_export["candidates"][0]["category"] == "identity"
    with_profile = await memory.imports.export_space(NS, include_profile=True)
    assert with_profile["profile"] == {"user_preferred_name": "Cam"}
    with pytest.raises(NotFound):
        await memory.imports.export_space("nowhere")


async def test_chapters_holding_undone_events_are_rebuilt_without_them(
    memory: StrataGate, plain: sqlite3.Connection
) -> None:
    text = document(
        candidate("Prefers green tea", "The user prefers green tea.", category="preference"),
        candidate("Dog Rex", "The user has a dog named Rex."),
    )
    batch = await imported(memory, text)
    await memory.derivation.process_pending()
    members = plain.execute("SELECT event_id FROM topic_members").fetchall()
    assert {r[0] for r in members} == set(batch.event_ids)
    await memory.imports.undo(batch.id)
    await memory.derivation.process_pending()
    assert plain.execute("SELECT COUNT(*) FROM topic_members").fetchone()[0] == 0
    assert (await memory.topics.catalog(NS))["topics"] == []


async def adopt(memory: StrataGate, ids: list[str], receipt: str) -> None:
    refs = [f"event:{event_id}" for event_id in ids]
    batch = await memory.gate.open_batch(NS, "t", "memory_search_events", tuple(refs))
    await memory.gate.assess(NS, "t", batch.id, "sufficient", refs, "fits", "", "answer")
    await memory.gate.record_use(NS, "t", batch.id, refs, receipt)


async def test_undo_takes_its_events_out_of_usage_receipts(
    memory: StrataGate, plain: sqlite3.Connection
) -> None:
    await seed(memory, "evt_tea", TEA)
    batch = await imported(memory, document(candidate(COFFEE)))
    [coffee] = batch.event_ids
    await adopt(memory, [coffee], "only-imported")
    await adopt(memory, ["evt_tea", coffee], "both")
    await memory.imports.undo(batch.id)
    receipts = dict(plain.execute("SELECT receipt_id, event_ids_json FROM usage_receipts"))
    assert receipts == {"both": json.dumps(["evt_tea"])}
