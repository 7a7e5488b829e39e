"""``GraphStorage``: search candidates, a node, the importance listing, visible cards,
duplicates, back-fill, a batch with its context, and one write transaction per projection."""

import pytest

from stratagate_plugin.core.graph.storage import GraphTransaction, Stated
from stratagate_plugin.core.graph.views import NOW, Moment, NodeView, assemble
from stratagate_plugin.core.llm.offline.roles import KIN_RELATIONS
from stratagate_plugin.core.memory import StrataGate
from stratagate_plugin.core.text.search_terms import query_tokens

NS = "contract"
SAID = ("My sister Ana lives in Porto.", "Ana adopted a dog named Biscuit.", "Ana moved to Lisbon.")


async def _projected(engine: StrataGate, *texts: str) -> list[str]:
    ids = [(await engine.remember.save(NS, "t", text)).event_id for text in texts]
    await engine.derivation.process_pending()
    return ids


async def _search(engine: StrataGate, space: str, terms: list[str], cap: int) -> list[NodeView]:
    return assemble(await engine.storage.graph.search_records(space, terms, cap, None))


async def _node(engine: StrataGate, node_id: str, history: int) -> NodeView | None:
    views = assemble(await engine.storage.graph.node_records(node_id, None, history))
    return views[0] if views else None


async def _top(
    engine: StrataGate, type_: str | None, window: tuple[int, int], when: Moment
) -> list[NodeView]:
    found = await engine.storage.graph.top_records(NS, type_, window, when.as_of)
    return assemble(found, when)


async def _names(engine: StrataGate) -> dict[str, str]:
    views = await _top(engine, None, (0, 100), NOW)
    return {view.node.name: view.node.id for view in views}


async def test_search_views_are_the_nodes_sharing_most_terms_first_up_to_the_cap(
    engine: StrataGate,
) -> None:
    await _projected(engine, *SAID)
    found = await _search(engine, NS, query_tokens("Ana Lisbon"), 10)
    assert [v.node.name for v in found][:2] in (["Ana", "Lisbon"], ["Lisbon", "Ana"])
    assert "User" not in {v.node.name for v in found[:2]}
    assert len(await _search(engine, NS, query_tokens("Ana Lisbon"), 1)) == 1
    assert await _search(engine, NS, query_tokens("zeppelin"), 10) == []
    assert await _search(engine, "elsewhere", query_tokens("Ana"), 10) == []


async def test_a_node_has_its_current_and_replaced_facts_or_is_none(engine: StrataGate) -> None:
    await _projected(engine, *SAID)
    ana = (await _names(engine))["Ana"]
    view = await _node(engine, ana, 1000)
    assert view is not None and view.node.name == "Ana"
    current = [(f.key, f.value) for f in view.current_facts]  # the dog: Ana's node was there
    assert current == [("lives_in", "Lisbon"), ("pet:dog", "Biscuit")]
    assert [(f.key, f.value) for f in view.historical_facts] == [("lives_in", "Porto")]
    assert (await _node(engine, ana, 0)).historical_facts == ()  # type: ignore[union-attr]
    assert await _node(engine, "node_unknown", 10) is None


async def test_top_nodes_are_by_importance_paged_and_filtered_by_type(engine: StrataGate) -> None:
    await _projected(engine, *SAID)
    every = await _top(engine, None, (0, 100), NOW)
    counts = [view.importance for view in every]
    assert counts == sorted(counts, reverse=True) and every[0].node.name == "Ana"
    second = await _top(engine, None, (1, 2), NOW)
    assert [v.node.id for v in second] == [v.node.id for v in every[1:3]]
    places = await _top(engine, "place", (0, 100), NOW)
    assert {v.node.name for v in places} == {"Porto", "Lisbon"}
    before = Moment(as_of=every[0].node.created_at.replace(year=2000))
    assert await _top(engine, None, (0, 100), before) == []


async def test_visible_cards_leave_out_forgotten_and_unknown_events(engine: StrataGate) -> None:
    kept, forgotten = await _projected(engine, *SAID[:2])
    await engine.curation.act("forget", forgotten)
    cards = await engine.storage.graph.visible_cards(NS, [kept, forgotten, "evt_unknown"])
    assert [card.id for card in cards] == [kept]
    assert await engine.storage.graph.visible_cards("elsewhere", [kept]) == []


async def test_duplicates_list_near_names_kept_apart(engine: StrataGate) -> None:
    assert await engine.storage.graph.duplicates(NS) == []
    await _projected(engine, *SAID)

    def list_one(tx: GraphTransaction) -> tuple[str, str]:
        one = tx.insert_node(NS, ("Anna", "anna"), "person", [], "2024-01-01T00:00:00+00:00")
        other = tx.known_by_keys(NS, ["ana"])[0].node_id
        tx.list_duplicate(NS, one, other, "one edit apart", "2024-01-01T00:00:00+00:00")
        tx.list_duplicate(NS, one, other, "one edit apart", "2024-01-02T00:00:00+00:00")
        return one, other

    one, other = await engine.storage.graph.project(list_one)
    assert await engine.storage.graph.duplicates(NS) == [(one, other, "one edit apart")]


async def test_backfill_queues_each_visible_event_once(engine: StrataGate) -> None:
    await _projected(engine, *SAID)
    assert await engine.storage.graph.backfill_due() is False  # every event has its batch
    assert await engine.storage.graph.backfill("2024-01-01T00:00:00+00:00") == 0
    assert await engine.storage.graph.backfill("2024-01-01T00:00:00+00:00") == 0


async def test_a_batch_comes_with_its_events_the_nodes_it_names_and_its_kin(
    engine: StrataGate,
) -> None:
    await _projected(engine, SAID[0])
    [event] = [(await engine.remember.save(NS, "t", "Ana paints on Sundays.")).event_id]
    [job] = [
        j for j in await engine.derivation.list_jobs(NS, "pending") if j.kind.startswith("graph")
    ]
    batch = await engine.storage.graph.batch(job.target_id, "User", KIN_RELATIONS, (24, 32))
    assert batch.namespace == NS and batch.event_ids == [event]
    assert [card.id for card in batch.cards] == [event]
    assert {n.name for n in batch.context} == {"Ana", "User", "Porto"}  # the newest nodes
    assert batch.kin == [("User", "sister", "Ana")]  # the speaker's kin already known
    newest = await engine.storage.graph.batch(job.target_id, "User", KIN_RELATIONS, (1, 32))
    assert [n.id for n in newest.context] == [batch.context[0].id]
    assert (await engine.storage.graph.batch(job.target_id, "User", [], (0, 32))).context == []
    assert (
        await engine.storage.graph.batch(job.target_id, "Bob", KIN_RELATIONS, (24, 32))
    ).kin == []


async def test_a_projection_transaction_writes_all_or_nothing(engine: StrataGate) -> None:
    now = "2024-01-01T00:00:00+00:00"

    def write(tx: GraphTransaction) -> str:
        node_id = tx.insert_node(NS, ("Kiln", "kiln"), "tool", ["pottery"], now)
        tx.add_terms(NS, node_id, ["Kiln", "pottery"])
        return node_id

    node_id = await engine.storage.graph.project(write)
    assert [v.node.id for v in await _search(engine, NS, query_tokens("kiln"), 5)] == [node_id]

    def fail(tx: GraphTransaction) -> None:
        other = tx.insert_node(NS, ("Wheel", "wheel"), "tool", [], now)
        tx.add_terms(NS, other, ["Wheel"])
        raise RuntimeError("the rule gave up")

    with pytest.raises(RuntimeError):
        await engine.storage.graph.project(fail)
    assert await _search(engine, NS, query_tokens("wheel"), 5) == []


async def test_facts_and_edges_are_current_until_superseded_or_marked_history(
    engine: StrataGate,
) -> None:
    now, later = "2024-01-01T00:00:00+00:00", "2024-02-01T00:00:00+00:00"

    def write(tx: GraphTransaction) -> tuple[list[str], list[str], list[str]]:
        ana = tx.insert_node(NS, ("Ana", "ana"), "person", [], now)
        rome = tx.insert_node(NS, ("Rome", "rome"), "place", [], now)
        old = tx.insert_fact(ana, "city", "Porto", Stated(0.8, now, now, now))
        new = tx.insert_fact(ana, "city", ["Lisbon", "Rome"], Stated(0.8, later, later, later))
        tx.supersede("fact", old, new, later, later)
        edge = tx.insert_edge(NS, (ana, rome), "visits", Stated(0.8, now, now, now))
        past = tx.insert_edge(NS, (ana, rome), "visits", Stated(0.8, None, None, now))
        tx.mark_history("edge", past, now, later)
        facts = [f.id for f in tx.current_facts(ana, "city")]
        assert tx.current_facts(ana, "city")[0].value == ["Lisbon", "Rome"]
        return facts, [b.id for b in tx.current_edges(ana, "visits")], [new, edge]

    facts, edges, (new, edge) = await engine.storage.graph.project(write)
    assert facts == [new] and edges == [edge]
