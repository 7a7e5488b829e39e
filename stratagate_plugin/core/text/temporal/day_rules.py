"""Rules of ``resolve`` for numeric dates, ordinal days, parts of months and years, fortnights.

Numeric dates follow one rule, so a reader can predict it: a number above 12 is the day
whatever its place (``25/12/2026``, ``12/25/2026``); when both could be months, slashes are
read month first (``12/05/2026`` = 5 December 2026, the US and spreadsheet reading) and dots
day first (``12.05.2026`` = 12 May 2026, as dotted dates are written in Europe). Two-digit
years are 20xx. A date without a year (``on 5/12``) takes the nearest year in the
sentence's tense, like "May 12".

"The 15th" is the reference month's 15th, or the month before (past tense) or after
(future tense) when that one lies against the tense; 15号 likewise.

"A year and a half ago" is 18 months back, "half a month ago" two weeks (半年前 six months);
"the past few days" (最近几天) is the honest range from a few days back to today; "the other
week" is one to three weeks back; a capitalised weekday alone ("went hiking Saturday") is
the nearest one in the sentence's tense.
"""

import re

from .calendar import (
    FEW,
    Context,
    Handler,
    Span,
    current_season_year,
    day_in_month,
    day_span,
    month_part,
    month_span,
    nearest_year,
    safe_date,
    season_span,
    unit_offset,
    week_span,
    weekday_after,
    weekday_before,
    weekend_span,
    year_part,
)
from .patterns import EN_MONTHS, EN_NUMBERS, WEEKDAYS, ZH_UNITS, zh_number

_EN_PARTS = {"end": "end", "beginning": "beginning", "start": "beginning", "middle": "middle"}
_ZH_PARTS = {"底": "end", "末": "end", "下旬": "end", "初": "beginning", "上旬": "beginning"}
_ZH_PARTS |= {"中旬": "middle"}
_EN_OFFSETS = {"this": 0, "next": 1, "coming": 1, "following": 1, "last": -1, "previous": -1}
_ZH_OFFSETS = {"上上": -2, "上": -1, "这": 0, "本": 0, "下": 1, "下下": 2}
_ZH_YEARS = {"前": -2, "去": -1, "今": 0, "明": 1, "后": 2}
_VAGUE = {"few": FEW[1], "several": FEW[1], "couple": 2, "couple of": 2, "几": FEW[1]}
# "N units and a half" in a finer unit: years → months, months → weeks, weeks → days
_HALVES = {"year": ("month", 12, 6), "month": ("week", 4, 2), "week": ("day", 7, 3)}
_HALVES |= {"day": ("day", 1, 0)}
_ZH_DIRECTIONS = ("后", "以后", "之后")


def numeric_day(first: int, second: int, day_first: bool) -> tuple[int, int] | None:
    """(month, day) of ``first/second``: a part above 12 is the day, else the separator's
    reading; None when neither reading is a calendar day."""
    if first > 12 and second <= 12:
        day_first = True
    elif second > 12 and first <= 12:
        day_first = False
    month, day = (second, first) if day_first else (first, second)
    return (month, day) if 1 <= month <= 12 and 1 <= day <= 31 else None


def _h_numeric_date(match: re.Match[str], ctx: Context) -> Span | None:
    groups = match.groupdict()
    found = numeric_day(int(match["a"]), int(match["b"]), groups.get("dot") is not None)
    if found is None:
        return None
    month, day = found
    if groups.get("y") is None:
        year = nearest_year(ctx.today, month, day, ctx.future)
        inferred = safe_date(year, month, day)
        return day_span(inferred, "inferred") if inferred else None
    year = int(match["y"]) + (2000 if len(match["y"]) == 2 else 0)
    explicit = safe_date(year, month, day)
    return day_span(explicit, "explicit") if explicit else None


def _h_part_of(match: re.Match[str], ctx: Context) -> Span | None:
    """ "the end of the month / of next month / of May / of 2026 / of the year"."""
    part, groups = _EN_PARTS[match["part"].lower()], match.groupdict()
    if groups.get("unit"):
        offset = _EN_OFFSETS.get((groups.get("rel") or "this").lower(), 0)
        if match["unit"].lower() == "year":
            return year_part(ctx.today.year + offset, part)
        month = month_span(ctx.today.year, ctx.today.month, offset).first
        return month_part(month.year, month.month, part)
    if groups.get("mon"):
        if match["mon"] in ("may", "march"):  # lower-case: a verb
            return None
        number = EN_MONTHS[match["mon"].lower().rstrip(".")]
        return _named_month_part(groups.get("y"), number, part, ctx)
    return year_part(int(match["y"]), part, "explicit")


def _named_month_part(year: str | None, month: int, part: str, ctx: Context) -> Span:
    """A part of a named month: of the year given (explicit), else the nearest (inferred)."""
    if year:
        return month_part(int(year), month, part, "explicit")
    nearest = nearest_year(ctx.today, month, 1 if ctx.future else 0, ctx.future)
    return month_part(nearest, month, part, "inferred")


def _h_ordinal_day(match: re.Match[str], ctx: Context) -> Span | None:
    """ "on the 15th" (and "the 15th of next month")."""
    rel = (match.groupdict().get("rel") or "").lower()
    day = int(match["d"])
    if rel in ("this", "next", "last"):
        month = month_span(ctx.today.year, ctx.today.month, _EN_OFFSETS[rel]).first
        found = safe_date(month.year, month.month, day)
    else:
        found = day_in_month(ctx.today, day, ctx.future)
    return day_span(found) if found else None


def _h_fortnight(match: re.Match[str], ctx: Context) -> Span | None:
    """ "last fortnight": the two weeks before this one; "next fortnight": the two after."""
    rel = match["rel"].lower()
    if rel in ("next", "coming"):
        first, last = week_span(ctx.today, 1), week_span(ctx.today, 2)
    elif rel == "this":
        first, last = week_span(ctx.today, 0), week_span(ctx.today, 1)
    else:
        first, last = week_span(ctx.today, -2), week_span(ctx.today, -1)
    return Span(first.first, last.last, "range")


def _h_zh_month_part(match: re.Match[str], ctx: Context) -> Span | None:
    """5月底, 2026年5月上旬, 月底, 下个月初."""
    part, groups = _ZH_PARTS[match["part"]], match.groupdict()
    if groups.get("m"):
        month = zh_number(match["m"])
        if not 1 <= month <= 12:
            return None
        return _named_month_part(groups.get("y"), month, part, ctx)
    offset = _ZH_OFFSETS.get(groups.get("rel") or "这", 0)
    first = month_span(ctx.today.year, ctx.today.month, offset).first
    return month_part(first.year, first.month, part)


def _h_zh_month_day(match: re.Match[str], ctx: Context) -> Span | None:
    """下个月15号, 这个月3日."""
    first = month_span(ctx.today.year, ctx.today.month, _ZH_OFFSETS[match["rel"]]).first
    found = safe_date(first.year, first.month, zh_number(match["d"]))
    return day_span(found) if found else None


def _h_zh_year_part(match: re.Match[str], ctx: Context) -> Span | None:
    """年底, 今年年初, 去年底, 2026年底."""
    part = _ZH_PARTS[match["part"]]
    groups = match.groupdict()
    if groups.get("y"):
        return year_part(int(match["y"]), part, "explicit")
    return year_part(ctx.today.year + _ZH_YEARS.get(groups.get("rel") or "今", 0), part)


def _h_zh_bare_day(match: re.Match[str], ctx: Context) -> Span | None:
    found = day_in_month(ctx.today, int(match["d"]), ctx.future)
    return day_span(found) if found else None


def fortnights_as_weeks(unit: str, amount: int | None) -> tuple[str, int | None]:
    """A fortnight is two weeks (``a fortnight ago`` = two weeks ago)."""
    if unit != "fortnight":
        return unit, amount
    return "week", None if amount is None else 2 * amount


def _count(word: str) -> int | None:
    lower = " ".join(word.lower().split())
    if lower in _VAGUE:
        return _VAGUE[lower]
    return int(lower) if lower.isdigit() else EN_NUMBERS.get(lower) or zh_number(lower) or None


def _and_a_half(unit: str, amount: int, sign: int, ctx: Context) -> Span:
    finer, per, half = _HALVES[unit]
    return unit_offset(ctx.today, finer, sign * (amount * per + half))


def _h_half_ago(match: re.Match[str], ctx: Context) -> Span | None:
    """ "a year and a half ago", "half a month ago", "two weeks and a half from now"."""
    sign = 1 if match["dir"].lower().startswith("from") else -1
    if match.groupdict().get("half"):
        return _and_a_half(match["half"].lower(), 0, sign, ctx)
    amount = _count(match["n"])
    return None if amount is None else _and_a_half(match["unit"].lower(), amount, sign, ctx)


def _h_zh_half_ago(match: re.Match[str], ctx: Context) -> Span | None:
    """一年半前, 半年前, 半个月后."""
    sign = 1 if match["dir"] in _ZH_DIRECTIONS else -1
    if match.groupdict().get("half"):
        return _and_a_half(ZH_UNITS[match["half"]], 0, sign, ctx)
    amount = zh_number(match["n"])
    return _and_a_half(ZH_UNITS[match["unit"]], amount, sign, ctx) if amount else None


def _h_past_few(match: re.Match[str], ctx: Context) -> Span | None:
    """ "the past few days", 最近几天: from that many units back to today."""
    amount = _count(match["n"])
    if amount is None:
        return None
    unit = match["unit"].lower() if match["unit"].isascii() else ZH_UNITS[match["unit"]]
    return Span(unit_offset(ctx.today, unit, -amount).first, ctx.today, "range")


def _h_other_week(match: re.Match[str], ctx: Context) -> Span | None:
    return Span(week_span(ctx.today, -3).first, week_span(ctx.today, -1).last, "range")


def _h_bare_weekday(match: re.Match[str], ctx: Context) -> Span | None:
    weekday = WEEKDAYS[match["wd"].lower()]
    chosen = weekday_after if ctx.future else weekday_before
    return day_span(chosen(ctx.today, weekday))


def _h_zh_weekends_ago(match: re.Match[str], ctx: Context) -> Span | None:
    """两个周末前: the weekend two weeks back."""
    amount = zh_number(match["n"])
    return weekend_span(ctx.today, -amount) if amount else None


def _h_zh_this_season(match: re.Match[str], ctx: Context) -> Span | None:
    """这个夏天: the current or latest summer, or the coming one in a plan."""
    name = match["season"]
    year = current_season_year(name, ctx.today)
    if ctx.future and season_span(name, year).last < ctx.today:
        year += 1
    return season_span(name, year)


DAY_HANDLERS: dict[str, Handler] = {
    "numeric_date": _h_numeric_date,
    "part_of": _h_part_of,
    "ordinal_day": _h_ordinal_day,
    "fortnight": _h_fortnight,
    "zh_month_part": _h_zh_month_part,
    "zh_month_day": _h_zh_month_day,
    "zh_year_part": _h_zh_year_part,
    "zh_bare_day": _h_zh_bare_day,
    "half_ago": _h_half_ago,
    "zh_half_ago": _h_zh_half_ago,
    "past_few": _h_past_few,
    "zh_past_few": _h_past_few,
    "other_week": _h_other_week,
    "bare_weekday": _h_bare_weekday,
    "zh_weekends_ago": _h_zh_weekends_ago,
    "zh_this_season": _h_zh_this_season,
}
