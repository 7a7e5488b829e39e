"""The labelled graph benchmark (issue 26): its scoring maths on hand-made graphs, its sets'
format, and items projected through the offline model end to end."""

import json
import re

import pytest

from benchmarks.graph_quality import (
    SETS_DIR,
    Edge,
    Fact,
    Graph,
    Node,
    Score,
    load_items,
    score_item,
    turns_of,
)

RELATIONS = set(
    [
        "sister",
        "brother",
        "mother",
        "father",
        "son",
        "daughter",
        "wife",
        "husband",
        "partner",
        "friend",
        "colleague",
        "boss",
        "roommate",
        "neighbour",
        "teacher",
        "mentor",
        "coach",
        "student",
        "cousin",
        "aunt",
        "uncle",
        "grandmother",
        "grandfather",
        "lives_in",
        "works_at",
        "studies_at",
        "from",
        "visited",
        "owns",
        "member_of",
        "uses",
        "works_on",
        "knows",
    ]
)
FACT_KEY = re.compile(
    r"(lives_in|works_at|studies_at|from|role|diet|age|birthday|plays)"
    r"|(favourite|pet|owns):[a-z_ ]+"
)
NODE_TYPES = {"person", "project", "organization", "tool", "place"}

ITEM = {
    "id": "t-1",
    "lang": "en",
    "turns": [{"speaker": "user", "text": "My sister Ana lives in Porto. Mel says hi."}],
    "expect": {
        "nodes": [
            {"name": "Ana", "type": "person"},
            {"name": "Porto", "type": "place"},
            {"name": "Melanie", "type": "person"},
        ],
        "aliases": [{"alias": "Mel", "of": "Melanie"}, {"alias": "Mara", "of": "User"}],
        "edges": [
            {"from": "User", "relation": "sister", "to": "Ana"},
            {"from": "Ana", "relation": "lives_in", "to": "Porto"},
            {"from": "User", "relation": "friend", "to": "Melanie"},
            {"from": "User", "relation": "owns", "to": "Biscuit"},
        ],
        "facts": [
            {"node": "Ana", "key": "lives_in", "value": "Porto"},
            {"node": "User", "key": "pet:dog", "value": "Biscuit"},
        ],
    },
    "not_nodes": ["Friday"],
}


def hand_made() -> Graph:
    return Graph(
        nodes=[
            Node("User", "person", ("Mara",)),  # the user: out of node scores
            Node("ana", "person"),  # case-insensitive match
            Node("Porto", "person"),  # matched, wrong type
            Node("Melanie", "person"),
            Node("Mel", "person"),  # a duplicate of Melanie: an extra node
            Node("Friday", "person"),  # a not_node, and an extra
            Node("Biscuit", "tool"),  # a pet: neither rewarded nor an extra
        ],
        edges=[
            Edge("User", "Sister", "Ana"),  # relation lower-cased
            Edge("Ana", "lives_in", "Porto"),
            Edge("Mara", "friend", "Mel"),  # both ends through aliases
            Edge("User", "uses", "Biscuit"),  # extra
        ],
        facts=[
            Fact("Ana", "lives_in", "Porto, Portugal"),  # value containment
            Fact("User", "activity:said", "The user said: hi"),  # extra
        ],
    )


def test_scoring_counts_on_a_hand_made_graph() -> None:
    score = score_item(ITEM, hand_made())
    assert score.counts == {
        "items": 1,
        "nodes_expected": 3,
        "nodes_recalled": 3,
        "nodes_found": 5,
        "nodes_matched": 3,
        "types_right": 2,
        "not_nodes_hit": 1,
        "edges_expected": 4,
        "edges_recalled": 3,
        "edges_found": 4,
        "edges_matched": 3,
        "facts_expected": 2,
        "facts_recalled": 1,
        "facts_found": 2,
        "facts_matched": 1,
        "aliases_expected": 2,
        "aliases_recalled": 1,
    }
    summary = score.summary()
    assert summary["nodes P"] == pytest.approx(3 / 5)
    assert summary["nodes R"] == 1.0
    assert summary["type P"] == pytest.approx(2 / 3)
    assert (summary["edges P"], summary["edges R"]) == (0.75, 0.75)
    assert (summary["facts P"], summary["facts R"]) == (0.5, 0.5)
    assert summary["aliases R"] == 0.5  # Mara is on the user's node; Mel is its own node
    assert {n["name"] for n in score.details["extra nodes"]} == {"Mel", "Friday"}
    assert score.details["wrong types"] == [{"name": "Porto", "type": "place", "got": "person"}]
    assert score.details["extra edges"] == [["User", "uses", "Biscuit"]]
    assert score.details["missing facts"] == [ITEM["expect"]["facts"][1]]


def test_a_merged_short_form_and_a_wrong_value_score_as_they_should() -> None:
    graph = Graph(
        nodes=[Node("Melanie", "person", ("Mel",)), Node("Ana", "person")],
        facts=[Fact("Ana", "lives_in", "Lisbon")],  # the old city: not contained either way
    )
    score = score_item(ITEM, graph)
    assert score.counts["aliases_recalled"] == 1
    assert score.counts["nodes_found"] == score.counts["nodes_matched"] == 2
    assert score.counts["facts_matched"] == 0
    empty = score_item(ITEM, Graph())
    assert empty.summary()["nodes P"] is None and empty.summary()["nodes R"] == 0.0


def test_totals_add_up_across_items() -> None:
    total = Score()
    total.add(score_item(ITEM, hand_made()))
    total.add(score_item(ITEM, Graph()))
    assert total.counts["items"] == 2
    assert total.summary()["edges R"] == pytest.approx(3 / 8)
    assert total.summary()["edges P"] == 0.75


def test_named_speakers_are_recorded_as_locomo_records_them() -> None:
    item = {
        "turns": [
            {"speaker": "Caroline", "text": "Hey Mel!"},
            {"speaker": "Melanie", "text": "Hi Caroline."},
            {"speaker": "Caroline", "text": "How are the kids?"},
        ]
    }
    turns = turns_of(item)
    assert [[(m.role, m.content) for m in turn] for turn in turns] == [
        [("user", "Caroline: Hey Mel!"), ("assistant", "Melanie: Hi Caroline.")],
        [("user", "Caroline: How are the kids?")],
    ]


@pytest.mark.parametrize("name", ["dev", "dev2", "heldout"])
def test_the_labelled_sets_keep_the_shared_format(name: str) -> None:
    items = json.loads((SETS_DIR / f"{name}.json").read_text("utf-8"))
    assert len({item["id"] for item in items}) == len(items)
    langs = [item["lang"] for item in items]
    least = 45 if name == "dev" else 30
    assert langs.count("en") >= least and langs.count("zh") >= least
    for item in items:
        expect = item["expect"]
        assert set(expect) == {"nodes", "aliases", "edges", "facts"}, item["id"]
        assert item["turns"] and all(t["text"].strip() for t in item["turns"]), item["id"]
        names = {n["name"] for n in expect["nodes"]} | {"User"}
        names |= {a["alias"] for a in expect["aliases"]}
        assert {n["type"] for n in expect["nodes"]} <= NODE_TYPES, item["id"]
        assert not names & set(item["not_nodes"]), item["id"]
        for edge in expect["edges"]:
            assert edge["relation"] in RELATIONS, (item["id"], edge)
            assert edge["from"] in names, (item["id"], edge)
            assert edge["to"] in names or edge["relation"] == "owns", (item["id"], edge)
        for fact in expect["facts"]:
            assert FACT_KEY.fullmatch(fact["key"]), (item["id"], fact)
            assert fact["node"] in names and str(fact["value"]).strip(), (item["id"], fact)


def test_items_projected_offline_score_consistently_and_deterministically() -> None:
    items = load_items("dev", {"en-001", "en-008", "zh-001"})
    assert len(items) == 3
    for item in items:
        score = score_item(item)
        counts, details = score.counts, score.details
        expect = item["expect"]
        assert counts["edges_expected"] == len(expect["edges"])
        assert counts["facts_expected"] == len(expect["facts"])
        for kind in ("nodes", "edges", "facts"):
            missing = counts[f"{kind}_expected"] - counts[f"{kind}_recalled"]
            assert len(details[f"missing {kind}"]) == missing
            assert (
                len(details[f"extra {kind}"]) == counts[f"{kind}_found"] - counts[f"{kind}_matched"]
            )
        assert counts["types_right"] <= counts["nodes_matched"] <= counts["nodes_found"]
        assert score_item(item).counts == counts  # a fresh database gives the same graph


def test_locomo_name_checks_find_calendar_places_common_nouns_and_short_forms() -> None:
    from benchmarks.graph_name_checks import duplicate_people, is_calendar_word, mistyped_people

    for name in ("Tues", "Fri", "Pride Month", "Christmas", "Sundays", "周五", "星期天", "三月"):
        assert is_calendar_word(name), name
    for name in ("Melanie", "Newark", "Jon", "Sunita", "马可", "周敏"):
        assert not is_calendar_word(name), name
    text = (
        'Caroline: I loved "Becoming Nicole" so much. Gina: my home country is Norway, the '
        "web is full of it. Maria: always happy to help. Max: we hiked Oregon. "
        "约翰：我成为了助理经理。"
    )
    people = ["Caroline", "Norway", "Web", "Fri", "周六", "Becoming Nicole", "Nicole", "Max"]
    people += ["Oregon", "Always", "了助理经理", "约翰"]
    assert mistyped_people(people, {"oregon"}, text) == {
        "Norway": "place",  # the closed country list
        "Oregon": "place",  # typed place elsewhere in the run
        "Web": "common word",
        "Always": "common word",
        "Fri": "calendar",
        "周六": "calendar",
        "Becoming Nicole": "title",
        "Nicole": "title",
        "了助理经理": "fragment",
    }
    pairs = duplicate_people(["Mel", "Melanie", "Caroline", "Anna", "小梅", "梅兰妮"], ["Melanie"])
    assert {(p["short"], p["full"], p["speaker"]) for p in pairs} == {
        ("Mel", "Melanie", True),
        ("小梅", "梅兰妮", False),
    }


def test_a_knows_edge_between_two_named_speakers_is_neither_rewarded_nor_an_extra() -> None:
    item = {
        "id": "t",
        "lang": "en",
        "turns": [{"speaker": "Ida", "text": "Hi Ole!"}, {"speaker": "Ole", "text": "Hi!"}],
        "expect": {"nodes": [], "aliases": [], "edges": [], "facts": []},
        "not_nodes": [],
    }
    graph = Graph(nodes=[Node("Ida", "person"), Node("Ole", "person"), Node("Kim", "person")])
    graph.edges = [Edge("Ida", "knows", "Ole"), Edge("Ida", "knows", "Kim")]
    counts = score_item(item, graph).counts
    assert counts["edges_found"] == 1 and counts["edges_matched"] == 0  # Kim is no speaker
