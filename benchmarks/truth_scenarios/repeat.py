"""Repeats: a fact said again in another session on another day reinforces its one event
(both sayings as sources, mentions counted); it does not make a second active card."""

from . import Lang, Scenario, Session
from .checks import Answer, Reinforced

CATEGORY = "repeat"


def scenario(id: str, lang: Lang, first: str, again: str, question: Answer, *more: str) -> Scenario:
    """``first`` on day 1, ``again`` on day 4 (and each of ``more`` a few days later)."""
    sessions = [Session("first", 1, (first,)), Session("again", 4, ("Morning!", again))]
    sessions += [Session(f"more{i}", 7 + i, (text,)) for i, text in enumerate(more)]
    texts = (first, again, *more)
    return Scenario(f"repeat-{id}", CATEGORY, lang, tuple(sessions), (Reinforced(texts),), question)


def zh(id: str, first: str, again: str, question: Answer, *more: str) -> Scenario:
    found = scenario(id, "zh", first, again, question, *more)
    steps = tuple(
        Session(s.name, s.day, tuple("早上好！" if t == "Morning!" else t for t in s.turns))
        for s in found.steps
        if isinstance(s, Session)
    )
    return Scenario(found.id, found.category, "zh", steps, found.checks, found.answer)


SCENARIOS = [
    scenario(
        "en-01",
        "en",
        "I'm allergic to shellfish, so I never order the paella.",
        "I'm allergic to shellfish, so I never order the paella.",
        Answer("What am I allergic to?", has=("shellfish",)),
    ),
    scenario(
        "en-02",
        "en",
        "My manager Dana Whitfield wants the roadmap by Friday.",
        "Dana Whitfield, my manager, wants the roadmap by Friday.",
        Answer("When does Dana want the roadmap?", has=("Friday",)),
    ),
    scenario(
        "en-03",
        "en",
        "We always keep the spare key under the blue flowerpot.",
        "The spare key is always under the blue flowerpot.",
        Answer("Where is the spare key?", has=("flowerpot",)),
    ),
    scenario(
        "en-04",
        "en",
        "I take the 7:40 train to Leeds every weekday.",
        "I take the 7:40 train to Leeds every weekday.",
        Answer("Which train do I take to Leeds?", has=("7:40",)),
    ),
    scenario(
        "en-05",
        "en",
        "My favourite band is Khruangbin.",
        "My favourite band is Khruangbin, as I said.",
        Answer("What is my favourite band?", has=("Khruangbin",)),
    ),
    scenario(
        "en-06",
        "en",
        "Oliver's birthday is on 9 August.",
        "Oliver's birthday is on 9 August.",
        Answer("When is Oliver's birthday?", has=("9 August",)),
        "Don't forget: Oliver's birthday is on 9 August.",
    ),
    zh(
        "zh-01",
        "我对青霉素过敏。",
        "我对青霉素过敏。",
        Answer("我对什么过敏？", has=("青霉素",)),
    ),
    zh(
        "zh-02",
        "我的主管刘婷要求周五前交方案。",
        "刘婷是我的主管，她要求周五前交方案。",
        Answer("刘婷要求什么时候交方案？", has=("周五",)),
    ),
    zh(
        "zh-03",
        "我每天早上坐7点40分的地铁去公司。",
        "我每天早上坐7点40分的地铁去公司。",
        Answer("我早上坐几点的地铁去公司？", has=("7点40分",)),
    ),
    zh(
        "zh-04",
        "我最喜欢的歌手是陈奕迅。",
        "我最喜欢的歌手还是陈奕迅。",
        Answer("我最喜欢的歌手是谁？", has=("陈奕迅",)),
    ),
    zh(
        "zh-05",
        "奶奶的生日是农历八月十五。",
        "奶奶的生日是农历八月十五。",
        Answer("奶奶的生日是哪天？", has=("八月十五",)),
        "别忘了，奶奶的生日是农历八月十五。",
    ),
    zh(
        "zh-06",
        "我喜欢每年夏天去云南徒步。",
        "每年夏天我都喜欢去云南徒步。",
        Answer("我每年夏天喜欢去哪里徒步？", has=("云南",)),
    ),
]
