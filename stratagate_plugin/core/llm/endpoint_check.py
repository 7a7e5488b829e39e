"""One small structured task that tells whether an endpoint works: the settings page's test.

The endpoint's mode is found again from the top (``response_format``, tool call, prompt),
since a server upgraded since the first probe may now enforce what it once refused; what is
found is remembered as any call's would be. The answer is timed and checked against its
schema (valid) and against the words given (right), so a weak model that answers in shape
but wrongly is told apart from one that does not answer in shape at all.
"""

import time
from collections.abc import Callable
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field

from .base import ModelError, StructuredTask
from .http import HttpModel
from .request_body import Mode

CHECK_ENDPOINT = "check_endpoint"
WORDS = ("kiln", "glaze", "porcelain", "clay")
INSTRUCTIONS = (
    "The input is JSON with a list of words. Return `count`, how many words there are, and "
    "`longest`, the longest word exactly as written."
)


class WordCheck(BaseModel):
    """How many words there are and the longest one."""

    model_config = ConfigDict(extra="ignore")

    count: int = Field(ge=0, le=100)
    longest: str = Field(min_length=1, max_length=40)


@dataclass(frozen=True)
class CheckResult:
    """What the test found: a valid answer or the error, how long it took, in which mode."""

    valid: bool
    right: bool
    seconds: float
    mode: Mode
    strict: bool
    error: str | None = None


def check_task() -> StructuredTask[WordCheck]:
    return StructuredTask(CHECK_ENDPOINT, WordCheck, INSTRUCTIONS, {"words": list(WORDS)})


async def check_endpoint(
    model: HttpModel, clock: Callable[[], float] = time.monotonic
) -> CheckResult:
    """Run the check task on ``model`` from the top mode; never raises a ``ModelError``."""
    model.forget_mode()
    started = clock()
    try:
        answer = await model.complete(check_task())
    except ModelError as error:
        return _result(model, clock() - started, error=str(error))
    right = answer.count == len(WORDS) and answer.longest.strip() == max(WORDS, key=len)
    return _result(model, clock() - started, right=right)


def _result(
    model: HttpModel, seconds: float, *, right: bool = False, error: str | None = None
) -> CheckResult:
    mode, strict = model.shape
    return CheckResult(error is None, right, round(seconds, 2), mode, strict, error)
