"""The chat-completions request a structured task sends, and the features it may drop.

Pure: ``http.py`` sends what these build and switches a feature off when a server rejects
it; kept apart so the client stays about the wire (reading, retrying, errors).
"""

import json
import re
from dataclasses import dataclass
from typing import Any

from ..text.token_budget import estimate_tokens
from .base import StructuredTask
from .endpoint import HttpModelConfig
from .outputs import InvalidOutput

TOOL_PREFIX = "stratagate_"
MIN_OUTPUT_TOKENS = 256  # HttpModelConfig.max_output_tokens' own minimum
_ECHO_LIMIT = 4000


@dataclass
class Compat:
    """Request features; each is switched off at most once, when a server rejects it."""

    tools: bool = True
    token_field: str = "max_tokens"
    temperature: bool = True

    def adapt(self, detail: str) -> str | None:
        """Drop the feature a 400 complains about; the adaptation's name, or None."""
        text = detail.lower()
        if self.tools and re.search(r"\btool|function", text):
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
        compat.token_field: output_budget(config, task, messages, compat.tools),
    }
    if compat.temperature:
        body["temperature"] = config.temperature
    if compat.tools:
        tool = TOOL_PREFIX + task.name
        body["tools"] = [{"type": "function", "function": _tool_function(task)}]
        body["tool_choice"] = {"type": "function", "function": {"name": tool}}
    return body


def output_budget(
    config: HttpModelConfig,
    task: StructuredTask[Any],
    messages: list[dict[str, str]],
    tools: bool = True,
) -> int:
    """The answer's token cap: ``max_output_tokens``, or the task's own budget cut to what
    the model's window leaves after the input (messages and tool schema), when the window
    is known; never below the configurable minimum of 256."""
    if task.max_output_tokens is None or config.context_window is None:
        return config.max_output_tokens
    sent = json.dumps(messages, ensure_ascii=False)
    if tools:
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
    if not compat.tools:
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
    how = "Call the tool again" if compat.tools else "Reply again with one JSON object"
    return (
        f"Your previous answer was invalid:\n{feedback.reason}\n\n"
        f"Previous answer:\n{_truncate(feedback.raw, _ECHO_LIMIT)}\n\n"
        f"{how} with a corrected answer that matches the schema exactly."
    )


def _truncate(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
