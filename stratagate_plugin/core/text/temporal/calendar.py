"""Calendar arithmetic for ``resolve``: date spans for days, weeks, months, seasons.

Weeks run Monday–Sunday; seasons are meteorological (northern hemisphere). A part of a
month ("the end of May", 5月底, 下旬) is one of its thirds, as the Chinese 上旬/中旬/下旬 are:
days 1–10, 11–20, 21 to the last. A part of a year is its first quarter, May–August, or
its last quarter.
"""

import calendar
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, time, timedelta
from typing import Literal

from .patterns import SEASON_MONTHS

Precision = Literal["instant", "day", "month", "year", "range", "unknown"]
Basis = Literal["explicit", "relative", "inferred", "unknown"]
FEW = (2, 5)


@dataclass(frozen=True)
class Span:
    """A date interval before it is anchored to a timezone."""

    first: date
    last: date
    precision: Precision
    basis: Basis = "relative"
    at: time | None = None


@dataclass(frozen=True)
class Context:
    """What a rule resolves against: the reference day and time, and the sentence's tense."""

    today: date
    future: bool
    now: time = time(12, 0)
    past: bool = True  # False: nothing in the sentence says it is over (no past verb)


Handler = Callable[[re.Match[str], Context], Span | None]
PART_OF_MONTH = {"beginning": (1, 10), "middle": (11, 20), "end": (21, 31)}
PART_OF_YEAR = {"beginning": (1, 3), "middle": (5, 8), "end": (10, 12)}


def day_span(day: date, basis: Basis = "relative") -> Span:
    return Span(day, day, "day", basis)


def week_span(today: date, offset: int) -> Span:
    monday = today - timedelta(days=today.weekday()) + timedelta(weeks=offset)
    return Span(monday, monday + timedelta(days=6), "range")


def weekend_span(today: date, offset: int) -> Span:
    week = week_span(today, offset)
    return Span(week.first + timedelta(days=5), week.last, "range")


def month_span(year: int, month: int, offset: int = 0, basis: Basis = "relative") -> Span:
    index = year * 12 + month - 1 + offset
    year, month = divmod(index, 12)
    last = calendar.monthrange(year, month + 1)[1]
    return Span(date(year, month + 1, 1), date(year, month + 1, last), "month", basis)


def year_span(year: int, basis: Basis = "relative") -> Span:
    return Span(date(year, 1, 1), date(year, 12, 31), "year", basis)


def season_span(season: str, year: int, basis: Basis = "relative") -> Span:
    """Meteorological season; winter of ``year`` starts in its December."""
    first_month = SEASON_MONTHS[season]
    start = month_span(year, first_month, basis=basis)
    end = month_span(year, first_month, 2, basis)
    return Span(start.first, end.last, "range", basis)


def current_season_year(season: str, today: date) -> int:
    """The year of the latest occurrence of ``season`` that has begun by ``today``."""
    begun = (today.month, today.day) >= (SEASON_MONTHS[season], 1)
    return today.year if begun else today.year - 1


def nearest_weekend(ctx: Context) -> Span:
    """ "the weekend": this week's when future or already begun, else last week's."""
    begun = ctx.today.weekday() >= 5
    return weekend_span(ctx.today, 0 if ctx.future or begun else -1)


def weekday_before(today: date, weekday: int) -> date:
    return today - timedelta(days=(today.weekday() - weekday - 1) % 7 + 1)


def weekday_after(today: date, weekday: int) -> date:
    return today + timedelta(days=(weekday - today.weekday() - 1) % 7 + 1)


def nearest_year(today: date, month: int, day: int, future: bool, past: bool = True) -> int:
    """The year that puts month/day nearest to today in the tense's direction. With no
    tense either way ("the party is on 14 November") a day in the coming three months is
    that one (people name what is coming up); a farther one is the past one, as before."""
    ahead = today.year if (month, day) >= (today.month, today.day) else today.year + 1
    if not future and not past and 0 <= _days_between(today, ahead, month, day) <= SOON_DAYS:
        return ahead
    if future:
        return today.year if (month, day) >= (today.month, today.day) else today.year + 1
    return today.year if (month, day) <= (today.month, today.day) else today.year - 1


SOON_DAYS = 92


def _days_between(today: date, year: int, month: int, day: int) -> int:
    found = safe_date(year, month, min(day, 28) if month == 2 else day)
    return (found - today).days if found else 10**6


def safe_date(year: int, month: int, day: int) -> date | None:
    try:
        return date(year, month, day)
    except ValueError:
        return None


def few_range(today: date, unit: str, future: bool = False) -> Span:
    """ "a few days ago" → 2–5 days back (weeks/months/years likewise), precision range."""
    near, far = FEW
    sign = 1 if future else -1
    edges = [_shift(today, unit, sign * near), _shift(today, unit, sign * far)]
    first, last = min(edges), max(edges)
    first, last = _unit_span(first, unit).first, _unit_span(last, unit).last
    return Span(first, last, "range")


def _shift(today: date, unit: str, amount: int) -> date:
    if unit == "day":
        return today + timedelta(days=amount)
    if unit == "week":
        return today + timedelta(weeks=amount)
    months = month_span(today.year, today.month, amount * (12 if unit == "year" else 1))
    return months.first


def _unit_span(day: date, unit: str) -> Span:
    if unit == "day":
        return day_span(day)
    if unit == "week":
        return week_span(day, 0)
    if unit == "month":
        return month_span(day.year, day.month)
    return year_span(day.year)


def unit_offset(today: date, unit: str, amount: int) -> Span:
    """The day/week/month/year ``amount`` units from today (negative = ago)."""
    if unit == "week":
        return week_span(today, amount)
    return _unit_span(_shift(today, unit, amount), unit)


def month_part(year: int, month: int, part: str, basis: Basis = "relative") -> Span:
    """A third of the month: ``part`` is beginning, middle or end."""
    first, last = PART_OF_MONTH[part]
    length = calendar.monthrange(year, month)[1]
    return Span(date(year, month, first), date(year, month, min(last, length)), "range", basis)


def year_part(year: int, part: str, basis: Basis = "relative") -> Span:
    """The first quarter, May–August, or the last quarter of ``year``."""
    first, last = PART_OF_YEAR[part]
    return Span(month_span(year, first).first, month_span(year, last).last, "range", basis)


def day_in_month(today: date, day: int, future: bool) -> date | None:
    """ "the 15th": this month's, unless that lies against the tense (then the month before
    or after); None when the nearest such month has no such day."""
    offset = 0
    if future and day < today.day:
        offset = 1
    elif not future and day > today.day:
        offset = -1
    month = month_span(today.year, today.month, offset).first
    return safe_date(month.year, month.month, day)
