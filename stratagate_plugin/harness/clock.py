"""The harness's times: timezone-aware, written as UTC ISO-8601 with an explicit offset.

A test launcher may pin time with ``use_test_clock`` (as ``core/clock.py`` allows for the
engine) so that pages pictured in screenshots show the same times every run; no setting of
the user's turns it on.
"""

from collections.abc import Callable
from datetime import UTC, datetime

_test_clock: Callable[[], datetime] | None = None


def utc_now() -> datetime:
    if _test_clock is not None:
        return _in_utc(_test_clock())
    return datetime.now(UTC)


def use_test_clock(clock: Callable[[], datetime] | None) -> None:
    """Tests only: read "now" from ``clock`` (``None``: the system clock again)."""
    global _test_clock
    _test_clock = clock


def iso(moment: datetime) -> str:
    """``2024-05-01T12:00:00+00:00``; a naive moment is taken as UTC."""
    return _in_utc(moment).isoformat()


def parse_iso(text: str) -> datetime:
    """ISO-8601 (a trailing ``Z`` allowed) as a UTC-aware moment."""
    return _in_utc(datetime.fromisoformat(text.strip()))


def _in_utc(moment: datetime) -> datetime:
    aware = moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
    return aware.astimezone(UTC)
