"""Times of day for ``resolve`` ("3pm", "15:30", "noon", 下午3点, 三点半) and their joining to
an adjacent day ("tomorrow at 3pm", 明天下午三点) into one instant.

A time alone is on the reference day, or the next day when the sentence looks ahead and the
time has already passed. Bare hours ("at 8") and 3点 without a period or minutes are not
read: they are as often counts or scores as times. Colon times keep their hour (``2:30`` is
02:30); a period word (下午, 晚上) or am/pm moves it into the afternoon.
"""

import re
from datetime import time, timedelta

from .calendar import Context, Handler, Span
from .patterns import zh_number

CLOCK_RULES = frozenset({"clock", "zh_clock"})
_AFTERNOON = frozenset({"下午", "傍晚", "晚上", "夜里"})
_WORDS = {"noon": time(12, 0), "midday": time(12, 0), "midnight": time(0, 0)}
# what may stand between a day and its time: "tomorrow at 3pm", "Friday, 10:00", 明天下午3点
_JOIN = re.compile(r"^[\s,]*(?:at|@|around|by|from|on|的)?[\s,]*$", re.IGNORECASE)


def clock_span(at: time, ctx: Context) -> Span:
    """``at`` on the reference day, or the next day when a plan names a time already past."""
    day = ctx.today + timedelta(days=1) if ctx.future and at < ctx.now else ctx.today
    return Span(day, day, "instant", "relative", at)


def _h_clock(match: re.Match[str], ctx: Context) -> Span | None:
    groups = match.groupdict()
    if groups.get("word"):
        return clock_span(_WORDS[match["word"].lower()], ctx)
    hour, minute = int(match["hh"]), int(groups.get("mm") or 0)
    if groups.get("ampm"):
        hour = hour % 12 + (12 if match["ampm"].lower() == "p" else 0)
    return clock_span(time(hour, minute), ctx)


def _h_zh_clock(match: re.Match[str], ctx: Context) -> Span | None:
    groups = match.groupdict()
    hour = zh_number(match["hh"])
    minute = 30 if groups.get("half") else zh_number(groups["mm"]) if groups.get("mm") else 0
    period = groups.get("period") or ""
    if (period in _AFTERNOON or (period == "中午" and hour < 6)) and hour < 12:
        hour += 12
    if period == "半夜" and hour == 12:
        hour = 0
    if not (0 <= hour <= 23 and 0 <= minute <= 59):
        return None
    return clock_span(time(hour, minute), ctx)


def joins(between: str) -> bool:
    """True when the text between a day and a time lets them read as one moment."""
    return _JOIN.match(between) is not None


CLOCK_HANDLERS: dict[str, Handler] = {"clock": _h_clock, "zh_clock": _h_zh_clock}
