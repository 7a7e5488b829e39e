"""A structured task's output from a validated reply message: the tool call, else JSON in text.

Pure: ``http.py`` sends and receives, this module reads. An answer that does not fit the
task's schema is an ``InvalidOutput`` whose reason is fed back to the model once.
"""

import json
import re
from typing import Any

from pydantic import ValidationError

from ..errors import validation_problems
from ..text.clean import valid_json_value
from .base import StructuredTask, T
from .replies import WireMessage

_FENCE = re.compile(r"```[a-zA-Z]*\s*\n?(.*?)```", re.DOTALL)
_THINK = re.compile(r"<think>.*?</think>", re.DOTALL)


class InvalidOutput(Exception):
    """The reply could not be turned into the task's output type."""

    def __init__(self, reason: str, raw: str, *, unstructured: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.raw = raw
        # No JSON begun at all: the server may ignore the mode. An answer cut off at
        # max_tokens began one, so it is the model's failing, not the server's.
        self.unstructured = unstructured


def parse_output(task: StructuredTask[T], message: WireMessage) -> T:
    """The validated output from the first tool call, else from JSON found in the text."""
    calls = message.calls()
    if not calls:
        raw = message.text
        found = _json_from_text(raw)
        if found is None and _THINK.sub("", raw).lstrip().startswith("{"):
            raise InvalidOutput("the reply's JSON object is cut off or malformed", raw)
        if found is None:
            reason = "the reply contained no tool call and no JSON object"
            raise InvalidOutput(reason, raw, unstructured=True)
        return _validate(task, found, raw)
    raw = calls[0][1].arguments
    try:
        arguments = json.loads(raw)
    except json.JSONDecodeError as error:
        raise InvalidOutput(f"the tool arguments are not valid JSON: {error}", raw) from error
    return _validate(task, arguments, raw)


def _validate(task: StructuredTask[T], data: Any, raw: str) -> T:
    try:
        return task.output_type.model_validate(data)
    except ValidationError as error:
        raise InvalidOutput("\n".join(validation_problems(error)), raw) from error


def _json_from_text(text: str) -> dict[str, Any] | None:
    """The first JSON object in a ```json fence, else the first ``{...}`` in the text."""
    text = _THINK.sub("", text)
    for block in _FENCE.findall(text):
        found = _first_object(block)
        if found is not None:
            return found
    return _first_object(text)


def _first_object(text: str) -> dict[str, Any] | None:
    decoder = json.JSONDecoder()
    start = text.find("{")
    while start != -1:
        try:
            value, _ = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            value = None
        if isinstance(value, dict):
            return dict(valid_json_value(value))
        start = text.find("{", start + 1)
    return None
