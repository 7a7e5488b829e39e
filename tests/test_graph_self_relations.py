"""Relations a person states about themself that the offline projector reads (issue 26):
where they come from or grew up, the groups they volunteer at or are part of, places they
came back from or spent time in, and people they name as friends or mentors; English and
Chinese. Each also has a look-alike that must give no such edge."""

import pytest

from tests.test_graph_frames import edges, event, project


def said(text: str, speaker: str | None = None) -> list[tuple[str, str, str]]:
    return [edge[:3] for edge in edges(project(event(1, text, speaker)))]


@pytest.mark.parametrize(
    ("text", "edge"),
    [
        ("I was born and raised in Ohio.", ("User", "from", "Ohio")),
        ("I grew up in a small town outside Dublin.", ("User", "from", "Dublin")),
        ("I moved here from Brazil when I was ten.", ("User", "from", "Brazil")),
        ("Back home in Sweden we always celebrate midsummer.", ("User", "from", "Sweden")),
        ("我是在成都长大的。", ("User", "from", "成都")),
        ("我从小在青岛长大。", ("User", "from", "青岛")),
        ("我是四川人。", ("User", "from", "四川")),
    ],
)
def test_where_someone_comes_from(text: str, edge: tuple[str, str, str]) -> None:
    assert edge in said(text)


@pytest.mark.parametrize(
    ("text", "edge"),
    [
        (
            "I volunteer at the Riverside Food Bank on weekends.",
            ("User", "member_of", "Riverside Food Bank"),
        ),
        (
            "I started volunteering at Greenway Animal Shelter last year.",
            ("User", "member_of", "Greenway Animal Shelter"),
        ),
        ("I'm a volunteer at Oakwood Hospital.", ("User", "member_of", "Oakwood Hospital")),
        (
            "I'm part of the Westside Hiking Club now.",
            ("User", "member_of", "Westside Hiking Club"),
        ),
        ("我在红十字会做志愿者。", ("User", "member_of", "红十字会")),
    ],
)
def test_groups_someone_volunteers_at_or_belongs_to(text: str, edge: tuple[str, str, str]) -> None:
    assert edge in said(text)


def test_volunteering_is_not_work_and_an_unnamed_shelter_is_no_node() -> None:
    assert ("User", "works_at", "Oakwood Hospital") not in said(
        "I'm a volunteer at Oakwood Hospital."
    )
    assert said("I volunteer at the homeless shelter on Saturdays.") == []
    assert said("我每周六在收容所做志愿者。") == []


@pytest.mark.parametrize(
    ("text", "edge"),
    [
        ("I just got back from Lisbon.", ("User", "visited", "Lisbon")),
        ("We spent the weekend in Vienna.", ("User", "visited", "Vienna")),
        ("Last summer we went camping at Yosemite.", ("User", "visited", "Yosemite")),
        ("We drove up to Vancouver for the holidays.", ("User", "visited", "Vancouver")),
        ("我刚从东京回来。", ("User", "visited", "东京")),
        ("我们上个周末在杭州玩了两天。", ("User", "visited", "杭州")),
        ("I snapped this photo in Kyoto last spring.", ("User", "visited", "Kyoto")),
        ("The holiday we took to Crete was lovely.", ("User", "visited", "Crete")),
        ("A vacation we had to Corfu- what a sunset!", ("User", "visited", "Corfu")),
        ("这张照片是我在冰岛拍的。", ("User", "visited", "冰岛")),
    ],
)
def test_places_someone_came_back_from_or_spent_time_in(
    text: str, edge: tuple[str, str, str]
) -> None:
    assert edge in said(text)


@pytest.mark.parametrize(
    "text",
    [
        "We're planning to spend the summer in Vienna.",
        "I moved from Porto to Lisbon.",  # Porto was a home, not where I come from
        "I moved from Porto Alegre to Lisbon.",
        "我在北京住了十年，去年搬到了大理。",  # a former home, not a visit
        "我下个月打算在杭州玩几天。",
    ],
)
def test_plans_and_former_homes_are_no_visit_or_origin(text: str) -> None:
    found = said(text)
    assert not [e for e in found if e[1] in ("visited", "from")]


@pytest.mark.parametrize(
    ("text", "edge"),
    [
        ("A friend of mine, Priya, recommended it.", ("User", "friend", "Priya")),
        ("Tom, a friend from college, called me.", ("User", "friend", "Tom")),
        ("I went hiking with my buddy Sam.", ("User", "friend", "Sam")),
        ("Rosa has been mentoring me for two years.", ("User", "mentor", "Rosa")),
        ("Coach Eli says Hana has been coaching me well.", ("User", "coach", "Hana")),
    ],
)
def test_friends_and_mentors_someone_names(text: str, edge: tuple[str, str, str]) -> None:
    assert edge in said(text)


def test_a_named_speakers_own_statements_are_theirs() -> None:
    found = said("I grew up in Cork and I volunteer at the Harbour Food Bank.", "Gina")
    assert ("Gina", "from", "Cork") in found
    assert ("Gina", "member_of", "Harbour Food Bank") in found


def test_a_familiar_chinese_name_is_two_characters() -> None:
    assert ("User", "friend", "小王") in said("我的朋友小王帮我搬家。")
    assert ("User", "colleague", "小张") in said("我的同事小张昨天请假了。")


@pytest.mark.parametrize(
    ("text", "pet"),
    [
        ("这是团子，我家的仓鼠。", "团子"),
        ("毛毛，我们的小狗，今天生病了。", "毛毛"),
        ("我最近养了——豆豆，我的豚鼠。", "豆豆"),
    ],
)
def test_a_chinese_pet_named_by_apposition_is_owned(text: str, pet: str) -> None:
    assert ("User", "owns", pet) in said(text)
