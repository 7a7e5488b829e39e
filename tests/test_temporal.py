"""The temporal resolver: a table of English and Chinese expressions at fixed reference times."""

from datetime import UTC, datetime, timedelta, timezone

import pytest

from stratagate_plugin.core.events.cards import happened_label
from stratagate_plugin.core.text.temporal.resolve import (
    UNKNOWN,
    find_time_expressions,
    names_a_time,
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


# Said on Tuesday 1 December 2026 (issue #14): plans look ahead, and the expressions that
# were not recognised before.
SAID = datetime(2026, 12, 1, 10, 0, tzinfo=UTC)
SAID_ON_1_DECEMBER = [
    # text, first day, last day, precision, basis
    ("We planned the product launch for April 20th", "2027-04-20", "2027-04-20", "day", "inferred"),
    ("The demo is scheduled for March 3", "2027-03-03", "2027-03-03", "day", "inferred"),
    ("Actually we moved the launch to May", "2027-05-01", "2027-05-31", "month", "inferred"),
    ("I moved to Lisbon in May", "2026-05-01", "2026-05-31", "month", "inferred"),
    ("We went to Rome in April", "2026-04-01", "2026-04-30", "month", "inferred"),
    ("The invoice is dated 12/05/2026", "2026-12-05", "2026-12-05", "day", "explicit"),
    ("The invoice is dated 25/12/2026", "2026-12-25", "2026-12-25", "day", "explicit"),
    ("The invoice is dated 12/25/26", "2026-12-25", "2026-12-25", "day", "explicit"),
    ("The invoice is dated 12.05.2026", "2026-05-12", "2026-05-12", "day", "explicit"),
    ("I paid it on 11/20", "2026-11-20", "2026-11-20", "day", "inferred"),
    ("I'll pay by the end of the month", "2026-12-21", "2026-12-31", "range", "relative"),
    ("It ships at the end of next month", "2027-01-21", "2027-01-31", "range", "relative"),
    ("We will launch at the beginning of May", "2027-05-01", "2027-05-10", "range", "inferred"),
    ("It ended in the middle of May 2025", "2025-05-11", "2025-05-20", "range", "explicit"),
    ("We hope to finish by the end of the year", "2026-10-01", "2026-12-31", "range", "relative"),
    ("We will meet on the 15th", "2026-12-15", "2026-12-15", "day", "relative"),
    ("I paid the rent on the 15th", "2026-11-15", "2026-11-15", "day", "relative"),
    ("I saw her a fortnight ago", "2026-11-16", "2026-11-22", "range", "relative"),
    ("We'll know in a fortnight", "2026-12-14", "2026-12-20", "range", "relative"),
    ("It rained all last fortnight", "2026-11-16", "2026-11-29", "range", "relative"),
    ("Call me tomorrow at 3pm", "2026-12-02", "2026-12-02", "instant", "relative"),
    ("The call is at 15:30", "2026-12-01", "2026-12-01", "instant", "relative"),
    ("We'll meet at 9am", "2026-12-02", "2026-12-02", "instant", "relative"),
    ("我们把发布会定在4月20日", "2027-04-20", "2027-04-20", "day", "inferred"),
    ("其实发布会改到5月了", "2027-05-01", "2027-05-31", "month", "inferred"),
    ("今年我们去了日本", "2026-01-01", "2026-12-31", "year", "relative"),
    ("明年我们去日本", "2027-01-01", "2027-12-31", "year", "relative"),
    ("房租月底交", "2026-12-21", "2026-12-31", "range", "relative"),
    ("下个月初见", "2027-01-01", "2027-01-10", "range", "relative"),
    ("项目5月下旬上线", "2026-05-21", "2026-05-31", "range", "inferred"),
    ("我们打算年底去日本", "2026-10-01", "2026-12-31", "range", "relative"),
    ("我们打算15号见面", "2026-12-15", "2026-12-15", "day", "relative"),
    ("下个月15号交稿", "2027-01-15", "2027-01-15", "day", "relative"),
    ("明天下午3点开会", "2026-12-02", "2026-12-02", "instant", "relative"),
    # general forms beside the issue's: halves, "the past few", bare weekdays, holidays
    ("I saw it a year and a half ago", "2025-06-01", "2025-06-30", "month", "relative"),
    ("We moved here half a year ago", "2026-06-01", "2026-06-30", "month", "relative"),
    ("I went hiking Saturday", "2026-11-28", "2026-11-28", "day", "relative"),
    ("We will meet Sunday", "2026-12-06", "2026-12-06", "day", "relative"),
    ("It rained the past few days", "2026-11-26", "2026-12-01", "range", "relative"),
    ("I met him the other week", "2026-11-09", "2026-11-29", "range", "relative"),
    ("We went the weekend before last", "2026-11-21", "2026-11-22", "range", "relative"),
    ("Free this coming weekend?", "2026-12-05", "2026-12-06", "range", "relative"),
    ("I slept badly two nights ago", "2026-11-29", "2026-11-29", "day", "relative"),
    ("Couple days ago I ran", "2026-11-29", "2026-11-29", "day", "relative"),
    ("We travelled over the summer", "2026-06-01", "2026-08-31", "range", "relative"),
    ("We met last Christmas", "2025-12-25", "2025-12-25", "day", "relative"),
    ("We'll all meet on Thanksgiving", "2027-11-25", "2027-11-25", "day", "relative"),
    ("一年半前我们搬了家", "2025-06-01", "2025-06-30", "month", "relative"),
    ("两个周末前我们去爬山了", "2026-11-21", "2026-11-22", "range", "relative"),
    ("最近几天一直下雨", "2026-11-26", "2026-12-01", "range", "relative"),
    ("去年圣诞节我们见过", "2025-12-25", "2025-12-25", "day", "relative"),
]


@pytest.mark.parametrize(("text", "first", "last", "precision", "basis"), SAID_ON_1_DECEMBER)
def test_resolve_time_said_on_1_december(
    text: str, first: str, last: str, precision: str, basis: str
) -> None:
    found = resolve_time(text, SAID)
    assert found.start is not None and found.end is not None, text
    assert (found.start.date().isoformat(), found.end.date().isoformat()) == (first, last)
    assert (found.precision, found.basis) == (precision, basis)
    assert found.original_text and found.original_text in text


@pytest.mark.parametrize(
    ("text", "moment"),
    [
        ("Call me tomorrow at 3pm", "2026-12-02 15:00"),
        ("at noon on Friday", "2026-11-27 12:00"),
        ("The call is at 15:30", "2026-12-01 15:30"),
        ("明天下午3点开会", "2026-12-02 15:00"),
        ("晚上八点半吃饭", "2026-12-01 20:30"),
    ],
)
def test_a_time_of_day_joins_its_day_into_one_instant(text: str, moment: str) -> None:
    [found] = find_time_expressions(text, SAID)
    assert found.precision == "instant" and found.describe() == moment


@pytest.mark.parametrize(
    "text",
    [
        "I live on the 15th floor",
        "It was the 3rd time",
        "Take line 1号线 to the museum",
        "我有3点建议",
        "She scored 3/4 of the points",
        "Version 1.2.3 is out",
        "大年初一我们包饺子",
        "三个月中我们都很忙",
        "I bought a Christmas tree",
        "圣诞老人来了",
        "Black Friday deals",
        "On Saturdays I swim",
        "Ana plays tennis every Monday",  # a habit has no date
        "We go hiking each Saturday",
        "I swim every other Sunday",
        "Every Friday we meet",
        "我每周六游泳",
    ],
)
def test_new_rules_leave_look_alikes_alone(text: str) -> None:
    assert find_time_expressions(text, SAID) == []


def test_year_expressions_are_year_intervals_and_listed_as_years() -> None:
    found = resolve_time("今年我们去了日本", SAID)
    assert found.describe() == "2026"
    assert happened_label(found.as_temporal()) == "2026"
    assert (
        happened_label(resolve_time("下个月初见", SAID).as_temporal()) == "2027-01-01..2027-01-10"
    )
    assert happened_label(resolve_time("Call me tomorrow at 3pm", SAID).as_temporal()) == (
        "2026-12-02 15:00"
    )


OCTOBER = datetime(2026, 10, 6, 9, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("text", "day"),
    [
        ("We're throwing a party at the new flat on 14 November.", "2026-11-14"),  # coming up
        ("我们公司12月18日办年会。", "2026-12-18"),
        ("We drive down to Cornwall over Christmas.", "2026-12-25"),
        ("We went to a party on 14 November.", "2025-11-14"),  # a past verb: the past one
        ("12月18日我们办过年会。", "2025-12-18"),
        ("My birthday is on 9 August.", "2026-08-09"),  # ten months ahead: the past one
        ("The shop opens on 3 March.", "2026-03-03"),
    ],
)
def test_a_day_named_without_year_or_tense_is_the_coming_one_when_near(text: str, day: str) -> None:
    found = resolve_time(text, OCTOBER)
    assert found.start is not None and found.start.date().isoformat() == day


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("what did we say about the violin", False),
        ("a with the", False),
        ("what did we say about bradenqu tikaze", False),
        ("what happened in March", True),
        ("what did we do last week", True),
        ("on Friday at 3pm", True),
        ("上周我们说了什么", True),
    ],
)
def test_names_a_time_only_where_a_time_expression_can_be_found(text: str, names: bool) -> None:
    references = [datetime(2024, 5, 1, 12, tzinfo=UTC), datetime(1999, 12, 31, 23, tzinfo=UTC)]
    found = [find_time_expressions(text, reference) for reference in references]
    assert names_a_time(text) == names
    assert all(found) if names else found == [[], []]
