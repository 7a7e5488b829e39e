"""The chat-completions reply, validated against the OpenAI wire format before anyone reads it.

Real servers differ, so the models accept what they send: content null, a string or a list
of parts; arguments a JSON string or an object; a tool call without an id; the legacy
``function_call``. Anything else (a message that is a string, a function without a name) is
a ``MalformedReply`` naming the field, instead of an ``AttributeError`` deep in a caller.
Every string in the body passes through ``valid_text`` first.
"""

import json
import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ..text.clean import valid_bytes, valid_json_value

_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


class MalformedReply(Exception):
    """The body is not a chat-completions reply; ``str`` says which field was wrong."""


class _Wire(BaseModel):
    model_config = ConfigDict(frozen=True)


class WireFunction(_Wire):
    """A function the model called; ``arguments`` is JSON text (``{}`` when none was sent)."""

    name: str = Field(min_length=1)
    arguments: str = "{}"

    @field_validator("arguments", mode="before")
    @classmethod
    def _arguments_text(cls, value: Any) -> Any:
        """Ollama sends an object, some servers null or ``""`` for no arguments."""
        if value is None or value == "":
            return "{}"
        if isinstance(value, dict):
            return json.dumps(value, ensure_ascii=False)
        return _without_lone_surrogates(value) if isinstance(value, str) else value


def _without_lone_surrogates(arguments: str) -> str:
    """Arguments whose JSON escapes a lone surrogate (``"\\ud800"``) re-encoded with U+FFFD in
    its place, so the tool that parses them gets valid text; any other text is kept as sent."""
    if not _SURROGATE_ESCAPE.search(arguments):
        return arguments
    try:
        value = json.loads(arguments)
    except (json.JSONDecodeError, RecursionError):
        return arguments
    cleaned = valid_json_value(value)
    return arguments if cleaned == value else json.dumps(cleaned, ensure_ascii=False)


class WireToolCall(_Wire):
    id: str | None = None
    function: WireFunction


class WireMessage(_Wire):
    """The assistant's message: text, tool calls, and reasoning where a server sends it."""

    content: str | list[dict[str, Any]] | None = None
    tool_calls: list[WireToolCall] | None = None
    function_call: WireFunction | None = None
    reasoning_content: str | None = None
    reasoning: str | None = None

    @field_validator("content", mode="before")
    @classmethod
    def _content(cls, value: Any) -> Any:
        if value is None or isinstance(value, str):
            return value
        if isinstance(value, list) and all(isinstance(part, dict) for part in value):
            return value
        raise ValueError("should be text, a list of parts or null")

    @field_validator("reasoning_content", "reasoning", mode="before")
    @classmethod
    def _text_or_none(cls, value: Any) -> Any:
        """Reasoning is kept for the record only, so an odd shape is dropped, not fatal."""
        return value if isinstance(value, str) else None

    @property
    def text(self) -> str:
        """String content, or the text of the content parts joined."""
        if isinstance(self.content, str):
            return self.content
        parts = self.content or []
        return "".join(part["text"] for part in parts if isinstance(part.get("text"), str))

    def calls(self) -> list[tuple[str, WireFunction]]:
        """``(id, function)`` per tool call: a missing id is ``call_<index>``, and the legacy
        ``function_call`` counts as one call."""
        calls = [(c.id or f"call_{i}", c.function) for i, c in enumerate(self.tool_calls or [])]
        if not calls and self.function_call is not None:
            calls = [("call_0", self.function_call)]
        return calls


class WireChoice(_Wire):
    message: WireMessage
    finish_reason: str | None = None

    @field_validator("finish_reason", mode="before")
    @classmethod
    def _reason(cls, value: Any) -> Any:
        return value if isinstance(value, str) else None


class WireReply(_Wire):
    choices: list[WireChoice] = Field(min_length=1)


def first_choice(body: bytes) -> WireChoice:
    """The reply's first choice, cleaned and validated; ``MalformedReply`` if it has none."""
    text, _ = valid_bytes(body)
    if not text.strip():
        raise MalformedReply("the body is empty")
    try:
        data = valid_json_value(json.loads(text))
    except json.JSONDecodeError as error:
        raise MalformedReply(f"the body is not JSON ({error.msg})") from error
    except RecursionError:
        raise MalformedReply("the body is JSON nested too deeply to read") from None
    if not isinstance(data, dict):
        raise MalformedReply(f"the reply should be an object, not {_kind(data)}")
    try:
        return WireReply.model_validate(data).choices[0]
    except ValidationError as error:
        raise MalformedReply(_problem(error)) from error


_SHOULD = {
    "model_type": "should be an object",
    "dict_type": "should be an object",
    "list_type": "should be a list",
    "string_type": "should be a string",
}


def _problem(error: ValidationError) -> str:
    """The first problem as ``choices.0.message should be an object, not a string``."""
    problem = error.errors(include_url=False)[0]
    where = ".".join(str(part) for part in problem["loc"])
    kind = problem["type"]
    if kind == "missing":
        return f"{where} is missing"
    if kind == "too_short":
        return f"{where} is empty"
    if kind in _SHOULD:
        return f"{where} {_SHOULD[kind]}, not {_kind(problem['input'])}"
    return f"{where} {problem['msg'].removeprefix('Value error, ')}"


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "a list" if isinstance(value, list) else "an object"
