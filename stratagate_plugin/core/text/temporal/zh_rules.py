"""The Chinese rules of ``resolve``: 5月8日, 5月, 昨天, 三天前, 上周五, 周五, 下个月, 去年夏天.

``上周五`` and ``下周五`` keep their literal meaning, Friday of the previous or next calendar
week; a bare ``周五`` is the nearest Friday in the sentence's tense.
"""

import re
from datetime import timedelta

from .calendar import (
    Context,
    Handler,
    Span,
    day_span,
    few_range,
    month_span,
    nearest_weekend,
    nearest_year,
    safe_date,
    season_span,
    unit_offset,
    week_span,
    weekday_after,
    weekday_before,
    weekend_span,
    year_span,
)
from .patterns import WEEKDAYS, ZH_UNITS, zh_number


def _h_zh_full_date(match: re.Match[str], ctx: Context) -> Span | None:
    month, day = zh_number(match["m"]), zh_number(match["d"])
    if match["y"]:
        found = safe_date(int(match["y"]), month, day)
        return day_span(found, "explicit") if found else None
    found = safe_date(nearest_year(ctx.today, month, day, ctx.future, ctx.past), month, day)
    return day_span(found, "inferred") if found else None


def _h_zh_month(match: re.Match[str], ctx: Context) -> Span | None:
    month = zh_number(match["m"])
    if not 1 <= month <= 12:
        return None
    if match["y"]:
        return month_span(int(match["y"]), month, basis="explicit")
    year = nearest_year(ctx.today, month, 1 if ctx.future else 0, ctx.future)
    return month_span(year, month, basis="inferred")


def _h_zh_day_word(match: re.Match[str], ctx: Context) -> Span | None:
    word = match["w"]
    offsets = {"大前": -3, "大后": 3, "前": -2, "昨": -1, "今": 0, "明": 1, "后": 2}
    offset = offsets.get(word[:2], offsets.get(word[:1], 0))
    return day_span(ctx.today + timedelta(days=offset))


def _h_zh_ago(match: re.Match[str], ctx: Context) -> Span | None:
    unit = ZH_UNITS[match["unit"]]
    future = match["dir"] in ("后", "以后", "之后")
    if match["n"] == "几":
        return few_range(ctx.today, unit, future)
    amount = zh_number(match["n"])
    return unit_offset(ctx.today, unit, amount if future else -amount)


def _h_zh_week(match: re.Match[str], ctx: Context) -> Span | None:
    offset = {"上上": -2, "上": -1, "这": 0, "本": 0, "下": 1, "下下": 2}[match["rel"]]
    day = match["wd"]
    if not day:
        return week_span(ctx.today, offset)
    if day == "末":
        return weekend_span(ctx.today, offset)
    monday = week_span(ctx.today, offset).first
    return day_span(monday + timedelta(days=WEEKDAYS[day]))


def _h_zh_bare_weekday(match: re.Match[str], ctx: Context) -> Span | None:
    if match["wd"] == "末":
        return nearest_weekend(ctx)
    weekday = WEEKDAYS[match["wd"]]
    if ctx.future:
        return day_span(weekday_after(ctx.today, weekday))
    return day_span(weekday_before(ctx.today, weekday))


def _h_zh_month_word(match: re.Match[str], ctx: Context) -> Span | None:
    offset = {"上上": -2, "上": -1, "这": 0, "本": 0, "下": 1, "下下": 2}[match["rel"]]
    return month_span(ctx.today.year, ctx.today.month, offset)


def _h_zh_year_word(match: re.Match[str], ctx: Context) -> Span | None:
    offset = {"前": -2, "去": -1, "今": 0, "明": 1, "后": 2}[match["rel"]]
    year = ctx.today.year + offset
    if match["season"]:
        return season_span(match["season"], year)
    return year_span(year)


def _h_zh_few_days(match: re.Match[str], ctx: Context) -> Span | None:
    return few_range(ctx.today, "day")


ZH_HANDLERS: dict[str, Handler] = {
    "zh_full_date": _h_zh_full_date,
    "zh_month": _h_zh_month,
    "zh_day_word": _h_zh_day_word,
    "zh_ago": _h_zh_ago,
    "zh_week": _h_zh_week,
    "zh_bare_weekday": _h_zh_bare_weekday,
    "zh_month_word": _h_zh_month_word,
    "zh_year_word": _h_zh_year_word,
    "zh_few_days": _h_zh_few_days,
}
