"""The graph through the real store: projection jobs, validation before any write, entity
resolution, supersede by key with validity, as-of queries, the forget cascade, back-fill."""

import sqlite3
from pathlib import Path

import pytest

from stratagate_plugin.core.errors import InvalidInput, NotFound
from stratagate_plugin.core.events.documents import EVENT_RULES
from stratagate_plugin.core.memory import StrataGate
from stratagate_plugin.core.store import event_rows, gate_rows, graph_jobs, graph_writes
from tests.graph_world import NS, add_events, card_for, fact, graph_counts, node, open_scripted


async def test_a_projection_citing_no_event_of_its_batch_fails_and_writes_nothing(
    db_path: Path, plain: sqlite3.Connection
) -> None:
    memory, model = await open_scripted(db_path)
    memory.config = memory.config.model_copy(update={"offline_fallback": False})  # failing
    [event] = await add_events(memory, card_for("Ana moved to Rome", "2024-01-01T00:00:00+00:00"))
    ana = node("a", "Ana", [event], facts=[fact("city", "Rome", ["evt_elsewhere"])])
    model.push({"nodes": [ana, node("r", "Rome", [event], "place")]})
    assert await memory.derivation.project_pending_graph() == 1
    [job] = await memory.derivation.list_jobs(status="failed")
    assert job.kind == "graph_projection" and "fact a.city cites no exposable event" in (
        job.last_error or ""
    )
    assert graph_counts(plain) == (0, 0, 0, 0)  # the valid node was not written either
    model.push("not json at all")  # garbage from the model: a clear error, nothing written
    plain.execute("UPDATE jobs SET next_retry_at = '2000-01-01T00:00:00+00:00'")
    plain.commit()
    assert (await memory.derivation.process_pending()).graph_failed == 1
    [job] = await memory.derivation.list_jobs(status="failed")
    assert "ModelOutputError" in (job.last_error or "") and graph_counts(plain) == (0, 0, 0, 0)
    await memory.close()


async def test_aliases_resolve_type_mismatches_and_near_names_are_kept_apart_and_listed(
    db_path: Path,
) -> None:
    memory, model = await open_scripted(db_path)
    first = await add_events(memory, card_for("Melanie paints", "2024-01-01T00:00:00+00:00"))
    model.push({"nodes": [node("m", "Melanie", first, aliases=["Mel"])]})
    await memory.derivation.process_pending()
    second = await add_events(memory, card_for("Mel and Melany", "2024-02-01T00:00:00+00:00"))
    model.push(
        {
            "nodes": [
                node("m", "mel", second),  # the proven alias: the same node
                node("o", "MEL", second, "organization"),  # same key, other type: apart, listed
                node("y", "Melanee", second),  # one edit from "melanie": apart, listed
            ]
        }
    )
    await memory.derivation.process_pending()
    views = await memory.graph.nodes(NS)
    by_name = {view.node.name: view for view in views}
    assert set(by_name) == {"Melanie", "MEL", "Melanee"}
    assert set(by_name["Melanie"].source_event_ids) == {*first, *second}
    melanie, org, melany = (by_name[n].node.id for n in ("Melanie", "MEL", "Melanee"))
    listed = {(d.node_id, d.other_id): d.reason for d in await memory.graph.duplicates(NS)}
    assert listed[(org, melanie)] == "same name, type person vs organization"
    assert listed[(melany, melanie)].startswith("names one edit apart")
    [job] = [
        j
        for j in await memory.derivation.list_jobs()
        if j.detail and "possible duplicate" in j.detail
    ]
    assert melany in (job.detail or "")
    await memory.close()


async def lives(memory: StrataGate, model: object, title: str, city: str, said: str) -> str:
    [event] = await add_events(memory, card_for(title, said, happened_start=said))
    model.push({"nodes": [node("a", "Ana", [event], facts=[fact("city", city, [event])])]})  # type: ignore[attr-defined]
    await memory.derivation.process_pending()
    return event


async def test_a_new_fact_with_the_same_key_supersedes_with_validity_and_as_of_shows_belief(
    db_path: Path, plain: sqlite3.Connection
) -> None:
    memory, model = await open_scripted(db_path)
    await lives(memory, model, "Ana lives in Lisbon", "Lisbon", "2024-01-10T00:00:00+00:00")
    [learned_first] = [r[0] for r in plain.execute("SELECT learned_at FROM graph_facts")]
    await lives(memory, model, "Ana moved to Rome", "Rome", "2024-03-05T00:00:00+00:00")
    [ana] = await memory.graph.nodes(NS)
    view = await memory.graph.node(ana.node.id)
    [now] = view.current_facts
    [old] = view.historical_facts
    assert (now.value, now.valid_from, now.valid_to) == ("Rome", "2024-03-05T00:00:00+00:00", None)
    assert (old.value, old.status, old.valid_to) == ("Lisbon", "superseded", now.valid_from)
    assert old.superseded_at == now.learned_at
    # what we believed between the two projections: Lisbon, with no end known yet
    between = await memory.graph.node(ana.node.id, as_of=learned_first)
    assert [(f.value, f.valid_to) for f in between.current_facts] == [("Lisbon", None)]
    assert between.historical_facts == ()
    # what we believe now about February: Lisbon; about April: Rome
    feb = await memory.graph.node(ana.node.id, valid_at="2024-02-01T00:00:00+00:00")
    apr = await memory.graph.node(ana.node.id, valid_at="2024-04-01T00:00:00+00:00")
    assert [f.value for f in feb.current_facts] == ["Lisbon"]
    assert [f.value for f in apr.current_facts] == ["Rome"]
    assert await memory.graph.nodes(NS, as_of="2000-01-01") == []
    assert [h.view.node.name for h in await memory.graph.search(NS, "Lisbon")] == ["Ana"]
    [hit] = await memory.graph.search(NS, "Lisbon")
    assert hit.match_type == "historical"
    with pytest.raises(InvalidInput):
        await memory.graph.node(ana.node.id, as_of="someday")
    await memory.close()


async def test_an_older_statement_projected_later_is_history_not_current(db_path: Path) -> None:
    memory, model = await open_scripted(db_path)
    await lives(memory, model, "Ana moved to Rome", "Rome", "2024-03-05T00:00:00+00:00")
    await lives(memory, model, "Ana lived in Lisbon", "Lisbon", "2024-01-10T00:00:00+00:00")
    [ana] = await memory.graph.nodes(NS)
    assert [f.value for f in ana.current_facts] == ["Rome"]
    assert [(f.value, f.valid_to) for f in ana.historical_facts] == [
        ("Lisbon", "2024-03-05T00:00:00+00:00")
    ]
    await memory.close()


async def test_edges_supersede_by_from_and_relation_and_identical_ones_merge_sources(
    db_path: Path,
) -> None:
    memory, model = await open_scripted(db_path)
    for place, said in (("Lisbon", "2024-01-01"), ("Lisbon", "2024-02-01"), ("Rome", "2024-03-01")):
        [event] = await add_events(memory, card_for(f"Ana in {place}", f"{said}T00:00:00+00:00"))
        model.push(
            {
                "nodes": [node("a", "Ana", [event]), node("p", place, [event], "place")],
                "edges": [
                    {
                        "from_ref": "a",
                        "to_ref": "p",
                        "relation": "lives_in",
                        "source_event_ids": [event],
                    }
                ],
            }
        )
        await memory.derivation.process_pending()
    [ana] = [v for v in await memory.graph.nodes(NS) if v.node.name == "Ana"]
    [now] = ana.current_edges
    [old] = ana.historical_edges
    assert (now.other_name, old.other_name, old.edge.valid_to) == (
        "Rome",
        "Lisbon",
        now.edge.valid_from,
    )
    assert len(old.edge.source_event_ids) == 2  # the repeated Lisbon edge merged its sources
    await memory.close()


async def test_forget_strips_provenance_and_deletes_what_is_left_without_a_source(
    db_path: Path, plain: sqlite3.Connection
) -> None:
    memory, model = await open_scripted(db_path)
    first = await lives(memory, model, "Ana lives in Lisbon", "Lisbon", "2024-01-10T00:00:00+00:00")
    second = await lives(memory, model, "Ana moved to Rome", "Rome", "2024-03-05T00:00:00+00:00")
    temporal = plain.execute("SELECT temporal_json FROM events WHERE id = ?", (second,)).fetchone()[
        0
    ]
    [ana] = await memory.graph.nodes(NS)
    assert ana.node.id in temporal  # the node citing the event is written back onto it
    await memory.curation.act("forget", second)
    [ana] = await memory.graph.nodes(NS)
    assert [f.value for f in ana.current_facts] == ["Lisbon"]  # Rome's fact had no other source
    assert ana.historical_facts == () and ana.source_event_ids == (first,)
    cited = {row[0] for row in plain.execute("SELECT DISTINCT event_id FROM graph_sources")}
    assert cited == {first}
    assert await memory.graph.search(NS, "Rome") == []
    await memory.gate.forget_event(first)  # the gate's forget cascades too
    assert graph_counts(plain) == (0, 0, 0, 0)
    await memory.close()


async def test_a_failure_mid_forget_leaves_the_event_and_the_graph_unchanged(
    db_path: Path, plain: sqlite3.Connection, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory, model = await open_scripted(db_path)
    event = await lives(memory, model, "Ana lives in Lisbon", "Lisbon", "2024-01-10T00:00:00+00:00")
    before = graph_counts(plain)
    real = graph_writes.strip_event_provenance

    def strip_then_fail(raw: sqlite3.Connection, ids: list[str]) -> list[str]:
        real(raw, ids)  # the graph rows are gone inside the transaction …
        raise RuntimeError("disk full")  # … and the forget fails after them

    monkeypatch.setattr(gate_rows, "strip_event_provenance", strip_then_fail)
    with pytest.raises(RuntimeError):
        await memory.curation.act("forget", event)
    assert (await memory.events.get(event)).status == "active"
    assert graph_counts(plain) == before != (0, 0, 0, 0)
    await memory.close()


async def test_restore_projects_the_event_again(db_path: Path) -> None:
    memory, model = await open_scripted(db_path)
    event = await lives(memory, model, "Ana lives in Lisbon", "Lisbon", "2024-01-10T00:00:00+00:00")
    await memory.curation.act("forget", event)
    assert await memory.graph.nodes(NS) == []
    await memory.curation.act("restore", event)
    model.push({"nodes": [node("a", "Ana", [event], facts=[fact("city", "Lisbon", [event])])]})
    assert await memory.derivation.project_pending_graph() == 1
    [ana] = await memory.graph.nodes(NS)
    assert [f.value for f in ana.current_facts] == ["Lisbon"]
    await memory.close()


async def test_open_back_fills_events_in_no_batch_once_in_batches_of_eight(
    db_path: Path, plain: sqlite3.Connection
) -> None:
    memory, _ = await open_scripted(db_path)
    cards = [card_for(f"event {i}", "2024-01-01T00:00:00+00:00") for i in range(11)]
    await add_events(memory, *cards, queue=False)  # as events written before the graph existed
    await memory.gate.forget_event(cards[0].id)  # forgotten events are not projected
    await memory.close()
    for _ in range(2):  # a second open queues nothing more
        reopened, _ = await open_scripted(db_path)
        await reopened.close()
    sizes = plain.execute(
        "SELECT b.priority, COUNT(*) FROM graph_batches b JOIN graph_batch_events e "
        "ON e.batch_id = b.id GROUP BY b.id ORDER BY b.priority DESC"
    ).fetchall()
    assert [tuple(row) for row in sizes] == [(2, 8), (1, 2)]
    kinds = plain.execute(
        "SELECT kind, status FROM jobs WHERE kind != 'topic_projection'"
    ).fetchall()
    assert [tuple(row) for row in kinds] == [("graph_projection", "pending")] * 2


async def test_a_database_from_before_the_graph_is_migrated_and_back_filled(
    db_path: Path, plain: sqlite3.Connection
) -> None:
    memory, _ = await open_scripted(db_path)
    said = "2024-01-01T00:00:00+00:00"
    await add_events(
        memory, card_for("Ana said she paints", said, participants=["Ana"]), queue=False
    )
    await memory.close()
    plain.execute("DELETE FROM meta WHERE key = 'graph_backfill_pk'")
    plain.commit()
    async with await StrataGate.open(db_path) as offline:  # the embedded projector
        report = await offline.derivation.process_pending()
        assert report.graph_ran == 1
        [ana] = await offline.graph.nodes(NS)
    assert (ana.node.name, ana.node.type) == ("Ana", "person")


async def test_graph_jobs_run_after_extraction_and_by_priority(db_path: Path) -> None:
    memory, model = await open_scripted(db_path)
    low = await add_events(memory, card_for("low", "2024-01-01T00:00:00+00:00"))

    def agent(raw: sqlite3.Connection) -> list[str]:
        card = card_for("high", "2024-01-01T00:00:00+00:00")
        event_rows.insert_event(raw, card, EVENT_RULES)
        graph_jobs.queue_events(
            raw, NS, [card.id], graph_jobs.AGENT_PRIORITY, "2024-01-02T00:00:00+00:00"
        )
        return [card.id]

    high = await memory.db.write(agent)
    model.push({"nodes": [node("h", "High", high)]}, {"nodes": [node("l", "Low", low)]})
    # one job per pass: a pass runs derive_concurrency workers, whose model calls may
    # reach the model in either order; the claim order is what is under test
    assert await memory.derivation.project_pending_graph(max_jobs=1) == 1
    assert await memory.derivation.project_pending_graph(max_jobs=1) == 1
    first, second = model.requests
    assert [e["id"] for e in first.payload["events"]] == high  # priority 2000 before 1000
    assert [e["id"] for e in second.payload["events"]] == low
    await memory.close()


async def test_the_listing_pages_by_importance_and_filters_by_type(db_path: Path) -> None:
    memory, model = await open_scripted(db_path)
    events = await add_events(
        memory, *(card_for(f"e{i}", "2024-01-01T00:00:00+00:00") for i in range(3))
    )
    ana, ben = node("a", "Ana", events), node("b", "Ben", events[:2])
    model.push({"nodes": [ana, ben, node("r", "Rome", events[:1], "place")]})
    await memory.derivation.process_pending()
    assert [v.node.name for v in await memory.graph.nodes(NS)] == ["Ana", "Ben", "Rome"]
    assert [v.node.name for v in await memory.graph.nodes(NS, offset=1, limit=1)] == ["Ben"]
    assert [v.node.name for v in await memory.graph.nodes(NS, type="place")] == ["Rome"]
    with pytest.raises(InvalidInput):
        await memory.graph.nodes(NS, type="planet")
    with pytest.raises(NotFound):
        await memory.graph.node("node_missing")
    await memory.close()


async def test_non_exclusive_edges_accumulate_targets_and_merge_the_same_one(
    db_path: Path,
) -> None:
    memory, model = await open_scripted(db_path)
    for friend, said in (("Bea", "2024-01-01"), ("Cai", "2024-02-01"), ("Bea", "2024-03-01")):
        [event] = await add_events(memory, card_for(f"Ana and {friend}", f"{said}T00:00:00+00:00"))
        edge = {"from_ref": "a", "to_ref": "f", "relation": "friend", "exclusive": False,
                "source_event_ids": [event]}  # fmt: skip
        model.push({"nodes": [node("a", "Ana", [event]), node("f", friend, [event])],
                    "edges": [edge]})  # fmt: skip
        await memory.derivation.process_pending()
    [ana] = [v for v in await memory.graph.nodes(NS) if v.node.name == "Ana"]
    assert sorted(e.other_name for e in ana.current_edges) == ["Bea", "Cai"]
    assert ana.historical_edges == ()  # a second friend replaces no one
    [bea] = [e for e in ana.current_edges if e.other_name == "Bea"]
    assert len(bea.edge.source_event_ids) == 2  # the same friend again merged its sources
    await memory.close()
