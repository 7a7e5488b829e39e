"""Time expressions near the calendar's edge (year 1, year 9999): an ingest file may carry
such times, and "tomorrow" said on 9999-12-31 names no date Python can hold."""

from datetime import UTC, datetime

import pytest

from stratagate_plugin.core.text.temporal.resolve import find_time_expressions


@pytest.mark.parametrize(
    ("text", "reference"),
    [
        ("Tomorrow I fly.", datetime(9999, 12, 31, 12, tzinfo=UTC)),
        ("I flew yesterday.", datetime(1, 1, 1, 12, tzinfo=UTC)),
        ("Next month I fly.", datetime(9999, 12, 1, tzinfo=UTC)),
    ],
)
def test_a_time_expression_off_the_calendar_is_left_unresolved(
    text: str, reference: datetime
) -> None:
    assert find_time_expressions(text, reference) == []
