"""Issue 26, wrong names: a title stays with its surname ("Dr. Alvarez", 李教授 is a person
named 李教授, as "Dr. Alvarez" is one named with its title), a capitalised organisation
joined by "for" keeps all its words and is never a person ("Habitat for Humanity"), and a
Chinese group noun alone (消防队, 篮球队, 公司) is not an organisation: only a named one
(朝阳区消防队) is."""

from stratagate_plugin.core.llm.offline.graph import project_graph
from stratagate_plugin.core.llm.offline.text import proper_names, split_sentences
from tests.test_graph_entities import event, project, types


def edges(said: str, speaker: str | None = None) -> set[tuple[str, str, str]]:
    graph = project(event(1, said, speaker))
    names = {node.ref: node.name for node in graph.nodes}
    return {(names[e.from_ref], e.relation, names[e.to_ref]) for e in graph.edges}


def test_a_title_does_not_end_the_sentence_nor_leave_the_name() -> None:
    assert split_sentences("I saw Dr. Alvarez today. He was kind.") == [
        "I saw Dr. Alvarez today.",
        "He was kind.",
    ]
    assert proper_names("Mrs. Okafor waved. I called Mr. Brandt back.") == [
        "Mrs. Okafor",
        "Mr. Brandt",
    ]


def test_english_titles_are_kept_with_the_surname() -> None:
    graph = project(event(1, "I saw Dr. Alvarez yesterday about my knee.", participants=[]))
    assert types(graph) == {"User": "person", "Dr. Alvarez": "person"}
    assert edges("Mrs. Okafor is my neighbour.") == {("User", "neighbour", "Mrs. Okafor")}
    assert edges("My coach, Mr. Brandt, lives in Leipzig.") == {
        ("User", "coach", "Mr. Brandt"),
        ("Mr. Brandt", "lives_in", "Leipzig"),
    }
    assert "Prof. Lindqvist" in types(project(event(1, "I met Prof. Lindqvist at the lab.")))


def test_a_bare_surname_later_is_the_titled_person() -> None:
    graph = project(
        event(1, "My therapist is Dr. Moreau.", "Ines"),
        event(2, "Later I phoned Moreau about the journal.", "Ines"),
    )
    people = [n for n in graph.nodes if n.type == "person"]
    assert sorted(n.name for n in people) == ["Dr. Moreau", "Ines"]
    moreau = next(n for n in people if n.name == "Dr. Moreau")
    assert "Moreau" in moreau.aliases


def test_chinese_title_suffixes_make_one_person_named_with_the_title() -> None:
    said = "李教授告诉我要多休息。"
    assert types(project(event(1, said, participants=["李教授"]))) == {
        "User": "person",
        "李教授": "person",
    }
    graph = project(
        event(1, "我今天见了李教授。", "小林", participants=["小林", "李教授"]),
        event(2, "张医生让我每天散步。", "小林", participants=["小林", "张医生"]),
        event(3, "周老师是我的导师。", "小林", participants=["小林", "周老师"]),
    )
    assert types(graph) == {"小林": "person", "李教授": "person", "张医生": "person",
                            "周老师": "person"}  # fmt: skip
    names = {node.ref: node.name for node in graph.nodes}
    assert {(names[e.from_ref], e.relation, names[e.to_ref]) for e in graph.edges} == {
        ("小林", "mentor", "周老师")
    }


def test_an_organisation_joined_by_for_keeps_every_word_and_is_no_person() -> None:
    graph = project(event(1, "I volunteer with Habitat for Humanity on weekends."))
    assert types(graph) == {"User": "person", "Habitat for Humanity": "organization"}
    assert edges("I volunteer with Habitat for Humanity on weekends.") == {
        ("User", "member_of", "Habitat for Humanity")
    }
    assert edges("My aunt Rosa works for Doctors for Peace now.") == {
        ("User", "aunt", "Rosa"),
        ("Rosa", "works_at", "Doctors for Peace"),
    }
    holiday = project(event(1, "We visited Mel for Thanksgiving.", "Kai"))
    assert "Mel" in types(holiday) and not any(" for " in name for name in types(holiday))


def test_a_chinese_group_noun_alone_is_no_organisation() -> None:
    for said in (
        "我加入了消防队。",
        "我去年加入了篮球队。",
        "我在公司加班到很晚。",
        "我参加了读书会。",
    ):
        graph = project_graph({"events": [event(1, said)], "nodes": []})
        assert types(graph) == {"User": "person"}, said
        assert graph.edges == [], said


def test_a_named_chinese_group_is_an_organisation() -> None:
    assert edges("我加入了朝阳区消防队。") == {("User", "member_of", "朝阳区消防队")}
    assert edges("我三月加入了星火读书会。") == {("User", "member_of", "星火读书会")}
