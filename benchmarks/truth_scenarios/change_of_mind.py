"""Changes of mind: a cancellation, move, stop or switch said in a later session supersedes
the matching earlier event (matched by who + what), leaves unrelated facts standing, and the
answer states the new value first."""

from . import Lang, Scenario, Session
from .checks import Answer, Replaced, Standing

CATEGORY = "change-of-mind"


def scenario(
    id: str, lang: Lang, old: str, new: str, answer: Answer, control: str | None = None
) -> Scenario:
    """``old`` (beside ``control``, an unrelated fact) on day 1, ``new`` on day 5."""
    first = (old, control) if control else (old,)
    steps = (Session("before", 1, first), Session("after", 5, (new,)))
    checks = (Replaced(old, new), *((Standing(control),) if control else ()))
    return Scenario(f"change-{id}", CATEGORY, lang, steps, checks, answer)


SCENARIOS = [
    scenario(
        "en-01",
        "en",
        "Our team offsite is on 22 February 2027.",
        "The team offsite has been called off.",
        Answer("Is the team offsite still on?", first=("called off|cancel",)),
        control="The sales kickoff is on 3 March 2027.",
    ),
    scenario(
        "en-02",
        "en",
        "I love my two coffees every morning.",
        "I don't drink coffee anymore.",
        Answer(
            "Do I drink coffee in the morning?", first=("anymore|no longer|stopped|don't drink",)
        ),
    ),
    scenario(
        "en-03",
        "en",
        "My friend Clara moved to Madrid in 2022.",
        "Clara moved to Lisbon last month.",
        Answer("Where does Clara live?", first=("Lisbon",)),
        control="I love hiking in the Dolomites every summer.",
    ),
    scenario(
        "en-04",
        "en",
        "I prefer Firefox as my work browser.",
        "I switched to Chrome as my work browser.",
        Answer("Which work browser do I use?", first=("Chrome",)),
    ),
    scenario(
        "en-05",
        "en",
        "My yoga class is on Wednesday evenings.",
        "My yoga class moved to Thursday evenings.",
        Answer("When is my yoga class?", first=("Thursday",)),
        control="Our band rehearses in Marco's garage every Thursday evening.",
    ),
    scenario(
        "en-06",
        "en",
        "We booked the Harbour Grill for Dad's retirement party.",
        "We cancelled the Harbour Grill booking for Dad's retirement party.",
        Answer("Where is Dad's retirement party?", first=("cancel|called off",)),
    ),
    scenario(
        "zh-01",
        "zh",
        "团队团建定在2027年1月14日。",
        "团建取消了。",
        Answer("团队团建还办吗？", first=("取消",)),
        control="年终总结会定在2027年1月20日。",
    ),
    scenario(
        "zh-02",
        "zh",
        "我每天早上喜欢喝两杯咖啡。",
        "我已经不喝咖啡了。",
        Answer("我早上喝咖啡吗？", first=("不喝|不再",)),
    ),
    scenario(
        "zh-03",
        "zh",
        "我的朋友克拉拉前年搬到了马德里。",
        "克拉拉上个月搬到里斯本了。",
        Answer("克拉拉住在哪里？", first=("里斯本",)),
        control="我喜欢每年夏天去云南徒步。",
    ),
    scenario(
        "zh-04",
        "zh",
        "我工作喜欢用火狐浏览器。",
        "我工作换成Chrome浏览器了。",
        Answer("我工作用什么浏览器？", first=("Chrome",)),
    ),
    scenario(
        "zh-05",
        "zh",
        "我的瑜伽课在周三晚上。",
        "我的瑜伽课改成周四晚上了。",
        Answer("我的瑜伽课是哪天？", first=("周四",)),
        control="我每天早上坐7点40分的地铁去公司。",
    ),
    scenario(
        "zh-06",
        "zh",
        "我去年办了山景攀岩馆的会员。",
        "我不再是山景攀岩馆的会员了。",
        Answer("我还是山景攀岩馆的会员吗？", first=("不再|不是",)),
    ),
]
