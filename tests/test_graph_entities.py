"""Issue 26: the offline projector types a name only with evidence for it (English and
Chinese), never makes nodes of weekdays, months, holidays, titles or sentence-initial
words, resolves short forms, self-introductions and kinship references, and keeps each
speaker's lines to that speaker."""

from typing import Any

from stratagate_plugin.core.graph.projection import validate_projection
from stratagate_plugin.core.graph.shapes import GraphProjection
from stratagate_plugin.core.llm.offline.graph import project_graph


def event(number: int, said: str, speaker: str | None = None, **extra: Any) -> dict[str, Any]:
    summary = f"{speaker} said: {said}" if speaker else f"The user said: {said}"
    people = [speaker] if speaker else []
    return {"id": f"e{number}", "quotes": [said], "summary": summary, "tags": [],
            "participants": people, "event_type": "other", **extra}  # fmt: skip


def project(*events: dict[str, Any], nodes: list[dict[str, Any]] | None = None) -> GraphProjection:
    projection = project_graph({"events": list(events), "nodes": nodes or []})
    ids = [e["id"] for e in events]
    assert validate_projection(projection, ids, ids).warnings == []
    return projection


def types(projection: GraphProjection) -> dict[str, str]:
    return {node.name: node.type for node in projection.nodes}


def test_weekdays_holidays_titles_and_countries_are_never_people() -> None:
    said = 'I read "Becoming Nicole" on Tues and celebrated Pride Month with Mel in Sweden.'
    graph = project(
        event(1, said, "Caroline", participants=["Caroline", "Becoming Nicole", "Tues",
                                                 "Pride Month", "Mel", "Sweden"]),
        event(2, "See you Fri! The Web is full of Halloween ideas.", "Melanie",
              participants=["Melanie", "Fri", "Web", "Halloween"]),
    )  # fmt: skip
    assert types(graph) == {
        "Caroline": "person", "Mel": "person", "Sweden": "place", "Melanie": "person"
    }  # fmt: skip


def test_sentence_initial_words_and_bare_capitalised_nouns_make_no_nodes() -> None:
    graph = project(
        event(1, "Actually, Lisbon was lovely in the spring.", participants=["Actually", "Lisbon"]),
        event(2, "Honestly the Museum was closed, so Grandpa and I went home.",
              participants=["Honestly", "Museum"]),
    )  # fmt: skip
    assert types(graph) == {"User": "person", "Lisbon": "place"}


def test_chinese_weekdays_and_festivals_are_not_nodes_and_cities_are_places() -> None:
    graph = project(
        event(1, "我星期五和小王去了东京，春节前回来。", "李雷",
              participants=["李雷", "星期五", "小王", "东京", "春节"]),
    )  # fmt: skip
    assert types(graph) == {"李雷": "person", "小王": "person", "东京": "place"}


def test_organisations_tools_and_projects_are_typed_by_their_words() -> None:
    graph = project(
        event(1, "Priya joined Northwind Labs last spring and now uses Figma daily.",
              participants=["Priya", "Northwind Labs", "Figma"]),
        event(2, "I'm working on Project Atlas with Tomas.", "Jon",
              participants=["Jon", "Project Atlas", "Tomas"]),
        event(3, "我入职了星辰科技公司，开始用飞书。", "韩梅梅", participants=["韩梅梅"]),
    )  # fmt: skip
    found = types(graph)
    assert found["Northwind Labs"] == found["星辰科技公司"] == "organization"
    assert found["Figma"] == found["飞书"] == "tool"
    assert found["Project Atlas"] == "project"
    assert found["Priya"] == found["Tomas"] == "person"


def test_every_type_decision_cites_the_event_that_gave_it() -> None:
    graph = project(
        event(1, "Nothing new today.", "Jon"),
        event(2, "I had lunch with Greta in Oslo.", "Jon", participants=["Jon", "Greta", "Oslo"]),
    )
    sources = {node.name: node.source_event_ids for node in graph.nodes}
    assert sources["Greta"] == sources["Oslo"] == ["e2"]


def test_a_short_form_used_for_a_speaker_is_that_speakers_alias() -> None:
    graph = project(
        event(1, "I finally finished the painting.", "Melanie"),
        event(2, "That's wonderful, Mel! Send me a photo.", "Caroline",
              participants=["Caroline", "Mel"]),
    )  # fmt: skip
    assert "Mel" not in types(graph)
    [melanie] = [node for node in graph.nodes if node.name == "Melanie"]
    assert melanie.aliases == ["Mel"] and melanie.alias_sources == {"Mel": ["e2"]}


def test_a_short_form_of_two_known_people_stays_apart() -> None:
    known = [{"id": "n1", "name": "Melanie", "type": "person", "aliases": []},
             {"id": "n2", "name": "Melissa", "type": "person", "aliases": []}]  # fmt: skip
    graph = project(event(1, "I met Mel for coffee.", "Jon", participants=["Jon", "Mel"]),
                    nodes=known)  # fmt: skip
    assert types(graph)["Mel"] == "person"
    assert all(not node.aliases for node in graph.nodes)


def test_a_kinship_reference_resolves_to_the_named_relative() -> None:
    graph = project(
        event(1, "My sister Ana lives in Porto."),
        event(2, "My sister just started working at Vela Labs."),
        event(3, "我哥哥李强住在成都。", "王芳"),
        event(4, "我哥哥下个月搬到了重庆。", "王芳"),
    )
    edges = {(e.from_ref, e.relation, e.to_ref) for e in graph.edges}
    assert ("person:ana", "works_at", "organization:velalabs") in edges
    assert ("person:李强", "lives_in", "place:重庆") in edges


def test_a_self_introduction_is_the_speakers_alias_in_both_languages() -> None:
    graph = project(
        event(1, "Hi! I'm Mara, I just joined the team."), event(2, "大家好，我叫林晓。")
    )
    [user] = [node for node in graph.nodes if node.name == "User"]
    assert {"Mara", "林晓"} <= set(user.aliases)
    assert user.alias_sources["Mara"] == ["e1"] and user.alias_sources["林晓"] == ["e2"]
    assert "Mara" not in types(graph) and "林晓" not in types(graph)


def test_a_named_speaker_owns_only_their_own_first_person_lines() -> None:
    graph = project(
        event(1, "I moved to Denver last year.", "Caroline", participants=["Caroline", "Melanie"]),
        event(2, "I work at a bakery, and Caroline is visiting.", "Melanie",
              participants=["Melanie", "Caroline"]),
        event(3, "我住在武汉。", "张伟", participants=["张伟", "李娜"]),
    )  # fmt: skip
    facts = {node.name: {(f.key, str(f.value)) for f in node.facts} for node in graph.nodes}
    assert facts["Caroline"] == {("lives_in", "Denver")}
    assert facts["Melanie"] == set() and facts.get("李娜", set()) == set()
    assert facts["张伟"] == {("lives_in", "武汉")}


def test_common_nouns_and_names_after_bare_to_are_not_people_or_places() -> None:
    graph = project(
        event(1, "Networking was a lifesaver for me, Jon.", "Gina",
              participants=["Gina", "Networking"]),
        event(2, "We had to say goodbye to Max. He was part of our family.", "John",
              participants=["John", "Max"]),
        event(3, "我爸爸在附近工作，我妈妈在中国银行上班。", "王芳"),
    )  # fmt: skip
    found = types(graph)
    assert "Networking" not in found and found.get("Max") != "place"
    assert "附近" not in found and found["中国银行"] == "organization" and "中国" not in found
    assert all(not node.facts for node in graph.nodes)  # whose parent works where: unknown


def test_a_bare_kind_word_or_a_phrase_is_no_chinese_organisation_or_project() -> None:
    graph = project(
        event(1, "我们有个计划，她在当地一所学校教书。", "梅兰妮",
              participants=["梅兰妮", "计划", "在当地一所学校"]),
        event(2, "我表妹在协和医院实习。", "卡罗琳"),
    )  # fmt: skip
    assert types(graph) == {"梅兰妮": "person", "卡罗琳": "person", "协和医院": "organization"}


def test_a_vocative_question_names_a_person_and_now_at_a_company_is_the_company() -> None:
    graph = project(
        event(1, "Jordan, can you send me the slides?", participants=["Jordan"]),
        event(2, "我上个月从网易离职了，现在在美团做数据分析师。"),
    )
    assert types(graph) == {"User": "person", "Jordan": "person", "美团": "organization"}
