"""Merge on import: an imported memory that overlaps a local event never loses a detail of
the local event, and a pure duplicate makes no second active event (mem0 lists, plain
lists of saved memories)."""

import json

from . import Import, Lang, Scenario, Session
from .checks import ActiveCount, Answer, Kept

CATEGORY = "merge"


def mem0(*memories: str) -> str:
    items = [
        {"id": f"m{i}", "memory": text, "user_id": "alex", "created_at": "2026-09-01T08:00:00Z"}
        for i, text in enumerate(memories)
    ]
    return json.dumps(items, ensure_ascii=False)


def saved(*memories: str) -> str:
    return "\n".join(f"- {text}" for text in memories) + "\n"


def scenario(
    id: str, lang: Lang, local: str, imported: str, *checks: object, answer: Answer, **kw: object
) -> Scenario:
    """``local`` said in a session, then ``imported``: the local event keeps its details."""
    steps = (Session("local", 1, (local,)), Import(imported, keeps=(local,)))
    return Scenario(f"merge-{id}", CATEGORY, lang, steps, checks, answer, **kw)  # type: ignore[arg-type]


SCENARIOS = [
    scenario(
        "en-01",
        "en",
        "I prefer aisle seats and kosher meals when I fly.",
        mem0("Prefers aisle seats on flights"),
        Kept(("aisle", "kosher")),
        answer=Answer("What meals do I want when I fly?", has=("kosher",)),
    ),
    scenario(
        "en-02",
        "en",
        "I'm allergic to shellfish, so I never order the paella.",
        saved("Allergic to shellfish, so never orders the paella"),
        ActiveCount(("shellfish",), 1),
        answer=Answer("What am I allergic to?", has=("shellfish",)),
    ),
    scenario(
        "en-03",
        "en",
        "I run 5k on Tuesday and Thursday mornings before work.",
        saved("Runs 5k on Tuesday mornings"),
        Kept(("Tuesday", "Thursday")),
        answer=Answer("When do I run 5k?", has=("Thursday",)),
    ),
    scenario(
        "en-04",
        "en",
        "My favourite cuisine is Ethiopian.",
        mem0("Favourite cuisine is Ethiopian"),
        ActiveCount(("Ethiopian",), 1),
        answer=Answer("What is my favourite cuisine?", has=("Ethiopian",)),
    ),
    scenario(
        "en-05",
        "en",
        "My manager Dana Whitfield wants the roadmap by Friday.",
        mem0("Manager is Dana Whitfield", "Lives in Bristol"),
        Kept(("Dana", "roadmap")),
        answer=Answer("What does Dana want by Friday?", has=("roadmap",)),
    ),
    scenario(
        "en-06-cli",
        "en",
        "I teach piano to kids on Saturday mornings and to adults on Sunday evenings.",
        saved("Teaches piano to kids on Saturday mornings"),
        Kept(("Sunday", "adults")),
        answer=Answer("When do I teach piano to adults?", has=("Sunday",)),
        via="cli",
    ),
    scenario(
        "zh-01",
        "zh",
        "我坐飞机喜欢靠过道的座位和素食餐。",
        mem0("坐飞机喜欢靠过道的座位"),
        Kept(("过道", "素食")),
        answer=Answer("我坐飞机要什么餐？", has=("素食",)),
    ),
    scenario(
        "zh-02",
        "zh",
        "我对青霉素过敏。",
        saved("对青霉素过敏"),
        ActiveCount(("青霉素",), 1),
        answer=Answer("我对什么过敏？", has=("青霉素",)),
    ),
    scenario(
        "zh-03",
        "zh",
        "我每周二和周四早上跑五公里。",
        saved("每周二早上跑五公里"),
        Kept(("周二", "周四")),
        answer=Answer("我每周哪几天早上跑五公里？", has=("周四",)),
    ),
    scenario(
        "zh-04",
        "zh",
        "我最喜欢的菜系是川菜。",
        mem0("最喜欢的菜系是川菜"),
        ActiveCount(("川菜",), 1),
        answer=Answer("我最喜欢什么菜系？", has=("川菜",)),
    ),
    scenario(
        "zh-05",
        "zh",
        "我的主管刘婷要求周五前交方案。",
        mem0("主管是刘婷", "住在深圳"),
        Kept(("刘婷", "方案")),
        answer=Answer("刘婷要求周五前交什么？", has=("方案",)),
    ),
    scenario(
        "zh-06",
        "zh",
        "我喜欢每年夏天去云南徒步，冬天去北海道滑雪。",
        saved("喜欢每年夏天去云南徒步"),
        Kept(("云南", "北海道")),
        answer=Answer("我冬天喜欢去哪里滑雪？", has=("北海道",)),
    ),
]
