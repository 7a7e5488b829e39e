"""One small structured task that tells whether an endpoint works: the settings page's test.

The endpoint's mode is found again from the top (``response_format``, tool call, prompt),
since a server upgraded since the first probe may now enforce what it once refused; what is
found is remembered as any call's would be. A person waits on the page, so the request is
sent once (no retries) and bounded by ``CHECK_TIMEOUT_S``. The answer is timed and checked
against its schema (valid) and against the words given (right), so a weak model answering
in shape but wrongly is told apart from one that does not answer in shape at all.
"""

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from .base import ModelError, StructuredTask
from .endpoint import HttpModelConfig
from .http import HttpModel
from .request_body import Mode

CHECK_ENDPOINT = "check_endpoint"
CHECK_TIMEOUT_S = 60.0
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
    config: HttpModelConfig,
    modes_path: Path | None,
    clock: Callable[[], float] = time.monotonic,
) -> CheckResult:
    """Run the check task at ``config``'s endpoint from the top mode, remembering what it
    finds at ``modes_path``; never raises a ``ModelError``."""
    timeout = min(config.timeout_s, CHECK_TIMEOUT_S)
    once = config.model_copy(update={"max_attempts": 1, "timeout_s": timeout})
    async with HttpModel(once, modes_path=modes_path) as model:
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
