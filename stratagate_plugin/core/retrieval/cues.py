"""What a question says beyond its search words: the time windows it names.

"What did she paint on 13 October 2023?", "in June", "2023年5月8日" name a window in which
the evidence was said or happened. Resolved with ``core.temporal`` against a reference
(the memory's newest message time, so "in June" means the last June before it), a window
lets retrieval favour messages created in it and messages cited by events that happened
in it. The date's words stay in the word query too (on LoCoMo, EN and ZH, dropping them
cost about 0.002 recall@10).
"""

from dataclasses import dataclass
from datetime import datetime

from ..clock import to_utc
from ..text.temporal.resolve import find_time_expressions

_PRECISIONS = frozenset({"instant", "day", "month", "year", "range"})


@dataclass(frozen=True)
class Window:
    """An inclusive time interval a question names."""

    start: datetime
    end: datetime

    def overlaps(self, start: datetime, end: datetime) -> bool:
        return start <= self.end and self.start <= end


def question_windows(question: str, reference: datetime) -> tuple[Window, ...]:
    """Windows of the question's resolvable time expressions, in UTC.

    A relative phrase ("last weekend") is dropped when the question also names a date: it
    is relative to that date, not to the reference.
    """
    found = [
        expression
        for expression in find_time_expressions(question, reference)
        if expression.precision in _PRECISIONS
    ]
    if any(expression.basis != "relative" for expression in found):
        found = [expression for expression in found if expression.basis != "relative"]
    return tuple(Window(to_utc(e.start), to_utc(e.end)) for e in found if e.start and e.end)
