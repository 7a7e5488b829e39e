"""Chinese personal and organisation names for the offline graph projector (no dictionary).

A person's name begins with a common surname (or 小/老/阿 + one), is a transliteration
written only in the characters transliteration uses, or is a reduplicated pet name (朵朵);
it ends before a function character or a verb. An organisation's or project's name runs up
to its kind word (公司, 大学, 读书会, 项目 …).
"""

import re

from .roles import HAN_TITLES

# a Chinese name ends before one of these (a verb, a time word, a function character)
HAN_STOP = set(
    "的了是我你他她它们这那在和与也都就很吗呢吧啊呀说住搬去来跟今昨明刚已还要会想喜爱开上下"
    "又不没有个把被给对从到，。！？、,.!? "
)
# a Chinese person's name begins with a common surname (or 小/老/阿 + one), or is a
# transliteration written only in the characters transliteration uses
SURNAMES = set(
    "王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘于蒋蔡余杜叶程苏魏吕丁"
    "任沈姚卢姜崔钟谭陆汪范金石廖贾夏韦付方白邹孟熊秦邱江尹薛闫段雷侯龙史陶黎贺顾毛郝龚邵万钱严覃武戴"
    "莫孔向汤小老阿"
)
TRANSLITERATION = set(
    "阿埃艾爱安昂奥巴芭拜班邦保鲍贝本比彼毕宾波伯布查达戴丹道德迪蒂丁东杜多厄恩尔法范菲费芬丰弗福盖"
    "甘戈格根古哈海汉豪赫亨胡华霍基吉加贾杰金卡凯坎康考科克肯库奎拉莱兰朗劳勒雷蕾里丽利莉连林琳露卢鲁"
    "路伦罗洛马玛迈麦曼梅美门蒙米密姆穆纳娜奈南内尼妮宁纽诺欧帕派潘佩彭皮珀普奇齐乔切琴萨塞桑森沙莎珊"
    "尚舍什施斯松苏索塔泰坦汤唐特提汀图托瓦万威韦维温沃乌伍西希锡夏谢辛休雅亚扬耶伊因英尤约泽扎詹珍朱"
    "卓佐茜黛娃娅丝·"
)
# an organisation's or project's Chinese name, up to its kind word ("星火读书会", "北极星项目")
HAN_NAMED = re.compile(
    r"(?:(?![的了是我你他她这那在个一上下周每])[\u4e00-\u9fff]){1,6}(?:公司|集团|科技|大学|学院|中学|小学|医院|银行|研究所|研究院|俱乐部|协会"
    r"|工作室|读书会|社团|基金会|事务所|出版社|合唱团|乐队|学校|实验室|跑团|球队|项目|计划|队|社|团)"
)
_GROUP_CHARS = "队社团"


def generic_group(name: str) -> bool:
    """消防队, 篮球队, 读书会 alone: a kind of group, not a named one (朝阳区消防队, 星火读书会):
    the kind word alone, or a one-character group word after a two-character activity."""
    if name[-1:] in _GROUP_CHARS:
        return len(name) == 3  # 美团 is a name
    return HAN_NAMED.fullmatch(name) is None and _KIND_END.search(name) is not None


_KIND_END = re.compile(r"(?:读书会|俱乐部|协会|社团|合唱团|乐队|跑团|球队|学会)$")
HAN_VERBS = set(
    "养拿买做带教打写读看听吃喝玩当用找送请让叫陪考拍画"
)  # not a name's third character
NOT_FIRST = set("一这那我你他她它每某各家几今昨努忙正")


def is_han_name(name: str) -> bool:
    """A Chinese person's name as the surname, transliteration and reduplication rules say."""
    if len(name) == 2 and name[0] == name[1] and name[0] not in HAN_STOP:
        return True  # 朵朵, 乐乐
    return name[0] in SURNAMES or all(c in TRANSLITERATION for c in name)


def called(text: str) -> str | None:
    """叫我思远就行: a given name of two or three characters before 就 / 吧 / 好了."""
    found = re.match(r"([\u4e00-\u9fff]{2,3})(?:就行|就好|吧|好了)", text)
    return found.group(1) if found else None


def han_person(text: str) -> str | None:
    """A Chinese person's name at the start of ``text``: a transliteration as far as its
    characters go (≤ 5), or a surname and one or two more (three only when a stop follows)."""
    if len(text) < 2 or text[0] in NOT_FIRST:
        return None
    if text[0] in TRANSLITERATION and text[1] in TRANSLITERATION and text[0] != text[1]:
        end = next((i for i, c in enumerate(text) if c not in TRANSLITERATION), len(text))
        return text[: min(end, 5)]
    if text[0] == text[1] and text[0] not in HAN_STOP:  # 朵朵, 乐乐: a child's pet name
        return text[:2]
    if text[0] not in SURNAMES or _stops(text, 1):
        return None
    if text[0] == "老" and text[1] not in SURNAMES:  # 老王 is a name, 老家 / 老板 are words
        return None
    if text[0] in "小老":  # 小王 / 老王: a familiar form is two characters (小王帮我搬家)
        return text[:2]
    if title := next((t for t in HAN_TITLES if text.startswith(t, 1)), None):
        return text[: 1 + len(title)]  # 李教授: a surname and its title, one name
    if len(text) == 2 or _stops(text, 2) or text[2] in HAN_VERBS:
        return text[:2]
    return text[:3] if len(text) == 3 or _stops(text, 3) or text[3] == "一" else text[:2]


def _stops(text: str, at: int) -> bool:
    """A name ends before ``text[at]``; 明 / 今 / 昨 only begin a time word (明天), else they
    are a given name's character (黄志明)."""
    char = text[at]
    if char in _TIME_START:
        return text[at + 1 : at + 2] in _TIME_NEXT
    return char in HAN_STOP


_TIME_START = set("明今昨")
_TIME_NEXT = set("天年早晚日")
