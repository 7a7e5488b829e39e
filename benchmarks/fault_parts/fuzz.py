"""Scenario 4: Hypothesis over every parser and entrance (``entrances`` says what each may
raise). A case *crashes* when it raises anything else; it is an *integrity error* when it
succeeds but breaks the entrance's promise (a lone surrogate passed through). Every case is
caught and recorded inside the ``@given`` function, so one bad input never stops the run;
the first few are kept, with the error, for the JSON.

Hypothesis runs programmatically: ``@given`` on an inner function called directly, seeded,
no example database, no deadline, generation only (nothing is shrunk: nothing fails).
"""

import contextlib
import logging
import os
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st

from . import entrances as e
from . import fuzz_strategies as s
from .results import Row

Allowed = Callable[[BaseException], bool]


@dataclass(frozen=True)
class Target:
    """One entrance to fuzz: inputs, the call (a problem text on a bad success), what may raise."""

    name: str
    inputs: st.SearchStrategy[Any]
    call: Callable[[Any], str | None]
    allowed: Allowed


def kinds_of(kinds: tuple[type[BaseException], ...]) -> Allowed:
    return lambda error: e.allowed(error, kinds)


def targets(replies: e.Replies) -> list[Target]:
    """The seven entrances; async ones share ``replies`` (one event loop, one mock server)."""
    return [
        Target("fuzz: ingest file", s.INGEST, e.ingest_entries, e.ingest_allowed),
        Target("fuzz: ingest command", s.INGEST_FILE, e.ingest_command, e.nothing_allowed),
        Target(
            "fuzz: structured reply",
            s.STRUCTURED,
            lambda case: e.structured_reply(replies, *case),
            kinds_of(e.MODEL_ERRORS),
        ),
        Target(
            "fuzz: chat reply",
            s.CHAT,
            lambda case: e.chat_reply(replies, *case),
            kinds_of(e.MODEL_ERRORS),
        ),
        Target("fuzz: tool arguments", s.JSON_TEXT, e.tool_arguments, kinds_of(e.TOOL_ERRORS)),
        Target("fuzz: profile yaml", s.PROFILE, e.profile_file, e.profile_allowed),
        Target(
            "fuzz: time expressions",
            s.TEMPORAL,
            lambda case: e.time_expressions(*case),
            e.nothing_allowed,
        ),
    ]


def fuzz_all(cases: int, seed: int, only: str | None = None) -> list[Row]:
    """``cases`` examples split evenly over the entrances (``only``: names containing it)."""
    with quiet_logs(), own_home():
        replies = e.Replies()
        try:
            chosen = [t for t in targets(replies) if only is None or only in t.name]
            share, extra = divmod(cases, max(1, len(chosen)))
            return [fuzz(target, share + (i < extra), seed + i) for i, target in enumerate(chosen)]
        finally:
            replies.close()


def fuzz(target: Target, cases: int, seed: int) -> Row:
    row = Row(target.name, fuzz_cases=0, crashes=0, integrity_errors=0)
    errors: Counter[str] = Counter()
    started = time.perf_counter()

    @hypothesis_seed(seed)
    @settings(
        max_examples=cases,
        database=None,
        deadline=None,
        phases=(Phase.generate,),
        suppress_health_check=list(HealthCheck),
    )
    @given(target.inputs)
    def case(value: Any) -> None:
        row.add("fuzz_cases")
        try:
            problem = target.call(value)
        except BaseException as error:  # counting them is the point
            if isinstance(error, KeyboardInterrupt):
                raise
            errors[type(error).__name__] += 1
            if not target.allowed(error):
                row.add("crashes")
                row.example("crashed_inputs", _case(value, f"{type(error).__name__}: {error}"))
            return
        if problem is not None:
            row.add("integrity_errors")
            row.example("integrity_inputs", _case(value, problem))

    if cases > 0:
        case()
    row.details["errors_raised"] = dict(errors)
    row.seconds = time.perf_counter() - started
    return row


def _case(value: Any, outcome: str) -> dict[str, str]:
    return {"input": _short(repr(value)), "outcome": _short(outcome)}


def _short(text: str, limit: int = 400) -> str:
    text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text if len(text) <= limit else text[: limit - 1] + "…"


@contextlib.contextmanager
def quiet_logs() -> Iterator[None]:
    """The model client logs a warning per invalid reply: thousands here, none useful."""
    logger = logging.getLogger("stratagate_plugin")
    level = logger.level
    logger.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        logger.setLevel(level)


@contextlib.contextmanager
def own_home() -> Iterator[None]:
    """Profiles are read from ``$STRATAGATE_HOME``: a temporary one for the run."""
    before = os.environ.get("STRATAGATE_HOME")
    with tempfile.TemporaryDirectory() as home:
        os.environ["STRATAGATE_HOME"] = home
        try:
            yield
        finally:
            if before is None:
                os.environ.pop("STRATAGATE_HOME", None)
            else:
                os.environ["STRATAGATE_HOME"] = before
