"""Attribute frames of the offline graph projector (issue 26), English and Chinese: what a
sentence states about someone, as a fact keyed by the attribute so a new value supersedes
the old one — ``role``, ``age``, ``diet``, ``plays``, ``birthday``, ``favourite:<thing>`` and
``pet:<kind>`` (a pet is also an ``owns`` edge). A sentence stating none gives no fact.

Each frame is grammatical ("I work as a …", "I'm 34 years old", "my dog Biscuit", 我是一名…,
我今年…岁, 我的猫叫…); the closed lists are pet kinds, diets and the English spelling of a
few favourite kinds.
"""

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from .roles import alternation

_PERSON = r"[A-Z][a-z]+(?:\s[A-Z][a-z]+)?"
_HAN_NAME = r"[\u4e00-\u9fff·]{1,4}?(?=[，。！？,.!?、；\s]|是|$)"
_PETS = {
    "dog": "dog", "puppy": "dog", "cat": "cat", "kitten": "cat", "kitty": "cat",
    "parrot": "parrot", "rabbit": "rabbit", "bunny": "rabbit", "hamster": "hamster",
    "horse": "horse", "turtle": "turtle", "tortoise": "turtle", "fish": "fish", "bird": "bird",
    "snake": "snake", "lizard": "lizard", "pony": "horse", "guinea pig": "guinea pig",
    "狗": "dog", "小狗": "dog", "狗狗": "dog", "猫": "cat", "小猫": "cat", "猫咪": "cat",
    "鹦鹉": "parrot", "兔子": "rabbit", "小兔子": "rabbit", "仓鼠": "hamster", "乌龟": "turtle",
    "金鱼": "fish", "马": "horse", "豚鼠": "guinea pig", "荷兰猪": "guinea pig", "鸟": "bird",
    "小鸟": "bird", "蛇": "snake", "蜥蜴": "lizard", "鱼": "fish", "小马": "horse",
    "beagle": "dog", "labrador": "dog", "retriever": "dog", "poodle": "dog", "terrier": "dog",
    "corgi": "dog", "husky": "dog", "spaniel": "dog", "collie": "dog", "dachshund": "dog",
    "pug": "dog", "bulldog": "dog", "tabby": "cat",
}  # fmt: skip
# A Chinese pet's name sits between its kind and what is said of it ("我的猫咪咪很可爱",
# "我家的狗旺财今天生病了"): a doubled syllable, or two characters before a predicate word.
_ZH_SAID = r"(?:很|也|又|都|是|在|今天|昨天|最近|每天|总是|已经|特别|非常|真|太|生病|叫)"
_ZH_PET_NAME = (
    rf"(?!{_ZH_SAID})(?:(?![狗猫兔鱼马鸟])(?P<c>[\u4e00-\u9fff])(?P=c)"
    rf"|[\u4e00-\u9fff]{{2}}(?={_ZH_SAID}))"
)
_EN_PETS = alternation(p for p in _PETS if p.isascii())
_ZH_PETS = alternation(p for p in _PETS if not p.isascii())
_KINDS = {
    "书": "book", "电影": "film", "movie": "film", "片子": "film", "菜": "food", "食物": "food",
    "水果": "fruit", "颜色": "colour", "color": "colour", "甜点": "dessert", "甜品": "dessert",
    "歌": "song", "歌曲": "song", "运动": "sport", "饮料": "drink", "茶": "tea", "咖啡": "coffee",
    "城市": "city", "动物": "animal", "乐队": "band", "歌手": "singer", "作家": "author",
    "writer": "author", "游戏": "game", "季节": "season", "花": "flower", "dish": "food",
}  # fmt: skip
_DIETS = {
    "vegetarian": "vegetarian", "vegan": "vegan", "pescatarian": "pescatarian",
    "gluten-free": "gluten-free", "keto": "keto",
    "纯素": "纯素", "不吃肉": "素食", "吃全素": "纯素", "吃素": "素食", "素食": "素食",
}  # fmt: skip
_JOB_SUFFIX = (
    r"(?:er|or|ist|ian|ant|ent|nurse|chef|cook|pilot|clerk|barista|vet|tutor|coach|lawyer)"
)
_NOT_JOBS = re.compile(
    r"\b(?:fan|member|beginner|believer|lover|mother|father|sister|brother|daughter|owner|user"
    r"|customer|newcomer|other|partner|player|winner)$"
)


@dataclass(frozen=True)
class Attribute:
    """``key = value`` stated at ``start`` of the sentence (whose subject precedes it);
    ``owned``: the value is a named pet or possession, an ``owns`` edge too."""

    key: str
    value: str
    start: int
    owned: bool = False


_ROLE = (
    re.compile(r"\b(?:work(?:s|ed|ing)?|job is|employed|trained|hired)\b[^.!?;]{0,40}?\bas an?\s+"
               r"(?P<x>[a-z]+(?:[ -][a-z]+){0,2}?)(?=\s+(?:at|for|in|and|since|with)\b|[,.!?;]|$)"),
    re.compile(r"\b(?:I'm|I am|[Ss]he's|[Hh]e's|is|was|became)\s+an?\s+(?:\w+\s+)?"
               rf"(?P<x>[a-z]*{_JOB_SUFFIX})(?=\s+(?:at|for|in|and|since|with)\b|[,.!?;]|$)"),
    re.compile(r"(?:是一名|是一位|是个|当了|当上了|做了|职业是|工作是|当|做|担任|是[\u4e00-\u9fff]{2,8}?的|[，,]是)"
               r"(?P<x>[\u4e00-\u9fff]{0,5}?(?:师|(?<![会成])员|生|家|医生|护士|经理|律师|记者|司机|厨师|主管|总监))"
               r"(?=[，。！？,.!?；]|$|在|，)"),
)  # fmt: skip
_AGE = (
    re.compile(r"\b(?:I'm|I am|is|[Ss]he's|[Hh]e's|turned|turning|turns)\s+(?P<x>\d{1,3})"
               r"(?:\s+years?\s+old|(?=[.!,]|\s+(?:today|this|last|next|now)\b))"),
    re.compile(r"(?:今年|已经|满)(?P<x>[\d一二三四五六七八九十两]{1,4})岁"),
)  # fmt: skip
_DIET = (
    re.compile(r"\b(?:I'm|I am|is|went|gone|going|became|been)\s+(?:a\s+|fully\s+|strictly\s+)?"
               r"(?P<x>vegetarian|vegan|pescatarian|gluten-free|keto)\b"),
    re.compile(r"(?P<x>吃全素|纯素|吃素|素食|不吃肉)"),
)  # fmt: skip
_PLAYS = (
    re.compile(r"\bplays?\s+(?:the\s+)?(?P<x>(?!with|around|games?|it|a|an|my|video)[a-z]+)"
               r"(?=[\s,.!?;]|$)"),
    re.compile(r"(?:会|在|喜欢)?(?:弹|拉|吹|打|踢)(?P<x>钢琴|吉他|小提琴|大提琴|古筝|琵琶|二胡|长笛|萨克斯"
               r"|尤克里里|[\u4e00-\u9fff]{1,2}球)"),
)  # fmt: skip
_BIRTHDAY = (
    re.compile(r"\b[Mm]y birthday is (?:on\s+)?(?P<x>(?:[A-Z][a-z]+ \d{1,2}(?:st|nd|rd|th)?"
               r"|\d{1,2}(?:st|nd|rd|th)? (?:of )?[A-Z][a-z]+))"),
    re.compile(r"生日是(?P<x>[\d一二三四五六七八九十]{1,3}月[\d一二三四五六七八九十]{1,3}[日号])"),
)  # fmt: skip
_FAVOURITE = (
    re.compile(r"\b[Mm]y\s+(?:all-time\s+)?favou?rite\s+(?P<what>[a-z]+)\s+"
               r"(?:is|are|was|has to be)\s+(?P<x>[^.,!?;]{2,60}?)(?=\s+and\s+my\b|[.,!?;]|$)"),
    re.compile(r"(?:^|[,;]\s*)(?P<x>[A-Za-z][\w' -]{1,40}?)\s+(?:is|are)\s+my\s+(?:all-time\s+)?"
               r"favou?rite\s+(?P<what>[a-z]+)"),
    re.compile(r"最(?:喜欢|爱)的(?P<what>[\u4e00-\u9fff]{1,4}?)是(?P<x>[^，。！？,.!?；]{1,30})"),
    re.compile(r"(?:^|[，,])(?P<x>[\u4e00-\u9fff]{1,8}?)是我最(?:喜欢|爱)的(?P<what>[\u4e00-\u9fff]{1,4})"),
)  # fmt: skip
_GOT_A = r"\b(?:has|have|had|got|adopted|own|owns)\s+(?:an?|another|one more|two|three)\s+"
_PET = (
    re.compile(rf"\b(?:[Mm]y|[Oo]ur|[Hh]is|[Hh]er|[Tt]heir)\s+(?:\w+\s+)?(?P<kind>{_EN_PETS})"
               rf"\s*,?\s+(?P<x>{_PERSON})\b"),
    re.compile(rf"{_GOT_A}(?:\w+\s+){{0,2}}?"
               rf"(?P<kind>{_EN_PETS})\s*,?\s+(?:called|named)\s+(?P<x>{_PERSON})\b"),
    re.compile(rf"{_GOT_A}(?:\w+\s+){{0,2}}?"
               rf"(?P<kind>{_EN_PETS})\b[^.!?]*[.!?]\s+(?:[Hh]er|[Hh]is|[Ii]ts|[Tt]heir)\s+name"
               rf"\s+is\s+(?P<x>{_PERSON})\b"),
    re.compile(rf"(?<![A-Za-z])(?P<x>[A-Z][a-z]+),\s+(?:[Mm]y|[Oo]ur)\s+(?:\w+\s+)?"
               rf"(?P<kind>{_EN_PETS})(?=\s*[,.!?;)]|\s*$)"),  # "Biscuit, our beagle,"
    re.compile(rf"(?:我|我们)(?:家)?的?(?P<kind>{_ZH_PETS})(?:叫|名叫|名字叫)(?P<x>{_HAN_NAME})"),
    # a name by apposition: 团子，我家的仓鼠
    re.compile(rf"(?:(?<![\u4e00-\u9fff·])|(?<=[是了]))(?P<x>(?:(?![是了我])[\u4e00-\u9fff·]){{1,4}})[，,]\s*"
               rf"(?:我|我们)(?:家)?的(?P<kind>{_ZH_PETS})(?=[，。！？,.!?；)）]|$)"),
    re.compile(rf"(?:我|我们)(?:家)?的?(?P<kind>{_ZH_PETS})(?P<x>{_ZH_PET_NAME})"),
    re.compile(rf"(?:养了|领养了|收养了|有)(?:一|两|另一|另外一)?[只条匹个]?(?P<kind>{_ZH_PETS})[，,]?\s*"
               rf"(?:叫|名叫|名字叫|取名叫?)(?P<x>{_HAN_NAME})"),
)  # fmt: skip


def attributes(text: str) -> Iterator[Attribute]:
    """Every attribute frame of ``text`` (one sentence, or two for "… Her name is Miso")."""
    for pattern in _ROLE:
        for m in pattern.finditer(text):
            if not _NOT_JOBS.search(m["x"]):
                yield Attribute("role", m["x"], m.start())
    yield from _simple("age", _AGE, text, lambda x: x)
    yield from _simple("diet", _DIET, text, lambda x: _DIETS[x])
    yield from _simple("plays", _PLAYS, text, lambda x: x)
    yield from _simple("birthday", _BIRTHDAY, text, lambda x: x)
    for pattern in _FAVOURITE:
        for m in pattern.finditer(text):
            what = m["what"].lower()
            if value := m["x"].strip(" '\"《》「」“”"):
                yield Attribute(f"favourite:{_KINDS.get(what, what)}", value, m.start())
    for pattern in _PET:
        for m in pattern.finditer(text):
            yield Attribute(f"pet:{_PETS[m['kind'].lower()]}", m["x"], m.start(), owned=True)


def _simple(
    key: str, patterns: tuple[re.Pattern[str], ...], text: str, value: Callable[[str], str]
) -> Iterator[Attribute]:
    for pattern in patterns:
        for m in pattern.finditer(text):
            yield Attribute(key, value(m["x"]), m.start())
