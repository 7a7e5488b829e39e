"""The harness's times: timezone-aware, written as UTC ISO-8601 with an explicit offset."""

from datetime import UTC, datetime


def utc_now() -> datetime:
    return datetime.now(UTC)


def iso(moment: datetime) -> str:
    """``2024-05-01T12:00:00+00:00``; a naive moment is taken as UTC."""
    return _in_utc(moment).isoformat()


def parse_iso(text: str) -> datetime:
    """ISO-8601 (a trailing ``Z`` allowed) as a UTC-aware moment."""
    return _in_utc(datetime.fromisoformat(text.strip()))


def _in_utc(moment: datetime) -> datetime:
    aware = moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
    return aware.astimezone(UTC)
