"""The offline projector's relation frames, English and Chinese, on event payloads: kinship
and roles, residence / work / study / origin, tools, favourites, self-introduction; every
record cites its event, and the projection stays within the §4 limits."""

from typing import Any

from stratagate_plugin.core.graph.projection import validate_projection
from stratagate_plugin.core.graph.shapes import MAX_NODES, GraphProjection
from stratagate_plugin.core.llm.offline.graph import project_graph


def event(number: int, said: str, speaker: str | None = None, **extra: Any) -> dict[str, Any]:
    summary = f"{speaker} said: {said}" if speaker else said
    return {
        "id": f"e{number}",
        "quotes": [said],
        "summary": summary,
        "participants": [speaker] if speaker else [],
        "tags": [],
        "event_type": "other",
        **extra,
    }


def project(*events: dict[str, Any]) -> GraphProjection:
    projection = project_graph({"events": list(events)})
    ids = [e["id"] for e in events]
    assert validate_projection(projection, ids, ids).warnings == []  # all cite their events
    return projection


def edges(projection: GraphProjection) -> list[tuple[str, str, str, bool]]:
    names = {node.ref: node.name for node in projection.nodes}
    return [(names[e.from_ref], e.relation, names[e.to_ref], e.exclusive) for e in projection.edges]


def facts(projection: GraphProjection, name: str) -> dict[str, list[str]]:
    [node] = [n for n in projection.nodes if n.name == name]
    found: dict[str, list[str]] = {}
    for fact in node.facts:
        found.setdefault(fact.key, []).append(str(fact.value))
    return found


def test_an_unprefixed_kinship_line_makes_the_relative_and_says_where_she_lives() -> None:
    graph = project(event(1, "My sister Ana lives in Porto."))
    assert edges(graph) == [
        ("User", "sister", "Ana", False),
        ("Ana", "lives_in", "Porto", True),
    ]
    assert facts(graph, "Ana")["lives_in"] == ["Porto"]
    [ana] = [n for n in graph.nodes if n.name == "Ana"]
    assert ana.type == "person" and ana.source_event_ids == ["e1"]


def test_chinese_kinship_and_residence_cut_the_name_before_the_verb() -> None:
    graph = project(
        event(1, "我妹妹安娜住在波尔图。", "李雷"), event(2, "我的同事罗布邀请我去上课。", "约翰")
    )
    assert edges(graph) == [
        ("李雷", "sister", "安娜", False),
        ("安娜", "lives_in", "波尔图", True),
        ("约翰", "colleague", "罗布", False),
        ("李雷", "knows", "约翰", False),  # two named speakers of one projection (issue 26)
    ]


def test_work_study_origin_tools_and_favourites_in_both_languages() -> None:
    graph = project(
        event(1, "I work at Google and study at Stanford University.", "Bob"),
        event(2, "I grew up in Ohio and I use Notion every day.", "Bob"),
        event(3, "My favorite book is Dune.", "Bob"),
        event(4, "我在腾讯工作，我来自杭州，我用Figma画图。", "李雷"),
        event(5, "我最喜欢的书是三体。", "李雷"),
    )
    assert edges(graph) == [
        ("Bob", "works_at", "Google", True),
        ("Bob", "studies_at", "Stanford University", True),
        ("Bob", "from", "Ohio", True),
        ("Bob", "uses", "Notion", False),
        ("李雷", "works_at", "腾讯", True),
        ("李雷", "from", "杭州", True),
        ("李雷", "uses", "Figma", False),
        ("Bob", "knows", "李雷", False),  # two named speakers of one projection (issue 26)
    ]
    types = {n.name: n.type for n in graph.nodes}
    assert types["Google"] == types["腾讯"] == "organization" and types["Notion"] == "tool"
    bob = facts(graph, "Bob")
    assert bob["works_at"] == ["Google"] and bob["favourite:book"] == ["Dune"]
    assert facts(graph, "李雷")["favourite:book"] == ["三体"]


def test_a_named_subject_before_the_verb_owns_the_frame_and_a_pronoun_the_one_named() -> None:
    graph = project(
        event(1, "Ana moved to Lisbon last month."),  # no speaker: about the one named
        event(2, "She moved to Paris."),  # "she": Ana, named just before (issue 26)
        event(3, "I visited my friend Ana and moved to Rome.", "Bea"),  # a new clause: Bea
        event(9, "They moved to Oslo."),  # "they": nobody known
    )
    assert edges(graph) == [
        ("Ana", "lives_in", "Lisbon", True),
        ("Ana", "lives_in", "Paris", True),
        ("Bea", "friend", "Ana", False),
        ("Bea", "lives_in", "Rome", True),
    ]
    assert "Oslo" in {n.name for n in graph.nodes}  # still a place, with no edge


def test_self_introductions_are_aliases_of_the_speaker_citing_their_event() -> None:
    graph = project(
        event(1, "Hi, I'm Mara, nice to meet you."),
        event(2, "I'm Going to the gym."),  # not a name ("Going")
        event(3, "我叫玛拉。"),
        event(4, "I'm tired of Caroline.", "Jon"),  # not a self-introduction
        event(5, "Call me Jonny.", "Jon"),
    )
    user = next(n for n in graph.nodes if n.name == "User")
    assert sorted(user.aliases) == sorted(["用户", "Mara", "玛拉"])
    assert user.alias_sources["Mara"] == ["e1"] and user.alias_sources["玛拉"] == ["e3"]
    jon = next(n for n in graph.nodes if n.name == "Jon")
    assert jon.aliases == ["Jonny"] and jon.alias_sources == {"Jonny": ["e5"]}


def test_a_batch_over_the_node_limit_keeps_only_edges_between_kept_nodes() -> None:
    many = [event(i, f"My friend Person{chr(65 + i)}x moved to City{chr(65 + i)}y.", "Bob")
            for i in range(20)]  # fmt: skip
    graph = project(*many)
    assert len(graph.nodes) == MAX_NODES
    refs = {n.ref for n in graph.nodes}
    assert graph.edges and all(e.from_ref in refs and e.to_ref in refs for e in graph.edges)


def test_travel_is_an_accumulating_visited_edge_and_plans_are_not_visits() -> None:
    graph = project(
        event(1, "I visited Rome last week and have been to Paris.", "Jon"),
        event(2, "I'm planning to visit Oslo next week.", "Jon"),
        event(3, "我去过巴黎，遇到过道路问题。", "乔恩"),
    )
    assert edges(graph) == [
        ("Jon", "visited", "Rome", False),
        ("Jon", "visited", "Paris", False),
        ("乔恩", "visited", "巴黎", False),
        ("Jon", "knows", "乔恩", False),  # two named speakers of one projection (issue 26)
    ]
