"""The regular-expression table of ``resolve`` (English and Chinese) and its word lists.

Each entry is ``(handler name, compiled pattern)``; ``resolve``, ``day_rules`` and
``times_of_day`` keep the handlers.
"""

import re

EN_MONTHS = {
    name: number
    for number, names in enumerate(
        (
            ("jan", "january"),
            ("feb", "february"),
            ("mar", "march"),
            ("apr", "april"),
            ("may",),
            ("jun", "june"),
            ("jul", "july"),
            ("aug", "august"),
            ("sep", "sept", "september"),
            ("oct", "october"),
            ("nov", "november"),
            ("dec", "december"),
        ),
        start=1,
    )
    for name in names
}
_WORDS = ["one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"]
_WORDS += ["eleven", "twelve"]
EN_NUMBERS = {word: number for number, word in enumerate(_WORDS, start=1)}
EN_NUMBERS |= {"a": 1, "an": 1, "a couple": 2, "a couple of": 2, "couple of": 2, "couple": 2}
EN_NUMBERS |= {"fifteen": 15, "twenty": 20, "thirty": 30}
WEEKDAYS = {
    "monday": 0, "mon": 0, "tuesday": 1, "tue": 1, "tues": 1, "wednesday": 2, "wed": 2,
    "weds": 2, "thursday": 3, "thu": 3, "thur": 3, "thurs": 3, "friday": 4, "fri": 4,
    "saturday": 5, "sat": 5, "sunday": 6,
    "一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6,
}  # fmt: skip
SEASON_MONTHS = {"spring": 3, "summer": 6, "fall": 9, "autumn": 9, "winter": 12}
SEASON_MONTHS |= {"春天": 3, "春季": 3, "夏天": 6, "夏季": 6, "秋天": 9, "秋季": 9}
SEASON_MONTHS |= {"冬天": 12, "冬季": 12}
ZH_UNITS = {"天": "day", "日": "day", "周": "week", "个星期": "week", "星期": "week"}
ZH_UNITS |= {"个礼拜": "week", "礼拜": "week", "个月": "month", "年": "year"}
_ZH_DIGITS = {"零": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5}
_ZH_DIGITS |= {"六": 6, "七": 7, "八": 8, "九": 9}


def zh_number(text: str) -> int:
    """Arabic digits or a Chinese numeral below 100 (``十二``, ``二十三``, ``两``)."""
    if text.isdigit():
        return int(text)
    if "十" in text:
        tens, _, ones = text.partition("十")
        return _ZH_DIGITS.get(tens, 1) * 10 + _ZH_DIGITS.get(ones, 0)
    return _ZH_DIGITS.get(text, 0)


_MONTH = (
    r"(?P<mon>jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\b\.?"
)
_NUM = (
    r"(?P<n>\d{1,3}|a\s+couple\s+of|a\s+couple|couple\s+of|couple|a\s+few|few|several|an?|one|two"
    r"|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty)"
)
_WEEKDAY = (
    r"(?P<wd>monday|mon|tuesday|tues|tue|wednesday|weds|wed|thursday|thurs|thur|thu"
    r"|friday|fri|saturday|sat|sunday)\b\.?"
)
_SEASON = r"(?P<season>spring|summer|fall|autumn|winter)"
_YEAR = r"(?P<y>(?:19|20)\d{2})"
_ORD = r"(?:st|nd|rd|th)?"


def _en(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


EN_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("iso", _en(rf"\b{_YEAR}[-/](?P<m>\d{{1,2}})[-/](?P<d>\d{{1,2}})"
                r"(?:[T ](?P<hh>\d{1,2}):(?P<mm>\d{2}))?\b")),
    ("date", _en(rf"\b(?P<d>\d{{1,2}}){_ORD}\s+(?:of\s+)?{_MONTH}(?:,?\s*{_YEAR}\b)?")),
    ("date", _en(rf"\b{_MONTH}\s+(?P<d>\d{{1,2}}){_ORD}\b(?:,?\s*{_YEAR}\b)?")),
    ("month_year", _en(rf"\b{_MONTH}[,.]?\s*(?:of\s+)?{_YEAR}\b")),
    ("month_year", _en(r"\b(?:in|during|since|until|till|by|early|late|mid|of|last|this|next|to"
                       r"|for|on|from|around|before|after|through|into)"
                       rf"[\s-]+{_MONTH}(?![\s,.]*\d)")),
    ("year", _en(r"\b(?:in|during|since|of|by|until|till|from|year|early|late|mid)[\s-]+"
                 rf"{_YEAR}\b(?!\s*[-/]\d)")),
    ("season", _en(rf"\b(?P<rel>last|this|next|past)\s+{_SEASON}\b")),
    ("season", _en(rf"\b(?:the\s+)?{_SEASON}\s+(?:of\s+)?{_YEAR}\b")),
    ("season", _en(rf"\b(?:in|over|during|through)\s+the\s+{_SEASON}\b")),
    ("day_word", _en(r"\b(?:the\s+day\s+before\s+yesterday|the\s+day\s+after\s+tomorrow"
                     r"|the\s+night\s+before\s+last|yesterday|today|tonight|tomorrow|last\s+night"
                     r"|this\s+(?:morning|afternoon|evening))\b")),
    ("ago", _en(rf"\b{_NUM}\s+(?P<unit>day|night|week|fortnight|month|year)s?(?:\s+or\s+so)?\s+"
                r"(?P<dir>ago|back|earlier|from\s+now)\b")),
    ("ago", _en(rf"\bin\s+{_NUM}\s+(?P<unit>day|week|fortnight|month|year)s?\b")),
    ("other_day", _en(r"\bthe\s+other\s+day\b")),
    ("relative_unit", _en(r"\b(?P<rel>last|this|next|this\s+past|past|previous|the\s+following)"
                          r"\s+(?P<unit>week|month|year)\b")),
    ("relative_unit", _en(r"\bthe\s+(?P<unit>week|month|year)\s+before\s+last\b")),
    ("weekend", _en(rf"\b{_NUM}\s+weekends?\s+ago\b")),
    ("weekend", _en(r"\b(?P<rel>last|this\s+coming|this|next|this\s+past|past|over\s+the|on\s+the"
                    r"|the|coming|upcoming)\s+weekend\b")),
    ("weekend", _en(r"\bthe\s+weekend\s+before\s+last\b")),
    ("weekday", _en(rf"\b(?P<rel>last|this|next|on|past)\s+{_WEEKDAY}")),
)  # fmt: skip

_ZH_NUM = r"\d{1,2}|十[一二]?|[一二三四五六七八九]"
_ZH_DAY = r"\d{1,2}|[一二三]?十[一二三四五六七八九]?|[一二三四五六七八九]"
ZH_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("zh_full_date", re.compile(rf"(?:{_YEAR}\s*年\s*)?(?<![\d个上下这本])(?P<m>{_ZH_NUM})\s*月"
                                rf"\s*(?P<d>{_ZH_DAY})\s*[日号]")),
    ("zh_month", re.compile(rf"(?:{_YEAR}\s*年\s*)?(?<![\d个上下这本每])(?P<m>{_ZH_NUM})\s*月份?")),
    ("year", re.compile(rf"(?<!\d){_YEAR}\s*年(?!\s*\d{{1,2}}\s*月)(?!代)")),
    ("zh_day_word", re.compile(r"(?P<w>大前天|前天|前晚|前日|昨天|昨日|昨晚|昨夜|昨儿|今天|今日"
                               r"|今晚|今早|今夜|今儿|明天|明日|明晚|明早|大后天|后天)")),
    ("zh_ago", re.compile(r"(?<!\d)(?P<n>\d{1,3}|[一二两三四五六七八九十]{1,3}|几)\s*"
                          r"(?P<unit>天|日|周|个星期|个礼拜|星期|礼拜|个月|年)\s*"
                          r"(?P<dir>以前|之前|前|以后|之后|后)")),
    ("zh_few_days", re.compile(r"前几天|这几天|前些天|前些日子|前两天")),
    ("zh_week", re.compile(r"(?P<rel>上上|上|这|本|下下|下)个?\s*(?:周|星期|礼拜)"
                           r"(?P<wd>[一二三四五六日天末])?")),
    ("zh_bare_weekday", re.compile(r"(?<![上下这本个每])(?:周|星期|礼拜)"
                                   r"(?P<wd>[一二三四五六日天末])")),
    ("zh_month_word", re.compile(r"(?P<rel>上上|上|这|本|下下|下)个?月(?!份?\d)")),
    ("zh_year_word", re.compile(r"(?P<rel>前|去|今|明|后)年"
                                r"(?P<season>春天|夏天|秋天|冬天|春季|夏季|秋季|冬季)?")),
)  # fmt: skip

_PART = r"(?P<part>end|beginning|start|middle)"
_RELATIVE = r"(?:(?P<rel>this|next|last|coming|following|previous)\s+)?"
# After "on the 15th" only a function word may follow: "on the 15th floor" is no date.
_NOT_A_NOUN = (
    r"(?!\s+(?!(?:and|or|but|at|in|to|for|with|so|then|when|because|if|we|i|you|he|she|they"
    r"|it|is|was|will|as|too|instead|again|please|now|this|next|that|which)\b)[a-z])"
)
_HOLIDAY = (
    r"Christmas\s+Eve|Christmas(?:\s+Day)?|christmas|New\s+Year'?s\s+Eve|New\s+Year'?s?"
    r"(?:\s+Day)?|Halloween|halloween|Valentine'?s(?:\s+Day)?|Thanksgiving|thanksgiving"
    r"|Independence\s+Day|Fourth\s+of\s+July|Mother'?s\s+Day|Father'?s\s+Day|Labou?r\s+Day"
    r"|Memorial\s+Day"
)
_PREPOSITION = r"(?:on|by|until|till|before|after|from|since|for|around|through|starting)"
EN_DAY_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("numeric_date", _en(r"(?<![\w/.])(?P<a>\d{1,2})/(?P<b>\d{1,2})/"
                         r"(?P<y>(?:19|20)\d{2}|\d{2})(?![\w/])")),
    ("numeric_date", _en(r"(?<![\w.])(?P<a>\d{1,2})(?P<dot>\.)(?P<b>\d{1,2})\."
                         r"(?P<y>(?:19|20)\d{2})(?![\w.]|\.\d)")),
    ("numeric_date", _en(rf"\b{_PREPOSITION}\s+(?P<a>\d{{1,2}})/(?P<b>\d{{1,2}})(?![\w/])")),
    ("part_of", _en(rf"\b(?:the\s+)?{_PART}\s+of\s+(?:the\s+)?{_RELATIVE}(?P<unit>month|year)\b")),
    ("part_of", _en(rf"\b(?:the\s+)?{_PART}\s+of\s+{_MONTH}(?:,?\s*{_YEAR}\b)?")),
    ("part_of", _en(rf"\b(?:the\s+)?{_PART}\s+of\s+{_YEAR}\b")),
    ("ordinal_day", _en(rf"\b{_PREPOSITION}\s+the\s+(?P<d>\d{{1,2}})(?:st|nd|rd|th)\b"
                        r"(?:\s+of\s+(?:the\s+)?(?P<rel>this|next|last|the)\s+month\b)?"
                        + _NOT_A_NOUN)),
    ("fortnight", _en(r"\b(?P<rel>last|this|next|past|previous|coming)\s+fortnight\b")),
    ("half_ago", _en(r"\b(?:(?P<n>\d{1,2}|an?|one|two|three|four|five|six|seven|eight|nine|ten)"
                     r"\s+(?P<unit>day|week|month|year)s?\s+and\s+a\s+half"
                     r"|half\s+an?\s+(?P<half>day|week|month|year))"
                     r"\s+(?P<dir>ago|back|earlier|from\s+now)\b")),
    ("past_few", _en(r"\b(?:the\s+|these\s+)?(?:past|last)\s+(?P<n>few|couple(?:\s+of)?|several"
                     r"|\d{1,2}|two|three|four|five|six|seven|eight|nine|ten)\s+"
                     r"(?P<unit>day|week|month|year)s\b")),
    ("other_week", _en(r"\bthe\s+other\s+week\b")),
    # a capitalised weekday alone ("hiking Saturday"); not a plural, not a named day, not a
    # recurrence ("every Monday", "each Friday", "every other Sunday": a habit has no date)
    ("bare_weekday", re.compile(r"(?<!Black )(?<!Good )(?<!Cyber )(?<!Easter )(?<!Palm )"
                                r"(?<!Ash )(?<![Ee]very )(?<![Ee]ach )(?<!other )"
                                r"\b(?P<wd>Monday|Tuesday|Wednesday|Thursday|Friday"
                                r"|Saturday|Sunday)\b(?!s\b)")),
    # a holiday as a time: after last/this/next or a preposition ("a Christmas tree" is none)
    ("holiday", re.compile(r"\b(?:(?i:(?P<rel>last|this|next))\s+|(?i:on|at|for|over|during"
                           r"|around|before|after|until|till|since|by)\s+(?:the\s+)?)"
                           rf"(?P<name>{_HOLIDAY})\b")),
)  # fmt: skip

_ZH_PART = r"(?P<part>底|末|初|上旬|中旬|下旬)"
_ZH_HOLIDAY = r"平安夜|圣诞节|跨年夜|元旦|万圣节|情人节|感恩节|国庆节|母亲节|父亲节|劳动节"
_ZH_COUNT = r"\d{1,2}|[一二两三四五六七八九十]{1,3}"
ZH_DAY_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("zh_month_part", re.compile(rf"(?:{_YEAR}\s*年\s*)?(?<![\d个上下这本每])(?P<m>{_ZH_NUM})"
                                 rf"\s*月份?\s*{_ZH_PART}")),
    ("zh_month_part", re.compile(r"(?<![\d一二三四五六七八九十个每])"
                                 rf"(?P<rel>上上|上|这|本|下下|下)?个?月{_ZH_PART}")),
    ("zh_month_day", re.compile(r"(?P<rel>上上|上|这|本|下下|下)个?月"
                                rf"\s*(?P<d>{_ZH_DAY})\s*[日号]")),
    ("zh_year_part", re.compile(r"(?:(?P<rel>前|去|今|明|后)年|(?P<y>(?:19|20)\d{2})\s*年"
                                r"|(?<![\d一二三四五六七八九十百千两几多每个新])年)年?"
                                r"(?P<part>底|末|初)(?![一二三四五六七八九十])")),
    ("zh_bare_day", re.compile(r"(?<![\d月年号.:/])(?P<d>\d{1,2})\s*号"
                               r"(?![线楼房门床座位机院栋车码])")),
    ("zh_bare_day", re.compile(r"(?<![\d月年号.:/])(?P<d>\d{1,2})\s*日(?![元币本语文报期])")),
    ("zh_half_ago", re.compile(rf"(?:(?P<n>{_ZH_COUNT})(?P<unit>年|个月|周|个星期|天)半"
                               r"|半(?P<half>年|个月|天))\s*(?P<dir>以前|之前|前|以后|之后|后)")),
    ("zh_weekends_ago", re.compile(rf"(?P<n>{_ZH_COUNT})个周末(?:以前|之前|前)")),
    ("zh_past_few", re.compile(rf"(?:过去|最近|近)(?:的)?(?P<n>几|{_ZH_COUNT})"
                               r"(?P<unit>天|周|个星期|个月|年)")),
    ("zh_this_season", re.compile(r"这个(?P<season>春天|夏天|秋天|冬天)")),
    ("holiday", re.compile(r"(?:(?P<rel>去年|今年|明年)的?|(?<=[在到过等至]))"
                           rf"(?P<name>{_ZH_HOLIDAY})")),
    ("holiday", re.compile(rf"(?P<name>{_ZH_HOLIDAY})"
                           r"(?=那天|当天|期间|的时候|前|后|假期|当晚|快乐)")),
)  # fmt: skip

_ZH_HOUR = r"\d{1,2}|十[一二]?|[一二三四五六七八九两]"
_ZH_MINUTE = r"\d{1,2}|[一二三四五]?十[一二三四五六七八九]?|[一二三四五六七八九]"
_ZH_PERIOD = r"(?P<period>凌晨|早上|早晨|清晨|上午|中午|下午|傍晚|晚上|夜里|半夜)"
CLOCK_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("clock", _en(r"\b(?P<hh>1[0-2]|0?[1-9])(?::(?P<mm>[0-5]\d))?\s*(?P<ampm>[ap])\.?m\b\.?")),
    ("clock", _en(r"(?<![\d:.])(?P<hh>[01]?\d|2[0-3]):(?P<mm>[0-5]\d)(?![\d:])(?!\s*[ap]\.?m\b)")),
    ("clock", _en(r"\b(?P<hh>1[0-2]|0?[1-9])\s*o'?clock\b")),
    ("clock", _en(r"\b(?P<word>noon|midday|midnight)\b")),
    ("zh_clock", re.compile(rf"{_ZH_PERIOD}\s*(?P<hh>{_ZH_HOUR})\s*[点时]"
                            rf"(?:\s*(?P<half>半)|\s*(?P<mm>{_ZH_MINUTE})\s*分?|钟)?")),
    ("zh_clock", re.compile(rf"(?<![\d一二三四五六七八九十两])(?P<hh>{_ZH_HOUR})\s*点"
                            rf"(?:\s*(?P<half>半)|\s*(?P<mm>{_ZH_MINUTE})\s*分|钟)")),
)  # fmt: skip

# A sentence saying its fact is over: a past verb or a word pointing back. Without one (and
# without a future cue) a day named without its year is the nearest such day.
PAST_CUES = re.compile(
    r"\b(?:was|were|did|had|ago|last|yesterday|went|got|came|saw|met|took|made|gave|told"
    r"|said|bought|left|began|ran|won|lost|spent|felt|kept|heard|found|\w+ed)\b"
    r"|了|过|昨天|前天|上周|上个月|去年|曾",
    re.IGNORECASE,
)
FUTURE_CUES = re.compile(
    r"\b(?:will|shall|going\s+to|gonna|plan(?:s|ning)?\s+to|intend(?:s|ing)?\s+to|next"
    r"|tomorrow|upcoming|soon|can't\s+wait|looking\s+forward)\b|['\u2019]ll\b"
    r"|\b(?:move|moving|postpone|reschedule|push|delay)\b[^.!?]{0,40}?\b(?:to|until)\b"
    # a past reschedule whose destination is a time ("moved the launch to May") looks ahead;
    # "moved to Lisbon" stays a past relocation
    r"|\b(?:moved|postponed|rescheduled|pushed|delayed|changed|shifted)\b[^.!?]{0,40}?"
    rf"\b(?:to|until|till)\s+(?:the\s+)?(?:next\b|following\b|\d|{_MONTH}|{_WEEKDAY}|tomorrow)"
    r"|\b(?:plan(?:s|ned|ning)?|schedul(?:e|es|ed|ing)|booked|slated|due|arranged)\b"
    r"[^.!?]{0,40}?\b(?:for|on)\b"
    r"|打算|准备|计划|将要|即将|要去|会去|明天|下周|下个月|明年|等不及|改到|推迟到|延期到"
    r"|定在|定于|安排在|约在|约好|预定|预计|预约",
    re.IGNORECASE,
)
