"""Plain statements of durable facts become event cards (issue 26, "statements become events
first"): relations, residence, work, study, pets, membership, tools, favourites, diet, age,
self-introduction, in English and Chinese, each with its type, participants and source; a
question, greeting or small talk gives no card."""

from datetime import UTC
from typing import Any

import pytest

from stratagate_plugin.core.llm.offline.events import extract_events
from stratagate_plugin.core.llm.tasks import EventCardDraft

SENT = "2024-03-05T10:00:00+00:00"


def extract(*contents: str, role: str = "user") -> list[EventCardDraft]:
    messages = [
        {"id": f"m{i}", "role": role, "content": text, "created_at": SENT}
        for i, text in enumerate(contents)
    ]
    payload: dict[str, Any] = {
        "target": {"messages": messages},
        "allowed_source_message_ids": [m["id"] for m in messages],
        "timeline": [],
    }
    return extract_events(payload, UTC).events


def only_card(text: str) -> EventCardDraft:
    cards = extract(text)
    assert len(cards) == 1, (text, [card.title for card in cards])
    return cards[0]


ISSUE_STATEMENTS = [
    ("My sister Ana lives in Porto.", ["Ana"], "The user's sister Ana lives in Porto"),
    ("I use Obsidian for my notes.", [], "The user uses Obsidian for their notes"),
    ("My dog Biscuit is a beagle.", [], "The user's dog Biscuit is a beagle"),
    ("我妹妹安娜住在波尔图。", ["安娜"], "用户妹妹安娜住在波尔图"),
    ("我用Obsidian记笔记。", [], "用户用Obsidian记笔记"),
    ("我的狗饼干是一只比格犬。", [], "用户的狗饼干是一只比格犬"),
]


@pytest.mark.parametrize(("text", "people", "title"), ISSUE_STATEMENTS)
def test_the_issue_s_statements_become_fact_cards(text: str, people: list[str], title: str) -> None:
    card = only_card(text)
    assert card.title == title
    assert card.source_message_ids == ["m0"]
    assert card.temporal["event_type"] == "other"
    assert card.temporal["status"] == "ongoing"
    assert card.criticality == "identity"
    assert card.temporal["participants"] == people


# (statement, people among its participants, names that must not be participants)
OWN_STATEMENTS = [
    ("Clara has a sister named Ines.", ["Clara", "Ines"], []),
    ("My brother Tom is a nurse in Leeds.", ["Tom"], ["Leeds"]),
    ("I have a cat called Miso.", [], ["Miso"]),
    ("I'm a member of the Lisbon chess club.", [], ["Lisbon"]),
    ("I study biology at the University of Toronto.", [], ["Toronto", "University"]),
    ("Priya is my manager.", ["Priya"], []),
    ("Jon owns a bakery in Leeds.", ["Jon"], ["Leeds"]),
    ("My husband is called David.", ["David"], []),
    ("Our team uses Linear for tracking bugs.", [], ["Linear"]),
    ("I've been using Notion for years.", [], ["Notion"]),
    ("My kids go to Riverside Elementary.", [], ["Riverside", "Riverside Elementary"]),
    ("I'm vegetarian.", [], []),
    ("I don't eat pork.", [], []),
    ("I'm 34 years old.", [], []),
    ("I'm Mara, a product designer.", ["Mara"], []),
    ("Kenji, my roommate, works as a paramedic.", ["Kenji"], []),
    ("We adopted two kittens from the shelter.", [], []),
    ("My grandfather Luis grew up in Valparaiso.", ["Luis"], ["Valparaiso"]),
    ("小王是我的同事。", ["小王"], []),
    ("我叫李明，是一名医生。", ["李明"], []),
    ("我哥哥在上海读大学。", [], ["上海"]),
    ("我是素食者。", [], []),
    ("我养了一只猫叫咪咪。", [], ["咪咪"]),
    ("我是读书俱乐部的成员。", [], []),
    ("我今年三十岁。", [], []),
    ("我们团队一直用飞书沟通。", [], []),
    ("We have two dogs named Max and Ruby.", [], ["Max", "Ruby"]),
    ("My favorite band is Radiohead.", [], ["Radiohead"]),
    ("Call me Sam.", ["Sam"], ["Call"]),
    ("I teach math at a high school in Denver.", [], ["Denver"]),
    ("张伟是我的老板。", ["张伟"], []),
    ("我的室友小张在银行工作。", ["小张"], []),
    ("我老婆在医院当护士。", [], []),
]


@pytest.mark.parametrize(("text", "people", "things"), OWN_STATEMENTS)
def test_durable_statements_become_cards_whose_participants_are_people(
    text: str, people: list[str], things: list[str]
) -> None:
    card = only_card(text)
    assert card.source_message_ids == ["m0"]
    assert card.temporal["event_type"] == "other"
    assert card.criticality in ("identity", "preference")
    participants = card.temporal["participants"]
    assert set(people) <= set(participants), participants
    assert not set(things) & set(participants), participants


def test_a_named_speaker_is_a_participant_and_the_title_says_whose_fact_it_is() -> None:
    cards = extract("Joanna: My dog Biscuit is a beagle.", "Nate: Priya is my manager.")
    assert [card.title for card in cards] == [
        "Joanna's dog Biscuit is a beagle",
        "Priya is Nate's manager",
    ]
    assert cards[0].temporal["participants"] == ["Joanna"]
    assert cards[1].temporal["participants"] == ["Nate", "Priya"]
    assert [card.source_message_ids for card in cards] == [["m0"], ["m1"]]


@pytest.mark.parametrize(
    ("text", "title"),
    [
        ("I mostly use VS Code for Python.", "The user mostly uses VS Code for Python"),
        ("I never drink alcohol.", "The user never drinks alcohol"),
        ("Lena is my neighbour.", "Lena is the user's neighbour"),
        ("我姐姐叫丽丽。", "用户姐姐叫丽丽"),
        ("我叫李明，是一名医生。", "用户叫李明,是一名医生"),
    ],
)
def test_a_statement_s_title_says_whose_fact_it_is(text: str, title: str) -> None:
    assert only_card(text).title == title


def test_seven_statements_in_one_message_give_one_card_each() -> None:
    said = (
        "My sister Ana lives in Porto. I use Obsidian for my notes. My dog Biscuit is a "
        "beagle. I work at Acme Logistics. My favourite coffee is a flat white. I'm "
        "vegetarian. I'm 34 years old."
    )
    cards = extract(said)
    assert len(cards) == 7, [card.title for card in cards]
    assert all(card.source_message_ids == ["m0"] for card in cards)
    assert cards[4].criticality == "preference"


SMALL_TALK = [
    "Hi there!",
    "How are you doing?",
    "Where does your sister live?",
    "Do you use Obsidian?",
    "Is your dog a beagle?",
    "Thanks, that's great!",
    "Haha yeah, totally.",
    "That sounds fun.",
    "Oh nice, tell me more.",
    "My sister is so funny.",
    "This is a great idea.",
    "你好！",
    "你住在哪里？",
    "谢谢！",
    "哈哈，好的。",
    "你养猫吗？",
    "你用什么记笔记？",
    "I'm 5 min late, sorry.",
    "I use to go there a lot.",
    "It's great to have a friend like you.",
    "Just part of the journey.",
]


@pytest.mark.parametrize("text", SMALL_TALK)
def test_questions_greetings_and_small_talk_give_no_card(text: str) -> None:
    assert extract(text) == []


def test_a_statement_from_the_unnamed_assistant_is_not_the_user_s_fact() -> None:
    assert extract("I use Obsidian for my notes.", role="assistant") == []


def test_a_move_still_supersedes_where_the_user_lived() -> None:
    cards = extract("I live in Porto.", "I moved to Lisbon last month.")
    assert len(cards) == 2
    assert cards[1].temporal.get("supersedes_event_ids") == ["card:0"]


# (sentence, people among the participants, names that must not be participants)
NOT_PEOPLE = [
    ('My favourite film is "The Shape of Water".', [], ["Shape", "Water", "The Shape"]),
    ("We spent Thanksgiving with my aunt Rosa.", ["Rosa"], ["Thanksgiving"]),
    ("Banana bread is my favourite snack.", [], ["Banana"]),
    ("Today I have to update the Grafana dashboard.", [], ["Grafana"]),
    ("My cousin Aiko is getting married in Osaka next spring.", ["Aiko"], ["Osaka"]),
    ("At home we use Trello for chores and Spotify for music.", [], ["Trello", "Spotify"]),
    ("I speak Portuguese with my grandmother Lucia.", ["Lucia"], ["Portuguese"]),
    ("Dana's startup is building Orbit, a budgeting app.", [], ["Orbit"]),
    ("My neighbour Ivan got a job at Maersk.", ["Ivan"], ["Maersk"]),
    ("我妈妈在银行做客户经理。", [], ["做客户经理", "客户经理"]),
    ("我朋友小美明天要去杭州。", ["小美"], ["小美明天", "杭州"]),
    ("莉娜有个哥哥叫安东。", ["莉娜", "安东"], []),
]


@pytest.mark.parametrize(("text", "people", "things"), NOT_PEOPLE)
def test_titles_holidays_tools_and_places_are_not_participants(
    text: str, people: list[str], things: list[str]
) -> None:
    cards = extract(text)
    assert cards, text
    participants = {name for card in cards for name in card.temporal["participants"]}
    assert set(people) <= participants, participants
    assert not set(things) & participants, participants


def test_a_pronoun_subject_stays_in_the_title() -> None:
    """'This' before a verb is the sentence's subject: "This is Luna, my cat." was titled
    "Is Luna, the user's cat" when it was cut like a determiner ("this book")."""
    assert only_card("This is Luna, my cat.").title == "This is Luna, the user's cat"
