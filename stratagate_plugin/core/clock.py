"""Timestamps: always timezone-aware, stored as UTC ISO-8601 with an explicit offset."""

from datetime import UTC, datetime
from typing import Annotated

from pydantic import AfterValidator


def utc_now() -> datetime:
    return datetime.now(UTC)


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
