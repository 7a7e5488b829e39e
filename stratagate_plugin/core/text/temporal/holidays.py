"""Holidays as days for ``resolve``: "last Christmas", "on Thanksgiving", 去年圣诞节.

Fixed-date holidays and the US ones defined by a weekday of a month (Thanksgiving is the
fourth Thursday of November, Mother's Day the second Sunday of May …); holidays of the
lunar calendar (春节, 中秋) and Easter are not computed. "Last Christmas" is the latest one
before today, "next" the first after it, "this" (今年) this year's, 去年 / 明年 last or
next year's; without a word the nearest one in the sentence's tense, today included.
"""

import re
from datetime import date, timedelta

from .calendar import SOON_DAYS, Context, Handler, Span, day_span

# name pattern → (month, day), or (month, weekday, nth) with nth −1 the month's last one
_HOLIDAYS: tuple[tuple[str, tuple[int, ...]], ...] = (
    (r"christmas eve|平安夜", (12, 24)),
    (r"christmas|圣诞", (12, 25)),
    (r"new year'?s eve|跨年夜", (12, 31)),
    (r"new year|元旦", (1, 1)),
    (r"halloween|万圣节", (10, 31)),
    (r"valentine|情人节", (2, 14)),
    (r"independence day|fourth of july", (7, 4)),
    (r"国庆", (10, 1)),
    (r"劳动节", (5, 1)),
    (r"thanksgiving|感恩节", (11, 3, 4)),
    (r"mother|母亲节", (5, 6, 2)),
    (r"father|父亲节", (6, 6, 3)),
    (r"labou?r day", (9, 0, 1)),
    (r"memorial day", (5, 0, -1)),
)
_YEARS = {"去年": -1, "今年": 0, "明年": 1, "this": 0}


def holiday_rule(name: str) -> tuple[int, ...] | None:
    lower = name.lower().replace("’", "'")
    return next((rule for pattern, rule in _HOLIDAYS if re.search(pattern, lower)), None)


def holiday_in(year: int, rule: tuple[int, ...]) -> date:
    if len(rule) == 2:
        return date(year, rule[0], rule[1])
    month, weekday, nth = rule
    if nth < 0:
        last = date(year + month // 12, month % 12 + 1, 1) - timedelta(days=1)
        return last - timedelta(days=(last.weekday() - weekday) % 7)
    first = date(year, month, 1)
    return first + timedelta(days=(weekday - first.weekday()) % 7 + 7 * (nth - 1))


def _h_holiday(match: re.Match[str], ctx: Context) -> Span | None:
    rule = holiday_rule(match["name"])
    if rule is None:
        return None
    rel = (match.groupdict().get("rel") or "").lower()
    if rel in _YEARS:
        return day_span(holiday_in(ctx.today.year + _YEARS[rel], rule))
    this_year = holiday_in(ctx.today.year, rule)
    soon = 0 <= (this_year - ctx.today).days <= SOON_DAYS  # named without tense, coming up
    ahead = rel == "next" or (not rel and (ctx.future or (not ctx.past and soon)))
    if ahead:
        passed = this_year < ctx.today or (rel == "next" and this_year == ctx.today)
        return day_span(holiday_in(ctx.today.year + 1, rule) if passed else this_year)
    later = this_year > ctx.today or (rel == "last" and this_year == ctx.today)
    return day_span(holiday_in(ctx.today.year - 1, rule) if later else this_year)


HOLIDAY_HANDLERS: dict[str, Handler] = {"holiday": _h_holiday}
