"""The structured-task protocol every model implementation satisfies."""

import copy
import functools
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar

from pydantic import BaseModel, ValidationError

T = TypeVar("T", bound=BaseModel)


@dataclass(frozen=True)
class StructuredTask(Generic[T]):
    """One call: a task name, the pydantic output type (its JSON schema), instructions, payload."""

    name: str
    output_type: type[T]
    instructions: str
    payload: dict[str, Any]
    max_output_tokens: int | None = None  # a task's own output budget (HttpModel: see there)

    def json_schema(self) -> dict[str, Any]:
        """A copy of the output type's schema, built once per type (pydantic takes a few
        milliseconds, and every request of a derivation pass sends it)."""
        return copy.deepcopy(_schema_of(self.output_type))


@functools.cache
def _schema_of(output_type: type[BaseModel]) -> dict[str, Any]:
    return output_type.model_json_schema()


class StructuredModel(Protocol):
    """Anything that turns a structured task into a validated result."""

    name: str

    async def complete(self, task: StructuredTask[T]) -> T: ...


class ModelError(Exception):
    """A model call failed; ``str`` is a user-facing message without secrets."""


class ModelAuthError(ModelError):
    """401/403: the API key is missing or rejected."""


class ModelNotFoundError(ModelError):
    """404: wrong base URL or model name."""


class ModelRateLimitedError(ModelError):
    """429: the provider asks us to slow down."""


class ModelServerError(ModelError):
    """5xx from the provider."""


class ModelTimeoutError(ModelError):
    """No answer within the configured timeout."""


class ModelReplyTooLargeError(ModelError):
    """The reply exceeded ``max_reply_bytes``; its read was stopped at the cap."""


class ModelOutputError(ModelError):
    """The answer did not validate against the task's schema (after the retry)."""


class ModelConfigError(ModelError, ValueError):
    """The model settings are incomplete or invalid (a ``ValueError``, so the CLI reports it)."""


@dataclass
class ScriptedModel:
    """A fake model for tests: answers from a queue and records every task it was given.

    Queue entries may be a result object, a dict/JSON string validated against the task's
    output type, or an exception instance to raise.
    """

    responses: deque[Any] = field(default_factory=deque)
    name: str = "scripted"
    requests: list[StructuredTask[Any]] = field(default_factory=list)

    @classmethod
    def of(cls, responses: Iterable[Any]) -> "ScriptedModel":
        return cls(responses=deque(responses))

    def push(self, *responses: Any) -> None:
        self.responses.extend(responses)

    async def complete(self, task: StructuredTask[T]) -> T:
        self.requests.append(task)
        if not self.responses:
            raise ModelError(f"scripted model has no response left for {task.name}")
        response = self.responses.popleft()
        if isinstance(response, BaseException):
            raise response
        if isinstance(response, task.output_type):
            return response
        try:
            if isinstance(response, str | bytes):
                return task.output_type.model_validate_json(response)
            return task.output_type.model_validate(response)
        except ValidationError as error:
            raise ModelOutputError(f"{task.name}: invalid output: {error}") from error
