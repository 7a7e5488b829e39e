"""Issue 26, >= 5 LoCoMo edges by general mechanisms: a group a speaker names as theirs
("our choir, 'Northern Voices'", 我们的乐队叫“夜航”) is one they belong to, even in
quotes; "been only to Lisbon" is a visit and "never been to Japan" is none; a job lost or
quit at a named employer is a former employer (``worked_at``, never the current
``works_at``); and a sentence stating such a relation becomes an event card, so the graph
can read it."""

from datetime import UTC

from stratagate_plugin.core.llm.offline.events import extract_events
from tests.test_graph_entities import event, project


def edges(said: str, speaker: str | None = None) -> set[tuple[str, str, str]]:
    graph = project(event(1, said, speaker))
    names = {node.ref: node.name for node in graph.nodes}
    return {(names[e.from_ref], e.relation, names[e.to_ref]) for e in graph.edges}


def test_a_group_named_as_ours_is_one_we_belong_to_even_in_quotes() -> None:
    said = "Our choir, 'Northern Voices', meets every Thursday evening."
    assert edges(said, "Ruth") == {("Ruth", "member_of", "Northern Voices")}
    said = "Last spring I joined a cycling club called Spoke Sisters."
    assert edges(said) == {("User", "member_of", "Spoke Sisters")}
    assert edges("My team is called Harbour Hawks, and we train on Sundays.") == {
        ("User", "member_of", "Harbour Hawks")
    }


def test_a_quoted_title_without_a_group_noun_is_still_no_node() -> None:
    assert edges("I finally read 'Northern Lights' on the train.") == set()


def test_a_chinese_group_named_as_ours_is_one_we_belong_to() -> None:
    assert edges("我们的乐队叫“夜航”，每周六排练。", "阿杰") == {("阿杰", "member_of", "夜航")}
    assert edges("我们的团体叫‘晨光志愿者联盟’，成员来自各行各业。") == {
        ("User", "member_of", "晨光志愿者联盟")
    }


def test_been_with_an_adverb_is_a_visit_and_never_is_none() -> None:
    assert edges("Been only to Lisbon once, years ago.", "Noor") == {("Noor", "visited", "Lisbon")}
    assert edges("I've already been to Kyoto twice.") == {("User", "visited", "Kyoto")}
    assert edges("I've never been to Japan.") == set()
    assert edges("We haven't visited Oslo yet.") == set()
    assert edges("我从来没去过巴黎。") == set()


def test_a_lost_or_quit_job_names_a_former_employer_never_the_current_one() -> None:
    assert edges("Sadly I lost my job at Greyfield last week.", "Tomas") == {
        ("Tomas", "worked_at", "Greyfield")
    }
    assert edges("I quit my job at Lumen Bank in May.", "Priya") == {
        ("Priya", "worked_at", "Lumen Bank")
    }
    assert edges("我上个月丢了在星河科技的工作。", "小周") == {("小周", "worked_at", "星河科技")}
    assert edges("I work at Greyfield now.") == {("User", "works_at", "Greyfield")}
    # a job one only thinks of quitting is still the current one
    assert edges("I might quit my job at Greyfield.") == {("User", "works_at", "Greyfield")}
    assert edges("我可能会辞掉在星河科技的工作。") == {("User", "works_at", "星河科技")}
    assert edges("I might visit Oslo in the spring.") == set()


def cards(*lines: str) -> list[str]:
    messages = [
        {"id": f"m{i}", "role": "user", "content": line, "created_at": "2023-05-01T10:00:00+00:00"}
        for i, line in enumerate(lines)
    ]
    found = extract_events({"target": {"messages": messages}}, UTC)
    return [" ".join(card.quotes) for card in found.events]


def test_a_sentence_stating_a_relation_becomes_an_event_card() -> None:
    said = cards(
        "Noor: Paris?! Never had a chance to visit it. Been only to Lisbon once.",
        "Ruth: Thanks! Our choir, 'Northern Voices', is made of all kinds of people.",
        "阿杰: 谢谢！这是我在祖国瑞典的奶奶送给我的礼物。",
    )
    assert any("Lisbon" in quote for quote in said)
    assert any("Northern Voices" in quote for quote in said)
    assert any("瑞典" in quote for quote in said)


def test_an_acronym_before_its_noun_makes_no_event_of_a_loose_frame() -> None:
    assert cards("Sam: My work makes a difference for the LGBTQ+ community.") == []


def test_an_apposition_describing_the_name_leaves_it_the_subject() -> None:
    assert ("Marco", "lives_in", "Turin") in edges(
        "Marco, the neighbour we met at the party, moved to Turin."
    )
    assert ("User", "lives_in", "Turin") not in edges(
        "Marco, the neighbour we met at the party, moved to Turin."
    )


def test_a_name_before_a_plus_modifies_the_noun_after_it() -> None:
    said = "I'm proud my work makes a difference for the LGBTQ+ community."
    assert edges(said) == set()


def test_the_role_a_clause_of_the_speaker_gives_is_theirs() -> None:
    assert ("User", "colleague", "Bruno") in edges(
        "Bruno, the colleague I mentioned last week, finally moved to Lyon."
    )
    assert ("Bruno", "lives_in", "Lyon") in edges(
        "Bruno, the colleague I mentioned last week, finally moved to Lyon."
    )


def test_every_stop_of_a_chinese_trip_is_a_visit_and_an_errand_is_none() -> None:
    assert edges("国庆我们去了一趟青岛，还顺路去了威海。") >= {
        ("User", "visited", "青岛"),
        ("User", "visited", "威海"),
    }
    assert edges("我下午去了一趟超市。") == set()
