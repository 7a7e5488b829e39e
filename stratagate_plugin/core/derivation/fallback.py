"""Memory still fills when the model fails (issue 31): a structured task the configured
model fails, after the client's own retries, is answered by the offline model instead.

The client has already retried what retrying can fix (5xx, 429, timeouts, one invalid
reply fed back), so retrying the job would only pay that cost again: a weak model left a
block pending for minutes and no event at all. The offline answer is kept and marked
``offline-fallback`` with the model's error as one line (``jobs`` lists those blocks,
``jobs retry --offline`` runs them on the model again).

A *setup* error (401/403, no such model, incomplete settings) falls back as well, so
memory fills, but it is never silent: ``process`` says so on stderr and exits 1, and the
jobs page shows it, because every later task will fail the same way until it is fixed.
"""

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from ..errors import StrataGateError
from ..llm.base import (
    ModelAuthError,
    ModelConfigError,
    ModelError,
    ModelNotFoundError,
    StructuredModel,
    StructuredTask,
    T,
)
from ..llm.offline.model import OfflineModel
from ..records import OFFLINE_FALLBACK
from ..text.secrets import redact_secrets

__all__ = ["OFFLINE_FALLBACK", "DerivationFailed", "Derived", "derive", "fallback_for"]
ERROR_LIMIT = 300
SETUP_ERRORS = (ModelAuthError, ModelNotFoundError, ModelConfigError)
R = TypeVar("R")


class DerivationFailed(StrataGateError):
    """The model answered, but not with something a block can be derived from."""


@dataclass(frozen=True)
class Derived(Generic[R]):
    """A task's accepted result and who produced it; ``error``: the model's, when the
    offline model answered in its place."""

    result: R
    derived_by: str
    error: str | None = None

    @property
    def fell_back(self) -> bool:
        return self.derived_by == OFFLINE_FALLBACK


def error_line(error: BaseException) -> str:
    """The error as one short line without secrets (what the block, card and job keep)."""
    text = " ".join(str(error).split()) or type(error).__name__
    line = redact_secrets(f"{type(error).__name__}: {text}")
    return line if len(line) <= ERROR_LIMIT else line[: ERROR_LIMIT - 1] + "…"


def is_setup_error(line: str | None) -> bool:
    """Whether a kept error says the endpoint is misconfigured rather than weak."""
    return line is not None and line.startswith(tuple(f"{k.__name__}:" for k in SETUP_ERRORS))


def fallback_for(model: StructuredModel, enabled: bool) -> StructuredModel | None:
    """The offline model to fall back on: none when disabled or when the offline model is
    the one that failed (then the error is a bug to see, not to paper over)."""
    if not enabled or isinstance(model, OfflineModel):
        return None
    return OfflineModel()


async def derive(
    model: StructuredModel,
    task: StructuredTask[T],
    accept: Callable[[T], Awaitable[R]],
    fallback: StructuredModel | None,
) -> Derived[R]:
    """``model``'s accepted answer; on a model error or an unacceptable answer
    (``accept`` raises ``DerivationFailed``), ``fallback``'s, marked as such."""
    try:
        return Derived(await accept(await model.complete(task)), model.name)
    except (ModelError, DerivationFailed) as error:
        if fallback is None:
            raise
        answer = await fallback.complete(task)
        return Derived(await accept(answer), OFFLINE_FALLBACK, error_line(error))
