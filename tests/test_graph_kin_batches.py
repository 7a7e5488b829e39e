"""Kinship across projection batches (issue 26): "my sister" said in a later batch is the
sister an earlier batch named, when the graph holds exactly one; two sisters resolve to
nobody. End to end: process, new turns, process again."""

from typing import Any

from stratagate_plugin.core.llm.offline.graph import project_graph
from stratagate_plugin.core.memory import StrataGate
from tests.test_graph_frames import edges, event


async def batch(memory: StrataGate, space: str, turns: list[str], start: int) -> None:
    for i, user in enumerate(turns):
        await memory.blocks.append_turn(
            space, "s", user=user, assistant="OK.", receipt_id=f"{space}{start + i}"
        )
    await memory.blocks.seal_tail(space, "s")
    report = await memory.derivation.process_pending()
    assert report.graph_ran >= 1 and report.graph_failed == 0


def current(views: list[Any], name: str) -> list[tuple[str, str]]:
    [view] = [v for v in views if v.node.name == name]
    return sorted((e.edge.relation, e.other_name) for e in view.current_edges)


async def test_my_sister_in_a_later_batch_is_the_sister_named_before(memory: StrataGate) -> None:
    await batch(memory, "en", ["My sister Ana lives in Porto."], 0)
    await batch(memory, "en", ["My sister works at Siemens now."], 1)
    views = await memory.graph.nodes("en")
    assert ("works_at", "Siemens") in current(views, "Ana")
    assert ("works_at", "Siemens") not in current(views, "User")


async def test_chinese_sister_in_a_later_batch(memory: StrataGate) -> None:
    await batch(memory, "zh", ["我姐姐安娜住在波尔图。"], 0)
    await batch(memory, "zh", ["我姐姐昨天搬到了杭州。"], 1)
    views = await memory.graph.nodes("zh")
    assert ("lives_in", "杭州") in current(views, "安娜")


async def test_two_sisters_resolve_to_nobody(memory: StrataGate) -> None:
    await batch(memory, "two", ["My sister Ana lives in Porto.", "My sister Eva lives in Rome."], 0)
    await batch(memory, "two", ["My sister works at Siemens now."], 2)
    views = await memory.graph.nodes("two")
    for name in ("Ana", "Eva", "User"):
        assert ("works_at", "Siemens") not in current(views, name)


def test_the_payloads_kin_resolve_only_a_single_holder() -> None:
    said = event(1, "My sister moved to Lisbon.")
    one = [{"from": "User", "relation": "sister", "to": "Ana"}]
    two = [*one, {"from": "User", "relation": "sister", "to": "Eva"}]
    other = [{"from": "Caroline", "relation": "sister", "to": "Ana"}]
    assert ("Ana", "lives_in", "Lisbon", True) in edges(
        project_graph({"events": [said], "kin": one})
    )
    for kin in (two, other):
        found = edges(project_graph({"events": [said], "kin": kin}))
        assert not [e for e in found if e[1] == "lives_in"]
