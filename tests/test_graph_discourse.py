"""Subject tracking in the offline projector (issue 26): a pronoun refers to the person
named last (in its sentence or a few events back, never a speaker), an elided subject is
the previous clause's, kinship said with a copula or a naming verb, a relation named first
and its name given later, and relation verbs with words between them and their object.
The sentences are not those of the labelled sets."""

from typing import Any

from stratagate_plugin.core.llm.offline.graph import project_graph
from tests.test_graph_frames import edges, event, facts, project


def user_said(number: int, text: str) -> dict[str, Any]:
    """An event as the user's cards carry it: "The user said: …", no participants."""
    return event(number, text) | {"summary": f"The user said: {text}"}


def relations(*said: str) -> set[tuple[str, str, str]]:
    graph = project(*(user_said(i, text) for i, text in enumerate(said, 1)))
    return {(a, relation, b) for a, relation, b, _ in edges(graph)}


def test_a_pronoun_in_the_next_event_is_the_person_named_before() -> None:
    found = relations("I got to know Wilhelmina at a chess camp.", "She lives in Bergen now.")
    assert ("Wilhelmina", "lives_in", "Bergen") in found
    assert ("User", "lives_in", "Bergen") not in found


def test_a_pronoun_never_refers_to_a_speaker() -> None:
    graph = project(
        event(1, "My nephew Anselm just finished school.", "Greta"),
        event(2, "He starts work at Ostwind Energie in June.", "Greta"),
    )
    assert ("Anselm", "works_at", "Ostwind Energie", True) in edges(graph)
    assert "works_at" not in facts(graph, "Greta")


def test_kinship_said_with_a_copula_or_a_pronoun() -> None:
    assert ("User", "boss", "Ottoline") in relations("Ottoline is my manager, sadly.")
    assert ("User", "roommate", "Benedikt") in relations(
        "I first met Benedikt in Zagreb.", "He's been my roommate for two years."
    )
    assert ("User", "friend", "Perpetua") in relations("Perpetua and I have been friends for ages.")


def test_a_relative_named_later_gets_the_relation() -> None:
    found = relations("I have a son.", "His name is Evander and he studies at Kestrel College.")
    assert ("User", "son", "Evander") in found
    assert ("Evander", "studies_at", "Kestrel College") in found


def test_an_apposition_or_relative_clause_is_about_the_name() -> None:
    assert ("Quillon", "lives_in", "Tallinn") in relations(
        "Quillon, my coworker from the lab, recently moved to Tallinn."
    )
    assert ("Roswitha", "works_at", "Fenwick Foundry") in relations(
        "Roswitha, who I sing with, works part-time at Fenwick Foundry."
    )


def test_an_elided_subject_is_the_previous_clauses_first_mention() -> None:
    found = relations("My cousin Ignatius is in Lagos, working for Zenith Bank.")
    assert ("Ignatius", "works_at", "Zenith Bank") in found
    assert ("User", "works_at", "Zenith Bank") not in found
    found = relations("I left Brightmoor Mills and joined a startup called Dovetail.")
    assert ("User", "works_at", "Dovetail") in found
    assert not any(a == "Brightmoor Mills" for a, _, _ in found)


def test_verbs_with_words_before_their_object() -> None:
    assert ("User", "studies_at", "Leuven University") in relations(
        "I study medieval history at Leuven University."
    )
    assert ("Hortense", "lives_in", "Ghent") in relations(
        "My aunt Hortense lives in a tiny canal house in Ghent."
    )
    assert ("User", "lives_in", "Ghent") not in relations("I learned Dutch when I lived in Ghent.")


def test_chinese_copula_pronoun_and_elided_subjects() -> None:
    found = relations("郑凯是我的老同事，他前年搬到了青岛，现在在海尔上班。")
    assert {("User", "colleague", "郑凯"), ("郑凯", "lives_in", "青岛")} <= found
    assert ("郑凯", "works_at", "海尔") in found
    found = relations("我表哥叫吴迪。", "他被浙江大学录取了。")
    assert {("User", "cousin", "吴迪"), ("吴迪", "studies_at", "浙江大学")} <= found


def test_chinese_named_later_and_met_at() -> None:
    found = relations("我跟老婆是在成都认识的，她叫苏晴，现在在招商银行工作。")
    assert ("User", "wife", "苏晴") in found
    assert ("苏晴", "works_at", "招商银行") in found
    assert ("User", "knows", "钱多多") in relations("我和钱多多是在一次徒步活动上认识的。")


def test_chinese_three_character_names_and_words_that_are_not_names() -> None:
    found = relations("我的导师叫邓志明，他在南开大学当教授。")
    assert {("User", "mentor", "邓志明"), ("邓志明", "works_at", "南开大学")} <= found
    found = relations("我奶奶吴桂英一个人住在扬州。")
    assert {("User", "grandmother", "吴桂英"), ("吴桂英", "lives_in", "扬州")} <= found
    found = relations("我爸爸老家在河北，退休前在邮局工作。")
    assert not any("老家" in (a, b) for a, _, b in found)
    assert ("User", "works_at", "邮局") not in found  # his work, not the user's


def test_possessive_homes_and_switches() -> None:
    found = relations("My godmother Winifred is lovely.", "We had tea at her cottage in Whitby.")
    assert ("Winifred", "lives_in", "Whitby") in found
    assert ("User", "lives_in", "Whitby") not in found
    graph = project(user_said(1, "We migrated from Jira to Shortcut in the spring."))
    assert ("User", "uses", "Shortcut", False) in edges(graph)
    assert {n.name: n.type for n in graph.nodes}.get("Jira") != "place"


def test_two_named_speakers_know_each_other_citing_their_first_lines() -> None:
    graph = project(
        event(1, "Morning! How was the hike?", "Oskar"),
        event(2, "Great, I went with my cousin Lale.", "Ilse"),
        event(3, "Nice, I love that trail.", "Oskar"),
    )
    names = {node.ref: node.name for node in graph.nodes}
    knows = [e for e in graph.edges if e.relation == "knows"]
    assert [(names[e.from_ref], names[e.to_ref]) for e in knows] == [("Ilse", "Oskar")]
    assert knows[0].source_event_ids == ["e2", "e1"]
    alone = project(user_said(1, "I met Oskar yesterday."), event(2, "Hi there.", "Oskar"))
    assert not any(e.relation == "knows" and e.source_event_ids == ["e2"] for e in alone.edges)


def test_someone_met_and_then_named_is_known() -> None:
    found = relations("At the fundraiser I met this brilliant nurse, Ottilie, who runs marathons.")
    assert ("User", "knows", "Ottilie") in found
    assert ("User", "knows", "Bram") in relations("I chatted with a guy called Bram on the train.")
    assert not any(r == "knows" for _, r, _ in relations("I met the team at noon."))


def test_past_trips_in_both_languages_and_errands_or_plans_are_not() -> None:
    assert ("User", "visited", "Lisbon") in relations("Took a long weekend trip to Lisbon in May.")
    assert ("User", "visited", "Crete") in relations("We had a lovely holiday in Crete last year.")
    assert not any(r == "visited" for _, r, _ in relations("I'm planning a trip to Oslo."))
    assert ("User", "visited", "苏格兰") in relations("那张照片是去苏格兰的那次旅行拍的。")
    assert ("User", "visited", "青岛") in relations("我上个月去过两次青岛。")
    assert not any(r == "visited" for _, r, _ in relations("我下班后去超市了。"))
    assert ("User", "knows", "马克") in relations("在聚会上我和一个叫马克的人聊了很久。")


def test_chinese_short_forms_are_aliases_when_exactly_one_person_fits() -> None:
    said = "小梅，你的画太美了！"
    card = event(1, said, "卡罗琳") | {"participants": ["卡罗琳", "小梅"]}
    graph = project_graph({"events": [card], "nodes": [{"name": "梅兰妮", "type": "person"}]})
    melanie = [n for n in graph.nodes if n.name == "梅兰妮"]
    assert melanie and "小梅" in melanie[0].aliases
    assert melanie[0].alias_sources["小梅"] == ["e1"]
    assert "小梅" not in {n.name for n in graph.nodes}
    known = [{"name": "梅兰妮", "type": "person"}, {"name": "梅丽莎", "type": "person"}]
    two = project_graph({"events": [card], "nodes": known})  # two fit: kept apart
    assert not any("小梅" in n.aliases for n in two.nodes)
    card = event(2, "明明昨天来找我了。", "王芳") | {"participants": ["王芳", "明明"]}
    graph = project_graph({"events": [card], "nodes": [{"name": "李明", "type": "person"}]})
    assert any(n.name == "李明" and "明明" in n.aliases for n in graph.nodes)


def test_a_job_lost_or_left_is_no_workplace_and_an_outing_no_place() -> None:
    assert not any(r == "works_at" for _, r, _ in relations("Sadly I lost my job at Greyfield."))
    assert ("User", "works_at", "Greyfield") in relations("I got a job at Greyfield!")
    assert not any(r == "works_at" for _, r, _ in relations("我上个月从京东辞职了。"))
    assert not any(r == "visited" for _, r, _ in relations("周末我们去登山了。"))


def test_a_chinese_clause_opened_by_a_relative_is_about_that_relative() -> None:
    assert not any(r == "visited" for _, r, _ in relations("舅舅一家都移民去了澳大利亚。"))
    assert ("User", "visited", "千岛湖") in relations("上周我们去了趟千岛湖，风景很好。")
