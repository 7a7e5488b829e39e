"""No echo: the agent's answer composed from memory ("From what you told me before: …")
never becomes the source of an event nor supersedes the user's own; once the question's
session is sealed and derived, every event is as it was."""

from . import Lang, Scenario, Session
from .checks import Answer, NoAgentOnly

CATEGORY = "no-echo"


def scenario(
    id: str, lang: Lang, steps: tuple[Session, ...], answer: Answer, **kw: object
) -> Scenario:
    return Scenario(
        f"echo-{id}",
        CATEGORY,
        lang,
        steps,
        (NoAgentOnly(),),
        answer,
        echo=True,
        **kw,  # type: ignore[arg-type]
    )


SCENARIOS = [
    scenario(
        "en-01",
        "en",
        (Session("a", 1, ("We decided to have our anniversary dinner at Lucia's on Saturday.",)),),
        Answer("Where are we having our anniversary dinner?", has=("Lucia",)),
    ),
    scenario(
        "en-02",
        "en",
        (
            Session("a", 1, ("My daughter Priya starts violin lessons on Tuesday.",)),
            Session("b", 2, ("The school run is my job this week.",)),
        ),
        Answer("When does Priya start violin lessons?", has=("Tuesday",)),
    ),
    scenario(
        "en-03",
        "en",
        (
            Session(
                "a",
                1,
                (
                    "We finished the quarterly report and sent it to finance on Monday.",
                    "Finance wants a summary too.",
                ),
            ),
        ),
        Answer("Did we send the quarterly report to finance?", has=("finance",)),
    ),
    scenario(
        "en-04",
        "en",
        (
            Session("a", 1, ("The Lisbon trip is planned for May.",)),
            Session("b", 4, ("Actually, change of plans: the Lisbon trip moves to June.",)),
        ),
        Answer("When is the Lisbon trip?", has=("Lisbon",)),
    ),
    scenario(
        "en-05",
        "en",
        (Session("a", 2, ("Our band moved rehearsals to Marco's garage in September.",)),),
        Answer("Where does our band hold rehearsals now?", has=("Marco",)),
    ),
    scenario(
        "en-06-cli",
        "en",
        (
            Session(
                "a", 1, ("I love hiking in the Dolomites every summer.", "My boots need resoling.")
            ),
        ),
        Answer("Where do I like hiking in summer?", has=("Dolomites",)),
        via="cli",
    ),
    scenario(
        "zh-01",
        "zh",
        (Session("a", 1, ("我们决定把结婚纪念日晚餐订在外滩的法餐厅。",)),),
        Answer("结婚纪念日晚餐订在哪里？", has=("外滩",)),
    ),
    scenario(
        "zh-02",
        "zh",
        (
            Session("a", 1, ("季度报告已经完成，周一交给了财务部。",)),
            Session("b", 3, ("财务部想先看一版草稿。",)),
        ),
        Answer("季度报告交给财务部了吗？", has=("财务部",)),
    ),
    scenario(
        "zh-03",
        "zh",
        (Session("a", 1, ("我的主管刘婷要求周五前交方案。",)),),
        Answer("刘婷要求什么时候交方案？", has=("周五",)),
    ),
    scenario(
        "zh-04",
        "zh",
        (
            Session("a", 1, ("去成都的出差定在五月。",)),
            Session("b", 3, ("计划有变，成都出差改到六月了。",)),
        ),
        Answer("成都出差是什么时候？", has=("成都",)),
    ),
    scenario(
        "zh-05",
        "zh",
        (Session("a", 2, ("乐队排练已经改到马可家的车库了。",)),),
        Answer("乐队排练改到哪里了？", has=("马可",)),
    ),
    scenario(
        "zh-06",
        "zh",
        (Session("a", 1, ("我每天早上坐7点40分的地铁去公司。", "路上大概四十分钟。")),),
        Answer("我早上坐几点的地铁？", has=("7点40分",)),
    ),
]
