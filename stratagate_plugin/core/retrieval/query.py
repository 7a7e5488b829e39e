"""A question parsed once: the search terms, weak category terms and time windows it names.

One ``Query`` is built per search and handed to every channel, so no channel tokenises
the question again. Windows are resolved against a reference (the memory's newest
message), which only fused retrieval reads; event search alone parses without one.
"""

from dataclasses import dataclass
from datetime import datetime
from functools import cached_property

from ..clock import to_utc
from ..text.search_terms import query_tokens
from ..text.temporal.resolve import find_time_expressions
from ..text.word_categories import category_terms

_PRECISIONS = frozenset({"instant", "day", "month", "year", "range"})


@dataclass(frozen=True)
class Window:
    """An inclusive time interval a question names."""

    start: datetime
    end: datetime

    def overlaps(self, start: datetime, end: datetime) -> bool:
        return start <= self.end and self.start <= end


@dataclass(frozen=True)
class Query:
    """``terms``: search tokens without function words; ``windows``: the dates it names."""

    text: str
    terms: tuple[str, ...]
    windows: tuple[Window, ...] = ()

    @cached_property
    def weak(self) -> tuple[str, ...]:
        """Members of a category the question names that are not terms already (worked out
        on first use: only the raw channel needs them, recall and event search do not)."""
        return tuple(term for term in category_terms(self.text) if term not in self.terms)


def parse_query(text: str, reference: datetime | None = None) -> Query:
    """The query of ``text``; windows only when a ``reference`` is given."""
    windows = question_windows(text, reference) if reference is not None else ()
    return Query(text, tuple(query_tokens(text)), windows)


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
