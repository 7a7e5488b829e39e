"""Provenance: an event cites the message that said it, and only that one — "remember …"
(the memory_remember tool, mid-session after other facts) and facts derived from a block."""

from . import Lang, Scenario, Session
from .checks import Answer, CitesOnly, Precise

CATEGORY = "provenance"


def scenario(id: str, lang: Lang, *steps: Session, **expect: object) -> Scenario:
    return Scenario(f"prov-{id}", CATEGORY, lang, steps, **expect)  # type: ignore[arg-type]


LOCKER = "Remember: my gym locker code is 4471."
PASSPORT = "Please remember that my passport expires on 3 March 2028."
CLINIC = "Remember that Dr. Okafor's clinic closes at 5pm on Fridays."
INGRID = "My sister Ingrid started teaching chemistry in Bergen last year."
BISCUIT = "We adopted a cat named Biscuit last spring."
VET = "We decided to take Biscuit to the vet clinic on Elm Street."
WIFI = "Remember that the wifi password at the cabin is pinecone88."
CARPARK = "记住：我的车位号是B2-117。"
CALLBACK = "记住：周三下午三点要给王医生回电话。"
XIAOYU = "我女儿小雨去年考上了杭州的大学。"
LAOZHOU = "我的同事老周下个月退休。"
PASSPORT_ZH = "请记住我的护照号码是E12345678。"
WIFI_ZH = "记住：家里的无线网密码是lotus2024。"

SCENARIOS = [
    scenario(
        "en-01",
        "en",
        Session(
            "mon",
            1,
            (
                "My brother Tomas works at a bakery in Porto.",
                "I'm training for a half marathon in April.",
                LOCKER,
            ),
        ),
        checks=(CitesOnly(LOCKER, ("4471",)),),
        answer=Answer("What is my gym locker code?", has=("4471",)),
    ),
    scenario(
        "en-02",
        "en",
        Session("a", 1, ("I moved into a flat on Carrow Road in June.",)),
        Session("b", 3, ("My favourite tea is genmaicha.", "I work late on Wednesdays.", PASSPORT)),
        checks=(CitesOnly(PASSPORT, ("passport",)),),
        answer=Answer("When does my passport expire?", has=("passport", "2028")),
    ),
    scenario(
        "en-03",
        "en",
        Session("a", 2, ("Hi there.", "My knee has been sore since the hike.", CLINIC)),
        checks=(CitesOnly(CLINIC, ("Okafor",)),),
        answer=Answer("When does Dr. Okafor's clinic close on Fridays?", has=("5pm",)),
    ),
    scenario(
        "en-04",
        "en",
        Session("a", 1, ("I just got back from the dentist.", INGRID, "I need new glasses.")),
        checks=(CitesOnly(INGRID, ("Ingrid",)), Precise()),
        answer=Answer("What does Ingrid teach?", has=("chemistry",)),
    ),
    scenario(
        "en-05",
        "en",
        Session("a", 1, (BISCUIT, VET, "The kids want to name the next one Pickle.")),
        checks=(CitesOnly(BISCUIT, ("adopted",)), CitesOnly(VET, ("Elm Street",)), Precise()),
        answer=Answer("Which vet clinic did we pick for Biscuit?", has=("Elm Street",)),
    ),
    scenario(
        "en-06-cli",
        "en",
        Session("trip", 1, ("The cabin is two hours north of Duluth.", "We go every August.")),
        Session("packing", 2, ("I still have to buy firewood.", WIFI)),
        checks=(CitesOnly(WIFI, ("pinecone88",)), Precise()),
        answer=Answer("What is the wifi password at the cabin?", has=("pinecone88",)),
        via="cli",
    ),
    scenario(
        "zh-01",
        "zh",
        Session("a", 1, ("我弟弟在成都开了一家火锅店。", "我对芒果过敏。", CARPARK)),
        checks=(CitesOnly(CARPARK, ("B2-117",)),),
        answer=Answer("我的车位号是多少？", has=("B2-117",)),
    ),
    scenario(
        "zh-02",
        "zh",
        Session("a", 1, ("我最近在学做面包。",)),
        Session("b", 2, ("这周工作特别忙。", "我妈妈下周来北京。", CALLBACK)),
        checks=(CitesOnly(CALLBACK, ("王医生",)),),
        answer=Answer("周三要给谁回电话？", has=("王医生",)),
    ),
    scenario(
        "zh-03",
        "zh",
        Session("a", 1, (XIAOYU, "我每天早上六点去游泳。", "周末想去爬山。")),
        checks=(CitesOnly(XIAOYU, ("小雨",)), Precise()),
        answer=Answer("小雨考上了哪里的大学？", has=("杭州",)),
    ),
    scenario(
        "zh-04",
        "zh",
        Session("a", 3, ("我们公司的年会定在12月20日。", LAOZHOU, "我得给他准备一份礼物。")),
        checks=(CitesOnly(LAOZHOU, ("老周",)), Precise()),
        answer=Answer("老周什么时候退休？", has=("老周",)),
    ),
    scenario(
        "zh-05",
        "zh",
        Session("a", 1, ("我下个月要去新加坡出差。", PASSPORT_ZH)),
        checks=(CitesOnly(PASSPORT_ZH, ("E12345678",)), Precise()),
        answer=Answer("我的护照号码是多少？", has=("E12345678",)),
    ),
    scenario(
        "zh-06-cli",
        "zh",
        Session("a", 1, ("我家住在西湖区的一个老小区。", "楼下有一家很好吃的面馆。")),
        Session("b", 2, ("路由器是新换的。", WIFI_ZH)),
        checks=(CitesOnly(WIFI_ZH, ("lotus2024",)), Precise()),
        answer=Answer("家里的无线网密码是什么？", has=("lotus2024",)),
        via="cli",
    ),
]
