"""Time expressions in a sentence → the happened interval of spec §3.2 (English and Chinese).

A hand-written table, because the interval and its precision matter as much as the date.
The calendar is the reference's timezone; weeks run Monday–Sunday; intervals are inclusive
(00:00:00 of the first day to 23:59:59 of the last).

* day words (yesterday, last night, 昨天, 前天 …) → that day; ``N days ago``/``N天前`` → that day.
* ``last/this/next week``, ``上周/本周/下周``, ``N weeks ago`` → that Monday–Sunday week (range).
* ``last/this/next weekend``, ``上周末`` → Saturday–Sunday of that week; "over the weekend" is
  the latest weekend that has begun.
* ``last Friday`` → the latest Friday strictly before the reference day, ``next Friday`` →
  the first one strictly after, ``this Friday`` → Friday of the current week. ``上周五`` and
  ``下周五`` keep their literal Chinese meaning: Friday of the previous/next calendar week.
* ``last/next month``, ``N months ago``, ``上个月`` → month; ``last year``, ``去年`` → year;
  ``last summer`` → the latest summer that has ended (the previous one while inside a summer),
  ``去年夏天`` → last year's summer (meteorological seasons, northern hemisphere; range).
* "a few/several days|weeks|months ago", ``几天前``, "the other day" → an honest range (2–5
  units back for "few").
* explicit dates (ISO, "8 May 2023", "May 8, 2023", "May 2023", "in 2022", ``2023年5月8日``)
  → basis explicit. A day or month without a year takes the nearest year in the direction of
  the sentence's tense (past unless a future cue is present): basis inferred.
"""

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta

from .calendar import (
    Basis,
    Precision,
    Span,
    current_season_year,
    day_span,
    few_range,
    month_span,
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
from .patterns import (
    EN_MONTHS,
    EN_NUMBERS,
    EN_PATTERNS,
    FUTURE_CUES,
    WEEKDAYS,
    ZH_PATTERNS,
    ZH_UNITS,
    zh_number,
)

__all__ = ["UNKNOWN", "Basis", "Precision", "TimeExpression", "find_time_expressions"]
__all__ += ["is_future", "resolve_time"]


@dataclass(frozen=True)
class TimeExpression:
    """One resolved expression: the happened interval, its precision and basis."""

    start: datetime | None
    end: datetime | None
    precision: Precision
    basis: Basis
    original_text: str
    position: int = -1

    @property
    def known(self) -> bool:
        return self.start is not None

    def as_temporal(self) -> dict[str, str]:
        """The happened_* / precision / basis / original_text fields of an event temporal."""
        fields: dict[str, str] = {"precision": self.precision, "basis": self.basis}
        if self.original_text:
            fields["original_text"] = self.original_text
        if self.start is not None and self.end is not None:
            fields["happened_start"] = self.start.isoformat()
            fields["happened_end"] = self.end.isoformat()
        return fields

    def describe(self) -> str:
        """A compact date label: ``2023-05-07``, ``2023-05``, ``2023``, ``a..b``."""
        if self.start is None or self.end is None:
            return ""
        if self.precision == "instant":
            return self.start.strftime("%Y-%m-%d %H:%M")
        if self.precision == "year":
            return f"{self.start:%Y}"
        if self.precision == "month":
            return f"{self.start:%Y-%m}"
        if self.precision == "day":
            return f"{self.start:%Y-%m-%d}"
        return f"{self.start:%Y-%m-%d}..{self.end:%Y-%m-%d}"


UNKNOWN = TimeExpression(None, None, "unknown", "unknown", "")


@dataclass(frozen=True)
class Context:
    today: date
    future: bool


Handler = Callable[[re.Match[str], Context], Span | None]


def is_future(text: str) -> bool:
    """True when the sentence speaks about the future (plans, will, 打算 …)."""
    return FUTURE_CUES.search(text) is not None


def find_time_expressions(
    text: str, reference: datetime, future: bool | None = None
) -> list[TimeExpression]:
    """Every time expression in ``text``, in text order, resolved against ``reference``."""
    context = Context(reference.date(), is_future(text) if future is None else future)
    found: list[TimeExpression] = []
    taken_until = -1
    for match, handler in _candidates(text):
        if match.start() < taken_until:
            continue
        expression = _resolved(match, handler, context, reference)
        if expression is not None:
            found.append(expression)
            taken_until = match.end()
    return found


def _resolved(
    match: re.Match[str], handler: Handler, context: Context, reference: datetime
) -> TimeExpression | None:
    """The expression anchored; None when it names no date or one off the calendar.

    "Tomorrow" said on 9999-12-31 (or "next month" in December 9999) is no date Python can
    hold: left unresolved, like any other unreadable phrase, instead of failing the block.
    """
    try:
        span = handler(match, context)
        return None if span is None else _anchor(span, match, reference)
    except (OverflowError, ValueError):
        return None


def resolve_time(text: str, reference: datetime, future: bool | None = None) -> TimeExpression:
    """The first time expression of ``text``, or ``UNKNOWN`` when there is none."""
    found = find_time_expressions(text, reference, future)
    return found[0] if found else UNKNOWN


def _candidates(text: str) -> list[tuple[re.Match[str], Handler]]:
    """All rule matches, earliest first and longest first at one position."""
    matches = [
        (match, _HANDLERS[name])
        for name, pattern in (*EN_PATTERNS, *ZH_PATTERNS)
        for match in pattern.finditer(text)
    ]
    return sorted(matches, key=lambda item: (item[0].start(), -len(item[0].group(0))))


def _anchor(span: Span, match: re.Match[str], reference: datetime) -> TimeExpression:
    zone = reference.tzinfo
    if span.at is not None:
        start = end = datetime.combine(span.first, span.at, zone)
    else:
        start = datetime.combine(span.first, time(0, 0, 0), zone)
        end = datetime.combine(span.last, time(23, 59, 59), zone)
    text = match.group(0).strip().rstrip(".")
    return TimeExpression(start, end, span.precision, span.basis, text, match.start())


# --- rule handlers ----------------------------------------------------------------------


def _en_number(word: str) -> int | None:
    word = " ".join(word.lower().split())
    return int(word) if word.isdigit() else EN_NUMBERS.get(word)


def _month_number(word: str) -> int | None:
    return EN_MONTHS.get(word.lower().rstrip("."))


def _is_modal(word: str) -> bool:
    """Lower-case "may"/"march" are a verb, not a month."""
    return word in ("may", "march")


def _h_iso(match: re.Match[str], ctx: Context) -> Span | None:
    day = safe_date(int(match["y"]), int(match["m"]), int(match["d"]))
    if day is None:
        return None
    if match["hh"] is None:
        return day_span(day, "explicit")
    return Span(day, day, "instant", "explicit", time(int(match["hh"]), int(match["mm"])))


def _h_date(match: re.Match[str], ctx: Context) -> Span | None:
    month = _month_number(match["mon"])
    if month is None or _is_modal(match["mon"]):
        return None
    day, year = int(match["d"]), match.groupdict().get("y")
    if year:
        found = safe_date(int(year), month, day)
        return day_span(found, "explicit") if found else None
    found = safe_date(nearest_year(ctx.today, month, day, ctx.future), month, day)
    return day_span(found, "inferred") if found else None


def _h_month_year(match: re.Match[str], ctx: Context) -> Span | None:
    month = _month_number(match["mon"])
    if month is None or _is_modal(match["mon"]):
        return None
    year = match.groupdict().get("y")
    if year:
        return month_span(int(year), month, basis="explicit")
    nearest = nearest_year(ctx.today, month, 1 if ctx.future else 0, ctx.future)
    return month_span(nearest, month, basis="inferred")


def _h_year(match: re.Match[str], ctx: Context) -> Span | None:
    return year_span(int(match["y"]), "explicit")


def _h_season(match: re.Match[str], ctx: Context) -> Span | None:
    name, groups = match["season"].lower(), match.groupdict()
    if groups.get("y"):
        return season_span(name, int(groups["y"]), "explicit")
    current = current_season_year(name, ctx.today)
    inside = season_span(name, current).last >= ctx.today
    offset = {"last": -1 if inside else 0, "past": -1 if inside else 0, "this": 0, "next": 1}
    shift = offset[groups["rel"].lower()]
    if groups["rel"].lower() == "this" and ctx.future and not inside:
        shift = 1
    return season_span(name, current + shift)


def _h_day_word(match: re.Match[str], ctx: Context) -> Span | None:
    word = " ".join(match.group(0).lower().split())
    offsets = {"the day before yesterday": -2, "the day after tomorrow": 2, "yesterday": -1}
    offsets |= {"last night": -1, "tomorrow": 1}
    return day_span(ctx.today + timedelta(days=offsets.get(word, 0)))


def _h_ago(match: re.Match[str], ctx: Context) -> Span | None:
    """``N units ago/back/earlier`` (past), ``N units from now`` and ``in N units`` (future)."""
    unit = match["unit"].lower()
    direction = (match.groupdict().get("dir") or "from now").lower()
    sign = 1 if direction.startswith("from") else -1
    amount = _en_number(match["n"])
    if amount is None:
        return few_range(ctx.today, unit, future=sign > 0)
    return unit_offset(ctx.today, unit, sign * amount)


def _h_other_day(match: re.Match[str], ctx: Context) -> Span | None:
    return Span(ctx.today - timedelta(days=7), ctx.today - timedelta(days=1), "range")


def _h_relative_unit(match: re.Match[str], ctx: Context) -> Span | None:
    rel = " ".join((match.groupdict().get("rel") or "before last").lower().split())
    offsets = {"this": 0, "next": 1, "the following": 1, "before last": -2}
    return unit_offset(ctx.today, match["unit"].lower(), offsets.get(rel, -1))


def _h_weekend(match: re.Match[str], ctx: Context) -> Span | None:
    groups = match.groupdict()
    if groups.get("n"):
        amount = _en_number(groups["n"])
        return None if amount is None else weekend_span(ctx.today, -amount)
    rel = " ".join(groups["rel"].lower().split())
    if rel in ("this", "next"):
        return weekend_span(ctx.today, 0 if rel == "this" else 1)
    if rel in ("over the", "on the", "the"):
        return _nearest_weekend(ctx)
    return weekend_span(ctx.today, -1)


def _nearest_weekend(ctx: Context) -> Span:
    """ "the weekend": this week's when future or already begun, else last week's."""
    begun = ctx.today.weekday() >= 5
    return weekend_span(ctx.today, 0 if ctx.future or begun else -1)


def _h_weekday(match: re.Match[str], ctx: Context) -> Span | None:
    weekday = WEEKDAYS[match["wd"].lower().rstrip(".")]
    rel = match["rel"].lower()
    if rel == "this":
        return day_span(week_span(ctx.today, 0).first + timedelta(days=weekday))
    if rel == "next" or (rel == "on" and ctx.future):
        return day_span(weekday_after(ctx.today, weekday))
    return day_span(weekday_before(ctx.today, weekday))


def _h_zh_full_date(match: re.Match[str], ctx: Context) -> Span | None:
    month, day = zh_number(match["m"]), zh_number(match["d"])
    if match["y"]:
        found = safe_date(int(match["y"]), month, day)
        return day_span(found, "explicit") if found else None
    found = safe_date(nearest_year(ctx.today, month, day, ctx.future), month, day)
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
        return _nearest_weekend(ctx)
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


_HANDLERS: dict[str, Handler] = {
    "iso": _h_iso,
    "date": _h_date,
    "month_year": _h_month_year,
    "year": _h_year,
    "season": _h_season,
    "day_word": _h_day_word,
    "ago": _h_ago,
    "other_day": _h_other_day,
    "relative_unit": _h_relative_unit,
    "weekend": _h_weekend,
    "weekday": _h_weekday,
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
