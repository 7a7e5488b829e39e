"""What kind of entity a name is, read from the text around it (spec §4, issue 26).

A name becomes a node only when its sentence gives a reason for a type: a company word or a
"work at / joined" frame (organization), "use / switched to / installed" (tool), "project /
working on" (project), the gazetteer or "in / to / from / 住在 / 去" (place), and for a person
a speaker label, a kinship or role word, or a social frame ("met / with / told / my friend",
"Mel and I", "Ana lives …", 和小王 / 小王说). Weekdays (with their abbreviations), months,
holidays, quoted titles, sentence adverbs and role words are never nodes, whatever surrounds
them. English and Chinese; the frames are grammatical, the word lists small and closed.
"""

import re
from collections.abc import Collection

from .gazetteer import is_known_place
from .groups import GROUPS, HAN_GROUPS
from .han_names import HAN_NAMED, SURNAMES
from .roles import EN_ROLES, ROLES, ZH_ROLES, titled
from .subjects import is_name
from .text import is_latin, word_set

_TIME_WORDS = word_set(
    """Monday Tuesday Wednesday Thursday Friday Saturday Sunday Tue Tues Weds Thu Thur
    Thurs Fri January February March April May June July August September October
    November December Feb Apr Aug Sept Oct Nov Dec Christmas Xmas Easter
    Halloween Thanksgiving Hanukkah Diwali Ramadan Eid Passover Lent Pride Juneteenth Kwanzaa
    Today Tonight Tomorrow Yesterday Spring Summer Autumn Fall Winter"""
)
# sentence adverbs and pronoun-like words that open sentences capitalised
_OPENERS = word_set(
    """Actually Honestly Anyway Anyways Basically Luckily Hopefully Sadly Unfortunately
    Fortunately Apparently Obviously Seriously Literally Also Still Plus Besides However
    Meanwhile Then Now Everyone Everybody Someone Somebody Nobody Nothing Everything God Lord
    Btw Omg Wow Yay Congrats Congratulations Thanks Cheers Absolutely Definitely Totally
    Exactly Indeed Sure Okay"""
)
# a long word in -ly is a sentence adverb ("Thankfully, my son's ok"), not a name; names
# in -erly (Beverly, Kimberly) excepted
_ADVERB = re.compile(r"[A-Z][a-z]{4,}(?<!er)ly")
_TIME_TAIL = re.compile(r"\s(?:Day|Days|Month|Week|Weekend|Eve|Festival|Holiday|Holidays)$")
_HAN_TIME = re.compile(
    r"^(?:星期|周|礼拜)[一二三四五六日天末]$|^[一二三四五六七八九十]+月|节$|^(?:元旦|除夕|国庆|清明|"
    r"端午|七夕|元宵|中秋|春节|周末|今天|明天|昨天)"
)
_ROLE_WORDS = frozenset(word.lower() for word in ROLES) | {"grandpa", "grandma", "mommy", "daddy"}

_ORG_WORDS = word_set(
    """Inc Inc. Ltd Ltd. LLC Corp Corp. Corporation Co Co. Company Labs Lab Logistics Group
    Technologies Technology Tech Systems Solutions Bank University College School Institute
    Hospital Clinic Club Society Association Foundation Studio Studios Agency Partners
    Capital Airlines Airways Motors Media Press Academy Consulting Holdings Industries Council
    Union Bakery Cafe Café Restaurant Brewery Gym League Orchestra Choir Band Team Museum
    Library Church Ministry Department Office Centre Center Store Shop Pharma Health Network"""
)
_ORG_HEADS = word_set("University College School Institute Bank Museum Department")
_HAN_ORG = re.compile(
    r"(?:公司|集团|科技|大学|学院|中学|小学|医院|银行|研究所|研究院|俱乐部|协会|工作室|读书会|社团|"
    r"基金会|事务所|出版社|合唱团|乐队|学校|实验室|书店|餐厅|咖啡馆|健身房|跑团|球队|委员会)$"
)
_HAN_PROJECT = re.compile(r"(?:项目|计划|工程)$")
_HAN_PLACE = re.compile(r"(?:市|省|县|州|国|岛|山|湖|镇|村|区)$")


def never_entity(name: str, text: str = "") -> bool:
    """A weekday, month, holiday, quoted title, sentence adverb or role word: never a node."""
    bare = name.strip()
    words = bare.split()
    if not words:
        return True
    if is_latin(bare):
        if any(word.strip("'’s") in _TIME_WORDS for word in words) or _TIME_TAIL.search(bare):
            return True
        if words[0] in _OPENERS or bare.lower() in _ROLE_WORDS or _ADVERB.fullmatch(bare):
            return True
    elif _HAN_TIME.search(bare) or bare in ROLES:
        return True
    return _quoted(bare, text)


def _quoted(name: str, text: str) -> bool:
    """Inside quotes or title marks: a title of a book, film or song, not an entity; but a
    group's name after its noun ("our choir, 'Northern Voices'", 团体叫‘联结’) is a name."""
    escaped = re.escape(name)
    found = re.search(rf"[\"“'‘《「]\s*{escaped}\s*[\"”'’》」]", text)
    return found is not None and _GROUP_NAMING.search(text, 0, found.start() + 1) is None


_GROUP_NAMING = re.compile(
    rf"(?:\b{GROUPS}\s*(?:,\s*|\s+(?:is\s+)?(?:called|named)\s+)|{HAN_GROUPS}(?:叫做?|名叫|名字叫))"
    r"[\"“'‘《「]$"
)


def organization_shape(name: str) -> bool:
    """ "Acme Logistics", "University of Leeds", "Habitat for Humanity" (a purpose after
    "for"), 星火读书会."""
    words = name.split()
    if is_latin(name):
        purpose = len(words) >= 3 and "for" in words[1:-1]
        return purpose or (len(words) >= 2 and (words[-1] in _ORG_WORDS or words[0] in _ORG_HEADS))
    return bool(_HAN_ORG.search(name)) and _han_named(name)


def project_shape(name: str) -> bool:
    if is_latin(name):
        return name.startswith("Project ") or name.endswith(" Project")
    return bool(_HAN_PROJECT.search(name)) and _han_named(name)


def _han_named(name: str) -> bool:
    """A name before the kind word, not a phrase ("在当地一所学校") nor the bare word (计划)."""
    return HAN_NAMED.fullmatch(name) is not None


def _cue(name: str, before: str) -> re.Pattern[str]:
    """``before`` immediately before the name."""
    escaped = re.escape(name)
    edge = (
        r"\b(?!\s+(?:of\s+|de\s+|for\s+)?[A-Z][a-z])" if is_latin(name) else ""
    )  # the whole name, not its start
    return re.compile(rf"(?:{before}){edge[:2] if edge else ''}{escaped}{edge}")


_TOOL_BEFORE = (
    r"\b(?:use|uses|used|using|switched to|switching to|switch to|installed|install|downloaded"
    r"|started using|(?:app|tool|program|software|editor|plugin|service) (?:called|named)"
    r"|moved my \w+ to|(?:switched|switching|migrated) (?:\w+ )?from)"
    r"\s+(?:the\s+|a\s+|an\s+|my\s+)?"
    r"|(?:用|使用|在用|改用|换成了?|换到|安装了?|下载了?)"
)
_ORG_BEFORE = (
    r"\b(?:work(?:s|ed|ing)? (?:at|for)|employed (?:at|by)|joined|join|hired by|intern(?:s|ed|ing)?"
    r" at|member of|job at|position at|offer from|stud(?:y|ies|ied|ying) at|(?:startup|company"
    r"|firm|agency|business|shop|store|studio|restaurant|bakery|caf[eé]|charity|nonprofit)"
    r" (?:called|named))\s+(?:the\s+)?"
    r"|(?:入职了?|加入了?|就职于|供职于|任职于|就读于)"
)
_PROJECT_BEFORE = r"\b(?:working on|launch(?:ed|ing)?|project called|shipp(?:ed|ing))\s+(?:the\s+)?"
_PLACE_BEFORE = (
    r"(?<!\btalk )(?<!\btalked )(?<!\btold )(?<!\bsaid )(?<!\bwrote )(?<!\bsent )(?<!\bgave )"
    r"(?<!\bmarried )(?<!\blistened )(?<!\bintroduced )"
    r"\b(?:in|from|near|around|across|visit(?:ed|ing)?|(?:trip|back|went|go|going|flew|fly|moved"
    r"|moving|drove|travel+ed|travel+ing|headed|road trip) to)\s+(?:the\s+)?"
    r"|(?:住在|搬到了?|搬去了?|去了?|到了?|来自|回到?|在|飞到|飞往|前往)"
)
_PERSON_BEFORE = (
    r"\b(?:met|meet|meeting|with|told|tell|telling|asked|ask|called|texted|hugged|thanked|"
    r"thank|thanks|hey|hi|hello|dear|congrats|congratulations|miss|missed|me and|dating|"
    r"married|love you|by)\s+|,\s*(?=\S+[!?.]?$)|^\s*(?=\S+,\s+(?:you|your|thanks|thank|congrats"
    r"|how (?:are|is|was|did)|(?:did|have|are|do|can|could|would|will) you)\b)"
    r"|(?:和|跟|与|同|陪|给|见了|遇到了?|认识了?|告诉|问了?)"
)
_PERSON_AFTER = (
    r"\s+(?:said|says|told|asked|and I|and me|is my|was my|was born|is pregnant|turned \d+"
    r"|has an? (?:\w+ )?(?:sister|brother|son|daughter|husband|wife|kid|baby|boyfriend|girlfriend)"
    r"|(?:lives|lived|moved|works|worked|studies|studied|grew up|joined|married|loves|likes"
    r"|plays|owns|adopted|visited|came over|called me|texted me)\b)|'s (?:birthday|mom|dad"
    r"|wife|husband|sister|brother|son|daughter|kids|family|parents|girlfriend|boyfriend)\b"
    r"|(?:说|告诉|问|和我|跟我|邀请|约了?我|请我|帮我|送我|给我|带我|陪我|住在|搬到|是我的?|来自|在[\u4e00-\u9fff]{1,8}工作)"
)


def type_of(name: str, text: str, persons: Collection[str] = ()) -> str | None:
    """The node type ``text`` gives evidence for, or None (no node). ``persons``: names
    already known to be people here (speakers, earlier person nodes)."""
    if never_entity(name, text) or name not in text:
        return None
    if name in persons or (not is_latin(name) and short_form_of(name, persons)):
        return "person"  # 小梅 when 梅兰妮 is the one known person it shortens
    if titled(name) and is_name(titled(name) or ""):
        return "person"  # "Dr. Alvarez", 李教授
    if any(titled(person) == name for person in persons):
        return "person"  # "Moreau" after "Dr. Moreau"
    if organization_shape(name):
        return "organization"
    if project_shape(name):
        return "project"
    if is_known_place(name):
        return "place"
    if _cue(name, _TOOL_BEFORE).search(text):
        return "tool"
    if _cue(name, _ORG_BEFORE).search(text):
        return "organization"
    if _cue(name, _PROJECT_BEFORE).search(text):
        return "project"
    if _person_evidence(name, text):
        return "person"
    if _place_evidence(name, text):
        return "place"
    return None


def _person_evidence(name: str, text: str) -> bool:
    if not is_name(name):
        return False
    if _cue(name, rf"\b[Mm]y (?:\w+ )?(?:{EN_ROLES}),?\s+|我的?(?:{ZH_ROLES})").search(text):
        return True
    edge = r"\b" if is_latin(name) else ""
    after = re.compile(rf"{edge}{re.escape(name)}(?:{_PERSON_AFTER})")
    for sentence in re.split(r"(?<=[.!?。！？])\s*", text):
        if name in sentence and (
            _cue(name, _PERSON_BEFORE).search(sentence) or after.search(sentence)
        ):
            return True
    return False


def _place_evidence(name: str, text: str) -> bool:
    if is_latin(name):
        return bool(_cue(name, _PLACE_BEFORE).search(text))
    return bool(_HAN_PLACE.search(name)) and bool(_cue(name, _PLACE_BEFORE).search(text))


def short_form_of(name: str, full_names: Collection[str]) -> str | None:
    """The one known full name ``name`` is a short form of ("Mel" → "Melanie", 小梅 / 阿梅 /
    梅梅 → 梅兰妮, 小明 → 王小明); None when none or several match (ambiguous: kept apart,
    listed as a possible duplicate)."""
    if not is_latin(name):
        matches = {full for full in full_names if full != name and name in _han_short_forms(full)}
    elif len(name) < 3 or " " in name:
        return None
    else:  # "Mel" for Melanie, "Moreau" for Dr. Moreau
        matches = {
            full
            for full in full_names
            if full != name and (titled(full) or full).split()[0].startswith(name)
        }
    return matches.pop() if len(matches) == 1 else None


def _han_short_forms(full: str) -> set[str]:
    """How a Chinese full name is shortened: 小 / 阿 / 老 + one of its characters, that
    character doubled, or the given name after a surname (王小明 → 小明)."""
    if is_latin(full) or len(full) < 2:
        return set()
    forms = {f"{prefix}{char}" for char in full for prefix in "小阿老"} | {c * 2 for c in full}
    if len(full) == 3 and full[0] in SURNAMES:
        forms.add(full[1:])
    return forms - {full}
