"""The temporal resolver: a table of English and Chinese expressions at fixed reference times."""

from datetime import UTC, datetime, timedelta, timezone

import pytest

from stratagate_plugin.core.text.temporal.resolve import (
    UNKNOWN,
    find_time_expressions,
    resolve_time,
)

THURSDAY = datetime(2023, 7, 20, 20, 56, tzinfo=UTC)  # Thursday 20 July 2023
MONDAY = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)  # Monday 8 May 2023

TABLE = [
    # text, reference, first day, last day, precision, basis
    ("I went there yesterday", THURSDAY, "2023-07-19", "2023-07-19", "day", "relative"),
    ("We talked today", THURSDAY, "2023-07-20", "2023-07-20", "day", "relative"),
    ("I'll call tomorrow", THURSDAY, "2023-07-21", "2023-07-21", "day", "relative"),
    ("Last night was fun", THURSDAY, "2023-07-19", "2023-07-19", "day", "relative"),
    ("the day before yesterday", THURSDAY, "2023-07-18", "2023-07-18", "day", "relative"),
    ("I went two days ago", THURSDAY, "2023-07-18", "2023-07-18", "day", "relative"),
    ("3 weeks ago", THURSDAY, "2023-06-26", "2023-07-02", "range", "relative"),
    ("last week", THURSDAY, "2023-07-10", "2023-07-16", "range", "relative"),
    ("this week", THURSDAY, "2023-07-17", "2023-07-23", "range", "relative"),
    ("next week", THURSDAY, "2023-07-24", "2023-07-30", "range", "relative"),
    ("the week before last", THURSDAY, "2023-07-03", "2023-07-09", "range", "relative"),
    ("last weekend", THURSDAY, "2023-07-15", "2023-07-16", "range", "relative"),
    ("last weekend", MONDAY, "2023-05-06", "2023-05-07", "range", "relative"),
    ("two weekends ago", MONDAY, "2023-04-29", "2023-04-30", "range", "relative"),
    ("last Friday", THURSDAY, "2023-07-14", "2023-07-14", "day", "relative"),
    ("last Tues", THURSDAY, "2023-07-18", "2023-07-18", "day", "relative"),
    ("last Monday", MONDAY, "2023-05-01", "2023-05-01", "day", "relative"),
    ("next Monday", THURSDAY, "2023-07-24", "2023-07-24", "day", "relative"),
    ("this Saturday", THURSDAY, "2023-07-22", "2023-07-22", "day", "relative"),
    ("last month", THURSDAY, "2023-06-01", "2023-06-30", "month", "relative"),
    ("next month", THURSDAY, "2023-08-01", "2023-08-31", "month", "relative"),
    ("last year", THURSDAY, "2022-01-01", "2022-12-31", "year", "relative"),
    ("last summer", THURSDAY, "2022-06-01", "2022-08-31", "range", "relative"),
    ("a few days ago", THURSDAY, "2023-07-15", "2023-07-18", "range", "relative"),
    ("in 2022", THURSDAY, "2022-01-01", "2022-12-31", "year", "explicit"),
    ("in May 2023", THURSDAY, "2023-05-01", "2023-05-31", "month", "explicit"),
    ("on 8 May 2023", THURSDAY, "2023-05-08", "2023-05-08", "day", "explicit"),
    ("on May 8th, 2023", THURSDAY, "2023-05-08", "2023-05-08", "day", "explicit"),
    ("May 8", THURSDAY, "2023-05-08", "2023-05-08", "day", "inferred"),
    ("We will meet on August 2", THURSDAY, "2023-08-02", "2023-08-02", "day", "inferred"),
    ("we visited in September", THURSDAY, "2022-09-01", "2022-09-30", "month", "inferred"),
    ("2023-05-08", THURSDAY, "2023-05-08", "2023-05-08", "day", "explicit"),
    ("the summer of 2022", THURSDAY, "2022-06-01", "2022-08-31", "range", "explicit"),
    ("昨天", THURSDAY, "2023-07-19", "2023-07-19", "day", "relative"),
    ("前天", THURSDAY, "2023-07-18", "2023-07-18", "day", "relative"),
    ("今天", THURSDAY, "2023-07-20", "2023-07-20", "day", "relative"),
    ("明天", THURSDAY, "2023-07-21", "2023-07-21", "day", "relative"),
    ("三天前", THURSDAY, "2023-07-17", "2023-07-17", "day", "relative"),
    ("两周前", THURSDAY, "2023-07-03", "2023-07-09", "range", "relative"),
    ("几天前", THURSDAY, "2023-07-15", "2023-07-18", "range", "relative"),
    ("上周", THURSDAY, "2023-07-10", "2023-07-16", "range", "relative"),
    ("上周五", THURSDAY, "2023-07-14", "2023-07-14", "day", "relative"),
    (
        "上周五",
        datetime(2023, 7, 15, 12, tzinfo=UTC),
        "2023-07-07",
        "2023-07-07",
        "day",
        "relative",
    ),
    ("上周末", THURSDAY, "2023-07-15", "2023-07-16", "range", "relative"),
    ("下周一", THURSDAY, "2023-07-24", "2023-07-24", "day", "relative"),
    ("上个月", THURSDAY, "2023-06-01", "2023-06-30", "month", "relative"),
    ("下个月", THURSDAY, "2023-08-01", "2023-08-31", "month", "relative"),
    ("去年", THURSDAY, "2022-01-01", "2022-12-31", "year", "relative"),
    ("去年夏天", THURSDAY, "2022-06-01", "2022-08-31", "range", "relative"),
    ("2022年", THURSDAY, "2022-01-01", "2022-12-31", "year", "explicit"),
    ("2023年5月", THURSDAY, "2023-05-01", "2023-05-31", "month", "explicit"),
    ("2023年5月8日", THURSDAY, "2023-05-08", "2023-05-08", "day", "explicit"),
    ("5月8日", THURSDAY, "2023-05-08", "2023-05-08", "day", "inferred"),
    ("十二月三号", THURSDAY, "2022-12-03", "2022-12-03", "day", "inferred"),
]


@pytest.mark.parametrize(("text", "reference", "first", "last", "precision", "basis"), TABLE)
def test_resolve_time_table(
    text: str, reference: datetime, first: str, last: str, precision: str, basis: str
) -> None:
    found = resolve_time(text, reference)
    assert found.start is not None and found.end is not None
    assert (found.start.date().isoformat(), found.end.date().isoformat()) == (first, last)
    assert (found.precision, found.basis) == (precision, basis)
    assert found.original_text and found.original_text in text


@pytest.mark.parametrize(
    "text", ["I may go there", "Hello, how are you?", "我们聊聊吧", "It costs 2022 dollars", ""]
)
def test_resolve_time_without_expression_is_unknown(text: str) -> None:
    assert resolve_time(text, THURSDAY) == UNKNOWN
    assert UNKNOWN.as_temporal() == {"precision": "unknown", "basis": "unknown"}


def test_resolve_time_interval_is_inclusive_in_reference_timezone() -> None:
    shanghai = timezone(timedelta(hours=8))
    found = resolve_time("yesterday", datetime(2023, 7, 20, 1, 0, tzinfo=shanghai))
    fields = found.as_temporal()
    assert fields["happened_start"] == "2023-07-19T00:00:00+08:00"
    assert fields["happened_end"] == "2023-07-19T23:59:59+08:00"
    assert fields["original_text"] == "yesterday"


def test_resolve_time_iso_with_clock_is_an_instant() -> None:
    found = resolve_time("deploy at 2023-05-08 14:30", THURSDAY)
    assert found.precision == "instant" and found.start == found.end
    assert found.describe() == "2023-05-08 14:30"


def test_find_time_expressions_in_text_order_without_overlaps() -> None:
    found = find_time_expressions("Yesterday we met, and on 8 May 2023 we signed.", THURSDAY)
    assert [e.original_text for e in found] == ["Yesterday", "8 May 2023"]
    assert [e.describe() for e in found] == ["2023-07-19", "2023-05-08"]
