"""What a person filters the event timeline by (spec §13 长期记忆), checked once.

The web page and any other caller build a ``TimelineFilter`` from loose text; a bad date,
status, source or type is an ``InvalidInput`` (a 400 page), never an empty list. Time
bounds become ISO strings compared with each event's chronology (happened ?? mentioned ??
created): a date bound covers its whole day, ``until`` is turned into an exclusive bound.
"""

from datetime import date, datetime, timedelta
from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict

from ..clock import iso, parse_iso
from ..errors import InvalidInput
from ..events.cards import EVENT_TYPES

StatusFilter = Literal["live", "active", "superseded", "forgotten", "archived", "all"]
SourceFilter = Literal["conversation", "agent"]
STATUS_FILTERS: tuple[StatusFilter, ...] = get_args(StatusFilter)
SOURCE_FILTERS: tuple[SourceFilter, ...] = get_args(SourceFilter)
LIVE_STATUSES = ("active", "superseded")
EVERY_STATUS = ("active", "superseded", "forgotten", "archived")
PAGE_SIZE = 40


class TimelineFilter(BaseModel):
    """One timeline query. ``low``/``high`` are the chronology bounds (``high`` exclusive)."""

    model_config = ConfigDict(frozen=True)

    namespace: str
    text: str = ""
    low: str | None = None
    high: str | None = None
    participant: str = ""
    event_type: str | None = None
    status: StatusFilter = "live"
    source: SourceFilter | None = None

    @property
    def statuses(self) -> tuple[str, ...]:
        if self.status == "live":
            return LIVE_STATUSES
        return EVERY_STATUS if self.status == "all" else (self.status,)


def timeline_filter(
    space: str,
    *,
    text: str = "",
    since: str = "",
    until: str = "",
    participant: str = "",
    event_type: str = "",
    status: str = "",
    source: str = "",
) -> TimelineFilter:
    """A filter from a page's query parameters (blank means "any")."""
    return TimelineFilter(
        namespace=space,
        text=text.strip(),
        low=_bound("since", since, end=False),
        high=_bound("until", until, end=True),
        participant=participant.strip(),
        event_type=_choice("type", event_type, EVENT_TYPES),
        status=_choice("status", status, STATUS_FILTERS) or "live",  # type: ignore[arg-type]
        source=_choice("source", source, SOURCE_FILTERS),  # type: ignore[arg-type]
    )


def _choice(label: str, value: str, allowed: tuple[str, ...]) -> str | None:
    value = value.strip()
    if not value:
        return None
    if value not in allowed:
        raise InvalidInput(f"{label} must be one of {', '.join(allowed)}, not {value!r}")
    return value


def _bound(label: str, value: str, *, end: bool) -> str | None:
    """A date covers its day (``until`` 2026-04-30 → before 2026-05-01); a time is exact."""
    value = value.strip()
    if not value:
        return None
    try:
        if len(value) == 10:
            day = date.fromisoformat(value)
            return (day + timedelta(days=1)).isoformat() if end else day.isoformat()
        moment = parse_iso(value)
    except ValueError:
        raise InvalidInput(f"{label} must be an ISO-8601 date or time, not {value!r}") from None
    return iso(moment + timedelta(microseconds=1)) if end else iso(moment)


def parse_moment(label: str, value: str) -> datetime | None:
    """An optional ISO date or time typed by a person (a date is its midnight, UTC)."""
    value = value.strip()
    if not value:
        return None
    try:
        return parse_iso(value)
    except ValueError:
        raise InvalidInput(f"{label} must be an ISO-8601 date or time, not {value!r}") from None
