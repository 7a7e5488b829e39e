"""Abstention: a question about something never said, with other facts present that share
some of its words, is answered "I can't confirm that from memory." (or its Chinese)."""

from . import Lang, Scenario, Session
from .checks import Answer

CATEGORY = "abstention"


def scenario(id: str, lang: Lang, facts: tuple[str, ...], question: str) -> Scenario:
    steps = (Session("a", 1, facts[:2]), Session("b", 3, facts[2:] or ("OK.",)))
    return Scenario(f"abstain-{id}", CATEGORY, lang, steps, (), Answer(question, abstain=True))


SCENARIOS = [
    scenario(
        "en-01",
        "en",
        ("Please call me Sam from now on.", "My cat Miso is called Miso-chan by the kids."),
        "What is my dog called?",
    ),
    scenario(
        "en-02",
        "en",
        ("My sister lives in Vancouver.", "She works at the aquarium."),
        "Where does my brother live?",
    ),
    scenario(
        "en-03",
        "en",
        ("The kitchen renovation starts in March.", "The builder is Kowalski & Sons."),
        "When does the bathroom renovation start?",
    ),
    scenario(
        "en-04",
        "en",
        ("I have a dentist appointment on Monday at 9.", "I'm seeing the physio on Thursday."),
        "When is my eye doctor appointment?",
    ),
    scenario(
        "en-05",
        "en",
        ("My daughter plays the cello in the school orchestra.", "Rehearsals are on Fridays."),
        "What instrument does my son play?",
    ),
    scenario(
        "en-06",
        "en",
        ("We flew to Tokyo for our honeymoon in 2019.", "We stayed in a ryokan in Kyoto."),
        "Which hotel did we stay at in Paris?",
    ),
    scenario("zh-01", "zh", ("以后叫我小山吧。", "我的猫叫年糕。"), "我的狗叫什么名字？"),
    scenario("zh-02", "zh", ("我姐姐住在温哥华。", "她在水族馆工作。"), "我哥哥住在哪里？"),
    scenario(
        "zh-03", "zh", ("厨房装修三月开始。", "施工队是老李他们。"), "卫生间装修什么时候开始？"
    ),
    scenario(
        "zh-04", "zh", ("我周一上午九点要去看牙医。", "周四去做理疗。"), "我什么时候去看眼科？"
    ),
    scenario("zh-05", "zh", ("我女儿在学校乐团拉大提琴。", "每周五排练。"), "我儿子在学什么乐器？"),
    scenario(
        "zh-06",
        "zh",
        ("我们2019年去东京度的蜜月。", "在京都住了温泉旅馆。"),
        "我们在巴黎住的哪家酒店？",
    ),
]
