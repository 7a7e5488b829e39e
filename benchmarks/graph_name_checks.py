"""Checks of person nodes a graph should not hold (issue 26), for ``locomo_graph.py``.

A person node is suspect when its name is a calendar word (closed lists of weekdays, months
and holidays in English and Chinese), a place (a closed list of countries and continents, or
the same name typed place elsewhere in the run), a title (it occurs inside quotes or 《》 in
the conversation: "Becoming Nicole", "Charlotte's Web"), a common word (English: the
conversation also writes it in lower case) or a Chinese fragment (a grammatical particle
inside a "name": 了助理经理). Two person nodes are duplicates when one name is a short form
of the other: a prefix (Mel / Melanie) or a Chinese 小/阿/老 + part of the name (小梅 / 梅兰妮).
These are diagnostics for a measurement, not rules for the projector.
"""

import re
from typing import Any

WEEKDAYS = (
    *("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"),
    *("weekend", "mon", "tue", "tues", "wed", "thu", "thur", "thurs", "fri", "sat"),
)
MONTHS = (
    *("january", "february", "march", "april", "may", "june", "july", "august"),
    *("september", "october", "november", "december", "month"),
    *("feb", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec"),
)
HOLIDAYS = ("christmas", "easter", "thanksgiving", "halloween", "hanukkah", "diwali", "new year")
CALENDAR_EN = frozenset(WEEKDAYS + MONTHS)
CALENDAR_ZH = re.compile(
    r"(星期|礼拜|周)[一二三四五六日天末]|([一二三四五六七八九十]{1,3}|\d{1,2})月"
    r"|春节|元旦|国庆|中秋|端午|清明|元宵|除夕|圣诞|感恩节|万圣节"
)


def _listed(words: str) -> frozenset[str]:
    return frozenset(words.split())


COUNTRIES_EN = _listed(
    "afghanistan argentina australia austria bangladesh belgium bolivia brazil canada "
    "chile china colombia cuba czechia denmark egypt england ethiopia finland france "
    "germany ghana greece hungary iceland india indonesia iran iraq ireland israel italy "
    "jamaica japan jordan kenya korea lebanon malaysia mexico morocco nepal netherlands "
    "nigeria norway pakistan peru philippines poland portugal romania russia scotland "
    "senegal singapore spain sweden switzerland syria taiwan thailand turkey uganda "
    "ukraine uruguay venezuela vietnam wales africa asia europe america antarctica"
)
COUNTRIES_ZH = _listed(
    "中国 美国 英国 法国 德国 日本 韩国 俄罗斯 意大利 西班牙 葡萄牙 瑞典 挪威 丹麦 芬兰 "
    "荷兰 比利时 瑞士 奥地利 波兰 希腊 土耳其 印度 泰国 越南 新加坡 马来西亚 印尼 菲律宾 "
    "澳大利亚 新西兰 加拿大 墨西哥 巴西 阿根廷 智利 秘鲁 埃及 南非 肯尼亚 尼日利亚 "
    "爱尔兰 苏格兰 冰岛 以色列 伊朗 非洲 亚洲 欧洲 美洲"
)
PARTICLES_ZH = re.compile(r"[了的着过吗呢吧啊]")
QUOTED = re.compile(
    r"\"([^\"\n]{1,80})\"|“([^”\n]{1,80})”|《([^》\n]{1,80})》|(?<!\w)'([^'\n]{3,80})'(?!\w)"
)
SHORT_PREFIXES = ("小", "阿", "老")


def is_calendar_word(name: str) -> bool:
    """A weekday, month or holiday, or a name made of one ("Pride Month", "Tues", 周五)."""
    folded = name.casefold()
    words = re.findall(r"[a-z]+", folded)
    if any(w in CALENDAR_EN or w.removesuffix("s") in CALENDAR_EN for w in words):
        return True
    return any(h in folded for h in HOLIDAYS) or bool(CALENDAR_ZH.search(name))


def lower_words(text: str) -> set[str]:
    """Words the conversation writes in lower case."""
    return set(re.findall(r"\b[a-z][a-z'-]+\b", text))


def quoted_words(text: str) -> set[str]:
    """Every word and whole span inside quotes or 《》, case-folded."""
    found: set[str] = set()
    for match in QUOTED.finditer(text):
        span = next(group for group in match.groups() if group).strip(" .,!?").casefold()
        found |= {span, *re.findall(r"[\w']+", span)}
    return found


def why_not_a_person(name: str, places: set[str], quoted: set[str], lower: set[str]) -> str | None:
    """The first reason a person node's name is not a person's, or None (``quoted`` and
    ``lower``: the conversation's quoted and lower-case words)."""
    folded = name.strip().casefold()
    if is_calendar_word(name):
        return "calendar"
    if folded in places or folded in COUNTRIES_EN or name.strip() in COUNTRIES_ZH:
        return "place"
    if folded in quoted:
        return "title"
    if name.isascii() and " " not in name.strip() and folded in lower:
        return "common word"
    if not name.isascii() and PARTICLES_ZH.search(name):
        return "fragment"
    return None


def mistyped_people(people: list[str], places: set[str], text: str) -> dict[str, str]:
    """Person node → why it is not a person (``places``: case-folded names typed place)."""
    quoted, lower = quoted_words(text), lower_words(text)
    reasons = {name: why_not_a_person(name, places, quoted, lower) for name in people}
    return {name: why for name, why in reasons.items() if why}


def is_short_form(short: str, full: str) -> bool:
    """``Mel`` of ``Melanie``, ``Caroline`` of ``Caroline Hart``, ``小梅`` of ``梅兰妮``."""
    a, b = short.strip().casefold(), full.strip().casefold()
    if not a or a == b:
        return False
    first = b.split()[0] if b.split() else b
    if len(a) >= 2 and first.startswith(a):
        return True
    core = a[1:] if a[:1] in SHORT_PREFIXES else ""
    return bool(core) and (b.startswith(core) or b.endswith(core))


def duplicate_people(people: list[str], speakers: list[str]) -> list[dict[str, Any]]:
    """Pairs of person nodes where one name is a short form of the other; ``speaker``: one
    of them is a speaker of the conversation."""
    keys = {s.strip().casefold() for s in speakers}
    return [
        {"short": a, "full": b, "speaker": bool({a.casefold(), b.casefold()} & keys)}
        for a in people
        for b in people
        if is_short_form(a, b)
    ]
