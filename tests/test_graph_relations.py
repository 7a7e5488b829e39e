"""Issue 26: relations as edges with sources (kinship, residence, work, study, ownership
and pets, membership, tools, projects, travel) and facts keyed by attribute, so a new value
supersedes the old one and a sentence stating no attribute is no fact. English and Chinese."""

from pathlib import Path
from typing import Any

from stratagate_plugin.core.config import MemoryConfig
from stratagate_plugin.core.graph.projection import validate_projection
from stratagate_plugin.core.graph.shapes import GraphProjection
from stratagate_plugin.core.llm.offline.graph import project_graph
from stratagate_plugin.core.memory import StrataGate


def event(number: int, said: str, speaker: str | None = None, **extra: Any) -> dict[str, Any]:
    summary = f"{speaker} said: {said}" if speaker else f"The user said: {said}"
    people = [speaker] if speaker else []
    return {"id": f"e{number}", "quotes": [said], "summary": summary, "tags": [],
            "participants": people, "event_type": "other", **extra}  # fmt: skip


def project(*events: dict[str, Any]) -> GraphProjection:
    projection = project_graph({"events": list(events), "nodes": []})
    ids = [e["id"] for e in events]
    assert validate_projection(projection, ids, ids).warnings == []
    return projection


def edges(projection: GraphProjection) -> set[tuple[str, str, str]]:
    names = {node.ref: node.name for node in projection.nodes}
    return {(names[e.from_ref], e.relation, names[e.to_ref]) for e in projection.edges}


def facts(projection: GraphProjection) -> set[tuple[str, str, str]]:
    return {(n.name, f.key, str(f.value)) for n in projection.nodes for f in n.facts}


def test_pets_and_possessions_are_owned_not_tools() -> None:
    graph = project(
        event(1, "My dog Biscuit is a beagle."),
        event(2, "Sam owns Biscuit.", participants=["Sam", "Biscuit"]),
        event(3, "我的猫叫咪咪，很可爱。", "王芳"),
    )
    assert {
        ("User", "owns", "Biscuit"),
        ("Sam", "owns", "Biscuit"),
        ("王芳", "owns", "咪咪"),
    } <= edges(graph)
    assert ("User", "pet:dog", "Biscuit") in facts(graph) and ("王芳", "pet:cat", "咪咪") in facts(
        graph
    )
    assert all(node.type != "tool" for node in graph.nodes)
    assert not any(relation == "uses" for _, relation, _ in edges(graph))


def test_work_membership_projects_tools_and_kin_with_their_sources() -> None:
    graph = project(
        event(1, "Sam works at Acme Logistics.", participants=["Sam"]),
        event(2, "I'm a member of the Hillside Running Club and I'm working on Project Atlas."),
        event(3, "I switched to Linear last week.", "Jon"),
        event(4, "Clara has a sister, Eva, who lives in Madrid.", participants=["Clara", "Eva"]),
        event(5, "我加入了星火读书会，最近在做北极星项目。", "李雷"),
    )
    found = edges(graph)
    assert {
        ("Sam", "works_at", "Acme Logistics"),
        ("User", "member_of", "Hillside Running Club"),
        ("User", "works_on", "Project Atlas"),
        ("Jon", "uses", "Linear"),
        ("Clara", "sister", "Eva"),
        ("Eva", "lives_in", "Madrid"),
        ("李雷", "member_of", "星火读书会"),
        ("李雷", "works_on", "北极星项目"),
    } <= found
    assert all(edge.source_event_ids for edge in graph.edges)


def test_kinship_relations_use_the_shared_vocabulary() -> None:
    graph = project(event(1, "My husband Leo and my neighbour Rosa came over."),
                    event(2, "我老婆小美是老师。", "张伟"))  # fmt: skip
    assert {
        ("User", "husband", "Leo"),
        ("User", "neighbour", "Rosa"),
        ("张伟", "wife", "小美"),
    } <= edges(graph)


def test_facts_are_keyed_by_attribute_and_plain_sentences_are_no_facts() -> None:
    graph = project(
        event(1, "I'll add it to my list.", "John"),
        event(2, "Something exciting happened recently for me.", "John"),
        event(3, "My favourite coffee is a flat white.", "John"),
        event(4, "My licence plate number is KX-204.", "John"),
        event(5, "I work as a nurse and I'm 34 years old.", "John"),
        event(6, "I'm vegetarian and I play the cello.", "John"),
        event(7, "我是一名护士，今年二十八岁，我吃素。", "王芳"),
        event(8, "我最喜欢的水果是芒果。", "王芳"),
    )
    assert facts(graph) == {
        ("John", "favourite:coffee", "a flat white"),
        ("John", "role", "nurse"),
        ("John", "age", "34"),
        ("John", "diet", "vegetarian"),
        ("John", "plays", "cello"),
        ("王芳", "role", "护士"),
        ("王芳", "age", "二十八"),
        ("王芳", "diet", "素食"),
        ("王芳", "favourite:fruit", "芒果"),
    }


async def test_a_new_value_supersedes_the_old_by_key_and_unrelated_facts_stay(
    tmp_path: Path,
) -> None:
    memory = await StrataGate.open(tmp_path / "m.db", MemoryConfig(block_turn_size=2))
    turns = ["My favourite coffee is a flat white.", "I live in Porto.",
             "My car's plate is KX-204, remember that.", "I moved to Lisbon in May.",
             "我最喜欢的茶是龙井。", "现在我最喜欢的茶是普洱。"]  # fmt: skip
    for i, text in enumerate(turns):
        await memory.blocks.append_turn(
            "ns", "t", user=text, assistant="Noted.", receipt_id=f"r{i}"
        )
    await memory.blocks.seal_tail("ns", "t")
    while (report := await memory.derivation.process_pending()).ran + report.graph_ran:
        pass
    [user] = [view for view in await memory.graph.nodes("ns") if view.node.name == "User"]
    current = {f.key: f.value for f in user.current_facts}
    assert current == {
        "favourite:coffee": "a flat white",
        "lives_in": "Lisbon",
        "favourite:tea": "普洱",
    }
    assert ("favourite:tea", "龙井") in {(f.key, f.value) for f in user.historical_facts}
    await memory.close()


def test_a_home_country_is_where_the_speaker_is_from_and_another_pet_is_owned() -> None:
    graph = project(
        event(1, "It was a gift from my grandma in my home country, Sweden.", "Caroline"),
        event(2, "We got another cat named Bailey last month.", "Melanie"),
        event(3, "这条项链是奶奶在我的家乡瑞典送我的。", "卡罗琳"),
    )
    assert {("Caroline", "from", "Sweden"), ("Melanie", "owns", "Bailey"),
            ("卡罗琳", "from", "瑞典")} <= edges(graph)  # fmt: skip
    assert ("Melanie", "pet:cat", "Bailey") in facts(graph)


def test_a_relative_clause_about_an_unnamed_relative_is_not_the_named_persons() -> None:
    graph = project(
        event(1, "Clara has a sister who lives in Madrid.", participants=["Clara"]),
        event(2, "Tom's brother, who works at Initech, visited.", participants=["Tom"]),
    )
    assert facts(graph) == set() and {name for name, _, _ in edges(graph)} <= {"User"}
    assert {node.name: node.type for node in graph.nodes}["Madrid"] == "place"
