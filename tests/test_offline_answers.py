"""The offline agent answers only from evidence that covers what the question asks about,
and states the current value first (issue 23: "confident wrong answers")."""

import asyncio
from datetime import UTC, datetime
from pathlib import Path

import pytest

from stratagate_plugin.core.config import MemoryConfig
from stratagate_plugin.core.memory import StrataGate
from stratagate_plugin.core.profile.spaces import space_for
from stratagate_plugin.harness.agent import Agent
from stratagate_plugin.harness.runtime import Host
from stratagate_plugin.harness.sessions import open_session
from stratagate_plugin.memory_plugin.offline_agent import (
    _REMEMBER,
    OfflineAgent,
    _answer_line,
    _distinct,
    _is_own_answer,
)
from stratagate_plugin.memory_plugin.question_terms import covers, key_terms
from tests.test_plugin_e2e import make_host, runtime_of

CANT = "I can't confirm that from memory."
CANT_ZH = "我无法从记忆中确认这一点。"  # a Chinese question is answered in Chinese
FIRST_DAY = datetime(2026, 12, 1, 10, 0, tzinfo=UTC)
NEXT_DAY = datetime(2026, 12, 2, 10, 0, tzinfo=UTC)


async def ask(host: Host, session: str, text: str) -> str:
    result = await Agent(host, OfflineAgent()).run_turn(open_session(session, "t", host.cwd), text)
    assert result.ok, result.error
    return result.answer


async def told_then_asked(
    tmp_path: Path, facts: list[str], questions: list[str], sealed: bool = True
) -> list[str]:
    """The facts said in one session, each question asked in another once the plugin's
    worker has derived what was said (so the answer does not depend on how fast it ran);
    not ``sealed``: the facts stay in the session's open tail, raw lines never derived."""
    size = 1 if sealed else 50
    async with make_host(tmp_path / "m.db", tmp_path, block_turn_size=size) as host:
        for fact in facts:
            await ask(host, "monday", fact)
        await asyncio.wait_for(runtime_of(host).idle.wait(), timeout=120)
        return [await ask(host, "tuesday", question) for question in questions]


FACTS_EN = [
    "Please call me Sam from now on.",
    "I hate cilantro.",
    "My sister Ana works at a bakery in Porto.",
    "The quarterly review is scheduled for the 9th of February.",
]
FACTS_ZH = [
    "以后请叫我小山。",
    "我讨厌香菜。",
    "我姐姐在波尔图的一家面包店工作。",
    "季度评审定在二月九日。",
]


@pytest.mark.parametrize(
    "question",
    [
        "What is my dog called?",
        "What's my cat's name?",
        "Do you remember what my brother's car is?",
        "When is my dentist appointment?",
        "Where does my father work?",
    ],
)
async def test_a_question_about_something_never_mentioned_is_not_answered(
    tmp_path: Path, question: str
) -> None:
    [answer] = await told_then_asked(tmp_path, FACTS_EN, [question])
    assert answer == CANT


@pytest.mark.parametrize(
    "question", ["我的狗叫什么名字？", "我哥哥的车是什么颜色？", "我爸爸在哪里工作？"]
)
async def test_a_chinese_question_about_something_never_mentioned_is_not_answered(
    tmp_path: Path, question: str
) -> None:
    [answer] = await told_then_asked(tmp_path, FACTS_ZH, [question])
    assert answer == CANT_ZH


async def test_questions_about_what_was_said_are_answered(tmp_path: Path) -> None:
    asked = [
        "Where does my sister work?",
        "When is the quarterly review?",
        "What do I think of cilantro?",
    ]
    answers = await told_then_asked(tmp_path, FACTS_EN, asked)
    assert "bakery in Porto" in answers[0]
    assert "9th of February" in answers[1]
    assert "cilantro" in answers[2]
    assert all(CANT not in answer for answer in answers)


async def test_chinese_questions_about_what_was_said_are_answered(tmp_path: Path) -> None:
    answers = await told_then_asked(
        tmp_path, FACTS_ZH, ["我姐姐在哪里工作？", "季度评审是什么时候？"]
    )
    assert "面包店" in answers[0] and "二月九日" in answers[1]
    assert all(answer.startswith("根据你之前告诉我的：\n- ") for answer in answers)


@pytest.mark.parametrize(
    ("question", "evidence", "answers"),
    [
        ("What is my dog called?", "Please call me Sam from now on.", False),
        ("What is my dog called?", "My dog is called Biscuit.", True),
        ("When is the Lisbon trip?", "We booked a trip to Madrid in May.", False),
        ("When is the Lisbon trip?", "The Lisbon trip moved to June.", True),
        (
            "What did Maria give her brother for his birthday?",
            "Maria got her brother a bike for his birthday.",
            True,
        ),  # one of several terms missing, the head kept
        (
            "What did Maria give her brother for his birthday?",
            "Maria gave a talk on her birthday.",
            False,
        ),
        ("Where does Clara live?", "Clara moved to Lisbon last month.", True),  # the verb
        ("What did I eat for breakfast?", "I had pancakes for breakfast.", True),
        ("Where does Clara live?", "My cousin lives in Lisbon.", False),  # the head missing
        ("What is my sister's job?", "My sister lives in Bergen.", False),
        ("What colour is my car?", "My car is dark red.", True),  # the answer's kind
        ("What colour is my car?", "My bike is dark red.", False),
        ("What instrument does Mia play?", "My daughter Mia started violin lessons.", True),
        ("How old is my son?", "My son Leo turned 7 in May.", True),
        ("How old is my son?", "My son Leo loves trains.", False),  # no number
        ("How many kids do I have?", "I have three kids.", True),
        ("What is my wifi password at home?", "The wifi password at the cabin is 1234.", False),
        ("What is my wifi password at home?", "My wifi password at home is 1234.", True),
        ("What kind of music does my sister like?", "My sister likes jazz.", True),
        ("小美学什么乐器？", "小美九月开始学小提琴。", True),
        ("我开什么车？", "我九月开始学小提琴。", False),  # 开 of 开始 is no head
        ("我女儿几岁？", "我女儿喜欢画画。", False),
        ("我女儿几岁？", "我女儿今年七岁。", True),
        ("我的狗叫什么名字？", "请叫我小山。", False),
        ("我的狗叫什么名字？", "我的狗叫豆豆。", True),
        ("我们国庆带爸妈去哪里？", "我们打算春节带爸妈去三亚。", False),  # 国庆 not 春节
        ("我们国庆带爸妈去哪里？", "我们决定国庆一起带爸妈去桂林。", True),
        ("我打算什么时候换车？", "我们决定年底把旧车换掉。", True),
        ("里斯本旅行是什么时候？", "我们去马德里旅行。", False),
        ("里斯本旅行是什么时候？", "里斯本之旅改到六月了。", True),
    ],
)
def test_evidence_must_cover_the_key_terms(question: str, evidence: str, answers: bool) -> None:
    assert covers(key_terms(question), evidence) is answers


def test_key_terms_leave_out_question_words_generic_verbs_and_the_asker() -> None:
    assert [term.words for term in key_terms("What is my dog called?")] == [("dog",)]
    assert [term.words for term in key_terms("Do you remember my sister's name?")] == [("sister",)]
    assert key_terms("What is it?") == []


# --- the current value first ------------------------------------------------------------

CHANGES = [
    (
        "Our team offsite is on 14 January 2027.",
        "Actually we moved the team offsite to March.",
        "When is the team offsite?",
        "March",
        "14 January",
    ),
    (
        "我们把发布会定在4月20日。",
        "其实发布会改到5月了。",
        "发布会定在什么时候？",
        "5月",
        "4月20日",
    ),
]


@pytest.mark.parametrize(("first", "second", "question", "now", "before"), CHANGES)
async def test_the_answer_states_the_current_value_first_and_the_older_as_history(
    tmp_path: Path, first: str, second: str, question: str, now: str, before: str
) -> None:
    db = tmp_path / "m.db"
    space = space_for("project", cwd=str(tmp_path), session_id="old")
    async with await StrataGate.open(db, MemoryConfig(block_turn_size=1)) as memory:
        await memory.blocks.append_turn(space, "old", user=first, assistant="OK.", at=FIRST_DAY)
        await memory.blocks.append_turn(space, "old", user=second, assistant="OK.", at=NEXT_DAY)
        await memory.blocks.seal_tail(space, "old")
        await memory.derivation.process_pending()
        cards = await memory.events.cards(space)
        assert any(card.status == "superseded" for card in cards)  # the premise
    async with make_host(db, tmp_path) as host:
        answer = await ask(host, "later", question)
    facts = [line for line in answer.splitlines() if line.startswith("- ")]
    assert facts, answer
    note = "（之前：" if "（之前：" in answer else "(earlier: "  # in the question's language
    assert now in facts[0] and note in facts[0], answer
    assert facts[0].index(now) < facts[0].index(note) < facts[0].index(before)
    assert not any(before in line and note not in line for line in facts), answer


@pytest.mark.parametrize(
    ("first", "second", "question", "now"),
    [
        (
            "The team dinner is on Friday at Rosa's.",
            "Actually the team dinner moves to Saturday at Rosa's.",
            "When is the team dinner?",
            "Saturday",
        ),
        ("读书会定在周三晚上。", "其实读书会改到周四晚上了。", "读书会是什么时候？", "周四"),
    ],
)
async def test_of_two_raw_lines_the_newer_is_stated_first(
    tmp_path: Path, first: str, second: str, question: str, now: str
) -> None:
    [answer] = await told_then_asked(tmp_path, [first, second], [question], sealed=False)
    facts = [line for line in answer.splitlines() if line.startswith("- ")]
    assert len(facts) == 2 and now in facts[0], answer


def test_of_two_lines_saying_one_fact_the_fuller_is_kept() -> None:
    short = "- Runs 5k on Tuesday mornings"
    full = "You said: I run 5k on Tuesday and Thursday mornings. (2026-10-05)"
    assert _distinct([short, full]) == [full]
    assert _distinct([full, short]) == [full]
    merged = "You said: I like tea. I like it green. (2026-10-05) (earlier: I like tea.)"
    assert _distinct([merged, "I like tea."]) == [merged]  # the older restated: history


def test_a_merged_card_is_not_answered_as_a_change() -> None:
    merged = {
        "summary": "The user said: I prefer aisle seats and kosher meals. Prefers aisle seats.",
        "history": [{"summary": "The user said: I prefer aisle seats and kosher meals."}],
    }
    changed = {
        "summary": "The user said: the offsite is cancelled.",
        "history": [{"summary": "The user said: the offsite is on 14 January 2027."}],
    }
    assert "(earlier: " not in _answer_line(merged)
    assert _answer_line(changed).endswith("(earlier: the offsite is on 14 January 2027.)")


def test_an_imported_json_document_is_not_quoted() -> None:
    document = '[{"id": "m0", "memory": "Favourite cuisine is Ethiopian"}]'
    assert _is_own_answer({"message": {"role": "user", "content": document}})
    assert not _is_own_answer({"message": {"role": "user", "content": "[x] my cuisine"}})


@pytest.mark.parametrize(
    ("said", "fact"),
    [
        ("Remember: my licence plate is SUA12345.", "my licence plate is SUA12345."),
        ("Can you remember that the gate code is 8092#?", "the gate code is 8092#"),
        (
            "Please make a note that the boiler service is due in May.",
            "the boiler service is due in May.",
        ),
        ("Don't let me forget the camping stove is Priya's.", "the camping stove is Priya's."),
        ("帮我记一下，周三下午三点要给王医生回电话。", "周三下午三点要给王医生回电话。"),
        ("Can you remember where I parked?", None),  # a question, not a request
        ("Do you remember when my flight is?", None),
    ],
)
def test_a_request_to_remember_is_told_from_a_question(said: str, fact: str | None) -> None:
    found = _REMEMBER.match(said)
    assert (found and (found.group("fact") or found.group("zh"))) == fact
