"""Held-out scenarios: 36 written after the engine's rules were tuned on the other 72, by
someone who had not read those rules, with other people, places, topics and phrasings
(contractions, facts inside longer messages, other cancel / stop / move verbs, other
"remember" requests). Six per category, three English and three Chinese, ids ``held-…``.
They estimate what unseen scenarios get; the dev set's pass rate overstates it.

Run with ``benchmarks/memory_truth.py --set heldout``. A failure here is the measurement:
a scenario is only changed when it is itself malformed, never to make the engine pass.
"""

import json

from . import Import, Lang, Scenario, Session
from .checks import (
    ActiveCount,
    Answer,
    Check,
    CitesOnly,
    Kept,
    NoAgentOnly,
    Precise,
    Reinforced,
    Replaced,
    Standing,
)

# ---------------------------------------------------------------- provenance


def provenance(id: str, lang: Lang, *steps: Session, **expect: object) -> Scenario:
    return Scenario(f"held-prov-{id}", "provenance", lang, steps, **expect)  # type: ignore[arg-type]


GATE = "Can you remember that the storage unit gate code is 8092#? I keep forgetting it."
POTTERY = "Noor and I signed up for a pottery class at the community centre, it starts on the 14th."
HAMID = "Please keep in mind that Hamid's birthday is on 17 January, he's turning forty."
DOOR_ZH = "帮我记一下：公司前台的门禁密码是7351。"
XIAN_ZH = "我和表哥阿杰决定元旦一起去西安看兵马俑。"
INSURANCE_ZH = "麻烦记住，我的医保卡号是330106-7788。"

PROVENANCE = [
    provenance(
        "en-01",
        "en",
        Session(
            "evening",
            1,
            (
                "Ugh, long day at the warehouse.",
                "Our landlord finally got the boiler fixed yesterday.",
                GATE,
            ),
        ),
        checks=(CitesOnly(GATE, ("8092",)),),
        answer=Answer("What's the gate code for the storage unit?", has=("8092",)),
    ),
    provenance(
        "en-02",
        "en",
        Session(
            "a",
            2,
            ("I'm absolutely shattered today.", POTTERY, "The weather's been awful all week."),
        ),
        checks=(CitesOnly(POTTERY, ("pottery",)), Precise()),
        answer=Answer("What class did Noor and I sign up for?", has=("pottery",)),
    ),
    provenance(
        "en-03",
        "en",
        Session("sat", 1, ("We're repainting the hallway this weekend.",)),
        Session(
            "tue",
            4,
            ("I've been reading a lot of Ursula Le Guin lately.", "Work is fine, mostly.", HAMID),
        ),
        checks=(CitesOnly(HAMID, ("Hamid",)), Precise()),
        answer=Answer("When is Hamid's birthday?", has=("January",)),
    ),
    provenance(
        "zh-01",
        "zh",
        Session("a", 1, ("今天下班好晚。", "我老婆最近在学日语。", DOOR_ZH)),
        checks=(CitesOnly(DOOR_ZH, ("7351",)),),
        answer=Answer("公司前台的门禁密码是多少？", has=("7351",)),
    ),
    provenance(
        "zh-02",
        "zh",
        Session("a", 1, ("最近睡得不太好。", XIAN_ZH, "楼下新开了一家面馆，味道一般。")),
        checks=(CitesOnly(XIAN_ZH, ("兵马俑",)), Precise()),
        answer=Answer("我和阿杰元旦打算去哪里？", has=("西安",)),
    ),
    provenance(
        "zh-03-cli",
        "zh",
        Session("a", 1, ("周末带孩子去了趟动物园。",)),
        Session("b", 3, ("单位体检安排在下个月。", INSURANCE_ZH)),
        checks=(CitesOnly(INSURANCE_ZH, ("330106-7788",)), Precise()),
        answer=Answer("我的医保卡号是多少？", has=("330106-7788",)),
        via="cli",
    ),
]

# ---------------------------------------------------------------- no echo


def no_echo(id: str, lang: Lang, steps: tuple[Session, ...], answer: Answer) -> Scenario:
    return Scenario(f"held-echo-{id}", "no-echo", lang, steps, (NoAgentOnly(),), answer, echo=True)


NO_ECHO = [
    no_echo(
        "en-01",
        "en",
        (
            Session(
                "a",
                1,
                (
                    "After a lot of back and forth we've decided to put the house on the "
                    "market in March.",
                ),
            ),
        ),
        Answer("When are we putting the house on the market?", has=("March",)),
    ),
    no_echo(
        "en-02",
        "en",
        (
            Session("a", 1, ("I finally finished repainting the garden fence on Sunday.",)),
            Session("b", 2, ("The neighbours' dog won't stop barking at night.",)),
        ),
        Answer("Did I get the fence painted?", has=("fence",)),
    ),
    no_echo(
        "en-03",
        "en",
        (
            Session("a", 1, ("We booked a Thai cooking class for 12 December.",)),
            Session("b", 3, ("We scrapped the Thai cooking class, the instructor is ill.",)),
        ),
        Answer("Are we still doing the Thai cooking class?", has=("scrapped",)),
    ),
    no_echo(
        "zh-01",
        "zh",
        (Session("a", 1, ("商量了好久，我们决定明年春天把老房子卖掉。",)),),
        Answer("我们打算什么时候卖老房子？", has=("春天",)),
    ),
    no_echo(
        "zh-02",
        "zh",
        (
            Session("a", 1, ("周日我终于把阳台的花架装好了。",)),
            Session("b", 2, ("这几天降温，记得多穿点。",)),
        ),
        Answer("阳台的花架装好了吗？", has=("花架",)),
    ),
    no_echo(
        "zh-03",
        "zh",
        (
            Session("a", 1, ("儿子学校的家长会定在11月13日。",)),
            Session("b", 3, ("家长会改到11月20日了，校长那天要出差。",)),
        ),
        Answer("家长会是哪天？", has=("11月20|20 November|November 20",)),
    ),
]

# ---------------------------------------------------------------- repeat


def repeat(id: str, lang: Lang, first: str, again: str, answer: Answer, *more: str) -> Scenario:
    """``first`` on day 2, ``again`` on day 6 after small talk, each of ``more`` later."""
    hello = "Hey, quick one." if lang == "en" else "在吗？"
    sessions = [Session("first", 2, (first,)), Session("again", 6, (hello, again))]
    sessions += [Session(f"later{i}", 9 + 2 * i, (text,)) for i, text in enumerate(more)]
    checks: tuple[Check, ...] = (Reinforced((first, again, *more)),)
    return Scenario(f"held-repeat-{id}", "repeat", lang, tuple(sessions), checks, answer)


REPEAT = [
    repeat(
        "en-01",
        "en",
        "I've started doing Pilates on Monday nights at the studio near work.",
        "Like I said, Monday nights are Pilates nights for me now, at the studio near work.",
        Answer("What do I do on Monday nights?", has=("Pilates",)),
    ),
    repeat(
        "en-02",
        "en",
        "We're planning to drive down to Cornwall over Christmas week.",
        "We're still planning that drive down to Cornwall over Christmas week, by the way.",
        Answer("Where are we driving over Christmas week?", has=("Cornwall",)),
        "The plan is still to drive to Cornwall for Christmas week.",
    ),
    repeat(
        "en-03",
        "en",
        "I prefer oat milk in my flat white.",
        "For the record, I'd rather have oat milk in my flat white.",
        Answer("What milk do I like in my flat white?", has=("oat",)),
    ),
    repeat(
        "zh-01",
        "zh",
        "我每周六上午去社区游泳馆游泳。",
        "周六上午我一般都去社区游泳馆游泳。",
        Answer("我周六上午一般做什么？", has=("游泳",)),
    ),
    repeat(
        "zh-02",
        "zh",
        "我们计划过年开车回湖南老家。",
        "过年我们还是打算开车回湖南老家。",
        Answer("我们过年去哪里？", has=("湖南",)),
        "跟你说过的，今年过年开车回湖南老家。",
    ),
    repeat(
        "zh-03",
        "zh",
        "我喝奶茶喜欢少糖去冰。",
        "奶茶的话，我还是喜欢少糖去冰。",
        Answer("我喝奶茶喜欢怎么点？", has=("少糖",)),
    ),
]

# ---------------------------------------------------------------- change of mind


def change(
    id: str, lang: Lang, old: str, new: str, answer: Answer, control: str | None = None
) -> Scenario:
    """``old`` (beside ``control``) on day 2, ``new`` on day 8."""
    first = (old, control) if control else (old,)
    steps = (Session("earlier", 2, first), Session("later", 8, (new,)))
    checks: tuple[Check, ...] = (Replaced(old, new), *((Standing(control),) if control else ()))
    return Scenario(f"held-change-{id}", "change-of-mind", lang, steps, checks, answer)


CHANGE = [
    change(
        "en-01",
        "en",
        "We're throwing a housewarming party at the new flat on 14 November.",
        "Change of plan: we're not doing the housewarming party after all.",
        Answer(
            "Are we still having the housewarming party?",
            first=("not doing|after all|cancel|called off|scrapped",),
        ),
        control="My cousin Felix is getting married on 5 December.",
    ),
    change(
        "en-02",
        "en",
        "I've been smoking about half a pack a day since college.",
        "I gave up smoking last month.",
        Answer("Do I still smoke?", first=("gave up|quit|stopped|no longer",)),
    ),
    change(
        "en-03",
        "en",
        "Our design studio opened its office in Shoreditch in 2024.",
        "Our design studio relocated to Hackney in September.",
        Answer("Where is our design studio's office?", first=("Hackney",)),
        control="I cycle to the office on Tuesdays and Fridays.",
    ),
    change(
        "zh-01",
        "zh",
        "我们公司12月18日办年会。",
        "今年的年会我们不办了。",
        Answer("公司年会还办吗？", first=("不办|取消",)),
        control="部门聚餐定在12月22日。",
    ),
    change(
        "zh-02",
        "zh",
        "我每天晚上下班后都要抽几根烟。",
        "我上个月把烟戒了。",
        Answer("我还抽烟吗？", first=("戒",)),
    ),
    change(
        "zh-03",
        "zh",
        "我的牙医预约在11月3日上午。",
        "牙医预约调到11月10日下午了。",
        Answer("我的牙医预约是什么时候？", first=("11月10|10 November|November 10",)),
        control="我女儿每周四下午上钢琴课。",
    ),
]

# ---------------------------------------------------------------- abstention


def abstention(id: str, lang: Lang, facts: tuple[str, ...], question: str) -> Scenario:
    steps = (Session("one", 1, facts[:2]), Session("two", 4, facts[2:] or ("Thanks!",)))
    answer = Answer(question, abstain=True)
    return Scenario(f"held-abstain-{id}", "abstention", lang, steps, (), answer)


ABSTENTION = [
    abstention(
        "en-01",
        "en",
        (
            "My niece Aurelia is starting university in Glasgow next September.",
            "We decided to buy a second-hand Skoda for the school runs.",
            "I'm taking my mum to the opera on Friday.",
        ),
        "Which university is my nephew going to?",
    ),
    abstention(
        "en-02",
        "en",
        (
            "I've booked a table at Osteria Nonna for our anniversary on 3 December.",
            "My colleague Rafael is covering my shifts next week.",
        ),
        "What time is my haircut on 3 December?",
    ),
    abstention(
        "en-03",
        "en",
        (
            "We're planning to repaint the kids' bedroom green over half-term.",
            "I water the tomato plants every evening.",
            "Joel's football practice is on Wednesdays.",
        ),
        "What colour are we painting the living room?",
    ),
    abstention(
        "zh-01",
        "zh",
        ("我侄女小敏明年要去成都读研究生。", "我们决定买一辆二手的比亚迪。"),
        "我侄子在哪里读研究生？",
    ),
    abstention(
        "zh-02",
        "zh",
        ("我约了12月3日晚上和老同学吃火锅。", "我这周在学剪辑视频。", "周五要交季度预算。"),
        "我12月3日几点去理发？",
    ),
    abstention(
        "zh-03",
        "zh",
        ("我们打算寒假带孩子去哈尔滨看冰雕。", "我每天晚上给阳台的绿萝浇水。"),
        "我们暑假带孩子去哪里？",
    ),
]

# ---------------------------------------------------------------- merge


def mem0(*memories: str) -> str:
    items = [
        {"id": f"h{i}", "memory": text, "user_id": "sam", "created_at": "2026-08-20T19:30:00Z"}
        for i, text in enumerate(memories)
    ]
    return json.dumps(items, ensure_ascii=False)


def saved(*memories: str) -> str:
    return "\n".join(f"- {text}" for text in memories) + "\n"


def merge(
    id: str, lang: Lang, local: str, imported: str, *checks: Check, answer: Answer, **kw: object
) -> Scenario:
    """``local`` said in a session, then ``imported``: the local event keeps its details."""
    steps = (Session("local", 1, (local,)), Import(imported, keeps=(local,)))
    return Scenario(f"held-merge-{id}", "merge", lang, steps, checks, answer, **kw)  # type: ignore[arg-type]


MERGE = [
    merge(
        "en-01",
        "en",
        "We decided to send Leo to the Montessori nursery on Beech Lane three days a week.",
        mem0("Leo goes to a Montessori nursery", "Enjoys science fiction novels"),
        Kept(("Montessori", "Beech Lane")),
        answer=Answer("Which nursery did we pick for Leo?", has=("Beech Lane",)),
    ),
    merge(
        "en-02",
        "en",
        "I prefer decaf after 3pm.",
        saved("Prefers decaf after 3pm", "Uses a standing desk at work"),
        ActiveCount(("decaf",), 1),
        answer=Answer("What coffee do I prefer in the afternoon?", has=("decaf",)),
    ),
    merge(
        "en-03-cli",
        "en",
        "My accountant Priyanka Rao is sorting out my tax return before 31 January.",
        mem0("User's accountant is Priyanka Rao"),
        Kept(("Priyanka", "tax return")),
        answer=Answer("What is Priyanka sorting out for me?", has=("tax",)),
        via="cli",
    ),
    merge(
        "zh-01",
        "zh",
        "我们决定让儿子去学校旁边的启明编程班，每周上两次课。",
        mem0("儿子在学编程"),
        Kept(("启明", "编程")),
        answer=Answer("儿子在哪个编程班上课？", has=("启明",)),
    ),
    merge(
        "zh-02",
        "zh",
        "我喜欢用钢笔写日记。",
        saved("喜欢用钢笔写日记", "养了一只叫豆豆的猫"),
        ActiveCount(("钢笔",), 1),
        answer=Answer("我用什么写日记？", has=("钢笔",)),
    ),
    merge(
        "zh-03",
        "zh",
        "我每个月5号给房东陈阿姨转房租，顺便把水电费一起交了。",
        saved("每月给房东陈阿姨转房租"),
        Kept(("陈阿姨", "水电")),
        answer=Answer("我每个月几号交房租？", has=("5号|5th",)),
    ),
]

SCENARIOS = [*PROVENANCE, *NO_ECHO, *REPEAT, *CHANGE, *ABSTENTION, *MERGE]
