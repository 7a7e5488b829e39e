"""Timestamps: always timezone-aware, stored as UTC ISO-8601 with an explicit offset.

``utc_now`` is the one source of "now" (a few callers take a ``clock`` argument defaulting
to it), so a test harness can pin time with ``use_test_clock`` and every screen it
pictures shows the same times on every run. Nothing but a test calls it: no setting or
variable of the user's turns it on.
"""

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Annotated

from pydantic import AfterValidator

_test_clock: Callable[[], datetime] | None = None


def utc_now() -> datetime:
    if _test_clock is not None:
        return to_utc(_test_clock())
    return datetime.now(UTC)


def use_test_clock(clock: Callable[[], datetime] | None) -> None:
    """Tests only: read "now" from ``clock`` (``None``: the system clock again)."""
    global _test_clock
    _test_clock = clock


def clock_is_fixed() -> bool:
    return _test_clock is not None


def to_utc(moment: datetime) -> datetime:
    """Naive datetimes are taken as UTC; aware ones are converted to UTC."""
    if moment.tzinfo is None:
        return moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)


def iso(moment: datetime) -> str:
    """``2024-05-01T12:00:00+00:00`` (microseconds kept only when present)."""
    return to_utc(moment).isoformat()


def parse_iso(text: str) -> datetime:
    """Parse ISO-8601 (a trailing ``Z`` allowed); the result is UTC-aware."""
    cleaned = text.strip()
    if cleaned.endswith(("Z", "z")):
        cleaned = cleaned[:-1] + "+00:00"
    return to_utc(datetime.fromisoformat(cleaned))


UtcDatetime = Annotated[datetime, AfterValidator(lambda moment: to_utc(moment))]
"""A record's timestamp: parsed from ISO-8601 text or taken as given, always in UTC."""
