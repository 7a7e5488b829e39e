"""The chat-completions request a structured task sends, and the features it may drop.

A structured task asks for its schema the way the server enforces it (``response_format``),
else as a forced tool call, else in the prompt; its answer is capped by what the schema
can need.

Pure: ``http.py`` sends what these build and switches a feature off when a server rejects
it; kept apart so the client stays about the wire (reading, retrying, errors).
"""

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from ..text.token_budget import estimate_tokens
from .base import StructuredTask
from .endpoint import HttpModelConfig
from .outputs import InvalidOutput
from .schema_budget import schema_budget

TOOL_PREFIX = "stratagate_"
MIN_OUTPUT_TOKENS = 256  # HttpModelConfig.max_output_tokens' own minimum
_ECHO_LIMIT = 4000


Mode = Literal["json_schema", "tools", "prompt"]
TOP_MODE: tuple[Mode, bool] = ("json_schema", True)  # a mode and its ``strict``
_NAMES_SCHEMA = re.compile(r"response_format|json_schema|\bschema\b|grammar")
_NAMES_TOOLS = re.compile(r"\btool|function")
_NAMES_STRICT = re.compile(r"strict|additionalproperties|required")  # OpenAI's strict rules


@dataclass
class Compat:
    """How a structured task asks for its schema, and the request features a server took.

    The mode steps down, never up: ``response_format`` ``json_schema`` (the server enforces
    it: llama.cpp turns it into a grammar; vLLM, Ollama and OpenAI honour it), strict first;
    then a forced tool call; then the schema in the prompt. Each feature is switched off at
    most once, when a server rejects it (a 400 naming it) or ignores it (no JSON back).
    """

    response_format: bool = True
    strict: bool = True
    tools: bool = True
    token_field: str = "max_tokens"
    temperature: bool = True

    @property
    def mode(self) -> Mode:
        if self.response_format:
            return "json_schema"
        return "tools" if self.tools else "prompt"

    def use(self, mode: Mode, strict: bool = True) -> None:
        """Start at ``mode`` (one remembered for the endpoint) instead of probing from the top."""
        self.response_format = mode == "json_schema"
        self.tools = mode != "prompt"
        self.strict = strict and self.response_format

    def adapt(self, detail: str, sent: Mapping[str, Any]) -> str | None:
        """Drop the feature a 400 about request ``sent`` complains about; its name, or None."""
        text = detail.lower()
        if self.response_format and "response_format" in sent and _NAMES_SCHEMA.search(text):
            return self._drop_response_format(text)
        if self.tools and "tools" in sent and _NAMES_TOOLS.search(text):
            self.tools = False
            return "tools"
        unsupported = "support" in text
        if unsupported and self.token_field == "max_tokens" and "max_tokens" in text:
            self.token_field = "max_completion_tokens"
            return "max_completion_tokens"
        if unsupported and self.temperature and "temperature" in text:
            self.temperature = False
            return "temperature"
        return None

    def fall_back(self) -> Mode | None:
        """The next mode after a reply with no JSON in it (the server ignored the request
        for structure); None when the schema is already in the prompt."""
        if self.response_format:
            self.response_format = self.strict = False
        elif self.tools:
            self.tools = False
        else:
            return None
        return self.mode

    def _drop_response_format(self, complaint: str) -> str:
        """A complaint about strictness (OpenAI wants every field required and no other
        allowed for it) drops ``strict``; any other, or a second, ``response_format``."""
        if self.strict and _NAMES_STRICT.search(complaint):
            self.strict = False
            return "json_schema without strict"
        self.response_format = False
        return self.mode


def request_body(
    config: HttpModelConfig,
    compat: Compat,
    task: StructuredTask[Any],
    feedback: InvalidOutput | None,
) -> dict[str, Any]:
    messages = _messages(compat, task, feedback)
    body: dict[str, Any] = {
        "model": config.model,
        "messages": messages,
        compat.token_field: output_budget(config, task, messages, compat.mode != "prompt"),
    }
    if compat.temperature:
        body["temperature"] = config.temperature
    name = TOOL_PREFIX + task.name
    if compat.mode == "json_schema":
        schema: dict[str, Any] = {"name": name, "schema": task.json_schema()}
        if compat.strict:  # left out, not false: a server may know no such field
            schema["strict"] = True
        body["response_format"] = {"type": "json_schema", "json_schema": schema}
    elif compat.mode == "tools":
        body["tools"] = [{"type": "function", "function": _tool_function(task)}]
        body["tool_choice"] = {"type": "function", "function": {"name": name}}
    return body


def mode_of(body: Mapping[str, Any]) -> Mode:
    """The mode a request body was built in."""
    if "response_format" in body:
        return "json_schema"
    return "tools" if "tools" in body else "prompt"


def output_budget(
    config: HttpModelConfig,
    task: StructuredTask[Any],
    messages: list[dict[str, str]],
    schema_sent: bool = True,
) -> int:
    """The answer's token cap. A task with a budget of its own gets it, cut to what the
    model's window leaves after the input (messages and schema) when the window is known;
    any other task what its schema can need at most (``schema_budget``). Never more than
    ``max_output_tokens`` (but for a task's own budget), never below the minimum of 256."""
    if task.max_output_tokens is None:
        needed = schema_budget(task.json_schema())
        return max(MIN_OUTPUT_TOKENS, min(config.max_output_tokens, needed))
    if config.context_window is None:
        return config.max_output_tokens
    sent = json.dumps(messages, ensure_ascii=False)
    if schema_sent:
        sent += json.dumps(task.json_schema(), ensure_ascii=False)
    room = config.context_window - estimate_tokens(sent)
    return max(MIN_OUTPUT_TOKENS, min(task.max_output_tokens, room))


def _tool_function(task: StructuredTask[Any]) -> dict[str, Any]:
    doc = (task.output_type.__doc__ or task.name).strip().splitlines()[0]
    return {
        "name": TOOL_PREFIX + task.name,
        "description": f"Return the result: {doc}",
        "parameters": task.json_schema(),
    }


def _messages(
    compat: Compat, task: StructuredTask[Any], feedback: InvalidOutput | None
) -> list[dict[str, str]]:
    system = task.instructions
    if compat.mode == "json_schema":
        system += "\n\nReply with exactly one JSON object, the result, and nothing else."
    if compat.mode == "prompt":
        schema = json.dumps(task.json_schema(), ensure_ascii=False)
        system += (
            "\n\nReply with exactly one JSON object and nothing else (no prose, no tool call). "
            f"It must match this JSON schema:\n{schema}"
        )
    payload = json.dumps(task.payload, ensure_ascii=False, default=str)
    messages = [{"role": "system", "content": system}, {"role": "user", "content": payload}]
    if feedback is not None:
        messages.append({"role": "user", "content": _retry_instruction(compat, feedback)})
    return messages


def _retry_instruction(compat: Compat, feedback: InvalidOutput) -> str:
    how = "Call the tool again" if compat.mode == "tools" else "Reply again with one JSON object"
    return (
        f"Your previous answer was invalid:\n{feedback.reason}\n\n"
        f"Previous answer:\n{_truncate(feedback.raw, _ECHO_LIMIT)}\n\n"
        f"{how} with a corrected answer that matches the schema exactly."
    )


def _truncate(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
