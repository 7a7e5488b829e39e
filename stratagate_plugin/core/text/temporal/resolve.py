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
  → basis explicit. A day or month without a year ("April 20th", "to May", 5月) takes the
  nearest year in the direction of the sentence's tense (past unless a future cue is
  present: will, plans "for"/定在, a reschedule "to May"/改到 …): basis inferred.
* numeric dates, ordinal days, parts of months and years ("the end of the month", 月底,
  下旬), fortnights: ``day_rules``; times of day and "tomorrow at 3pm": ``times_of_day``.
"""

import re
from dataclasses import dataclass
from datetime import datetime, time, timedelta

from .calendar import (
    Basis,
    Context,
    Handler,
    Precision,
    Span,
    current_season_year,
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
from .day_rules import DAY_HANDLERS, fortnights_as_weeks
from .holidays import HOLIDAY_HANDLERS
from .patterns import (
    CLOCK_PATTERNS,
    EN_DAY_PATTERNS,
    EN_MONTHS,
    EN_NUMBERS,
    EN_PATTERNS,
    FUTURE_CUES,
    PAST_CUES,
    WEEKDAYS,
    ZH_DAY_PATTERNS,
    ZH_PATTERNS,
)
from .times_of_day import CLOCK_HANDLERS, CLOCK_RULES, joins
from .zh_rules import ZH_HANDLERS

__all__ = [
    "UNKNOWN",
    "Basis",
    "Precision",
    "TimeExpression",
    "find_time_expressions",
    "names_a_time",
]
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


def is_future(text: str) -> bool:
    """True when the sentence speaks about the future (plans, will, 打算 …)."""
    return FUTURE_CUES.search(text) is not None


def find_time_expressions(
    text: str, reference: datetime, future: bool | None = None
) -> list[TimeExpression]:
    """Every time expression in ``text``, in text order, resolved against ``reference``."""
    tense = is_future(text) if future is None else future
    context = Context(reference.date(), tense, reference.time(), PAST_CUES.search(text) is not None)
    found: list[tuple[str, TimeExpression]] = []
    taken_until = -1
    for match, rule in _candidates(text):
        if match.start() < taken_until:
            continue
        expression = _resolved(match, _HANDLERS[rule], context, reference)
        if expression is not None:
            found.append((rule, expression))
            taken_until = match.end()
    return _joined(text, found)


def names_a_time(text: str) -> bool:
    """Whether any rule matches ``text``: without a match ``find_time_expressions`` finds
    nothing whatever the reference, so a caller need not read one (a search's "now")."""
    return any(pattern.search(text) for _, pattern in _TABLE)


def _joined(text: str, found: list[tuple[str, TimeExpression]]) -> list[TimeExpression]:
    """A day and a time of day side by side ("tomorrow at 3pm", 明天下午3点) are one instant."""
    out: list[tuple[str, TimeExpression]] = []
    for rule, expression in found:
        if out and _day_and_clock(text, out[-1], (rule, expression)):
            out[-1] = ("joined", _join(text, out[-1], (rule, expression)))
        else:
            out.append((rule, expression))
    return [expression for _, expression in out]


def _day_and_clock(
    text: str, first: tuple[str, TimeExpression], second: tuple[str, TimeExpression]
) -> bool:
    clocks = [rule in CLOCK_RULES for rule, _ in (first, second)]
    day = second[1] if clocks[0] else first[1]
    if clocks[0] == clocks[1] or day.precision != "day":
        return False
    return joins(text[_end(first[1]) : second[1].position])


def _join(
    text: str, first: tuple[str, TimeExpression], second: tuple[str, TimeExpression]
) -> TimeExpression:
    clock, day = (first[1], second[1]) if first[0] in CLOCK_RULES else (second[1], first[1])
    assert clock.start is not None and day.start is not None  # both resolved
    moment = datetime.combine(day.start.date(), clock.start.timetz())
    words = text[first[1].position : _end(second[1])]
    return TimeExpression(moment, moment, "instant", day.basis, words, first[1].position)


def _end(expression: TimeExpression) -> int:
    return expression.position + len(expression.original_text)


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


_TABLE = (*EN_PATTERNS, *EN_DAY_PATTERNS, *ZH_PATTERNS, *ZH_DAY_PATTERNS, *CLOCK_PATTERNS)


def _candidates(text: str) -> list[tuple[re.Match[str], str]]:
    """All rule matches (with their rule's name), earliest first and longest first at one
    position."""
    matches = [(match, name) for name, pattern in _TABLE for match in pattern.finditer(text)]
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
    found = safe_date(nearest_year(ctx.today, month, day, ctx.future, ctx.past), month, day)
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
    rel = (groups.get("rel") or "this").lower()  # "over the summer": this one
    shift = offset[rel]
    if rel == "this" and ctx.future and not inside:
        shift = 1
    return season_span(name, current + shift)


def _h_day_word(match: re.Match[str], ctx: Context) -> Span | None:
    word = " ".join(match.group(0).lower().split())
    offsets = {"the day before yesterday": -2, "the day after tomorrow": 2, "yesterday": -1}
    offsets |= {"last night": -1, "tomorrow": 1, "the night before last": -2}
    return day_span(ctx.today + timedelta(days=offsets.get(word, 0)))


def _h_ago(match: re.Match[str], ctx: Context) -> Span | None:
    """``N units ago/back/earlier`` (past), ``N units from now`` and ``in N units`` (future)."""
    direction = (match.groupdict().get("dir") or "from now").lower()
    sign = 1 if direction.startswith("from") else -1
    unit, amount = fortnights_as_weeks(match["unit"].lower(), _en_number(match["n"]))
    unit = "day" if unit == "night" else unit
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
    if groups.get("rel") is None:  # "the weekend before last"
        return weekend_span(ctx.today, -2)
    rel = " ".join(groups["rel"].lower().split())
    if rel in ("this coming", "coming", "upcoming"):
        return weekend_span(ctx.today, 0 if ctx.today.weekday() < 5 else 1)
    if rel in ("this", "next"):
        return weekend_span(ctx.today, 0 if rel == "this" else 1)
    if rel in ("over the", "on the", "the"):
        return nearest_weekend(ctx)
    return weekend_span(ctx.today, -1)


def _h_weekday(match: re.Match[str], ctx: Context) -> Span | None:
    weekday = WEEKDAYS[match["wd"].lower().rstrip(".")]
    rel = match["rel"].lower()
    if rel == "this":
        return day_span(week_span(ctx.today, 0).first + timedelta(days=weekday))
    if rel == "next" or (rel == "on" and ctx.future):
        return day_span(weekday_after(ctx.today, weekday))
    return day_span(weekday_before(ctx.today, weekday))


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
    **ZH_HANDLERS,
    **DAY_HANDLERS,
    **HOLIDAY_HANDLERS,
    **CLOCK_HANDLERS,
}
