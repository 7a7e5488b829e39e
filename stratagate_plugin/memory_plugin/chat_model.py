"""The engine's HTTP client as the harness's chat model (the harness imports no core).

``HttpChatModel`` reuses the structured-task client's transport, status handling, retries
and key scrubbing, so it adds no httpx import of its own. A failed call raises core's
error kind (``ModelAuthError``, …) made a ``ChatModelError`` too: the agent loop catches
the harness's error, and callers that know core's kinds still can.
"""

import logging
from collections.abc import Sequence
from typing import Any

from ..core.llm.base import ModelError
from ..core.llm.http import HttpModel
from ..core.llm.replies import WireChoice
from ..harness.chat import ChatMessage, ChatModelError, ToolCall, ToolSpec

logger = logging.getLogger(__name__)


class HttpChatModel(HttpModel):
    """A ``ChatModel`` over ``POST {base_url}/chat/completions`` with function tools."""

    def __repr__(self) -> str:
        return f"HttpChatModel(model={self.config.model!r}, base_url={self.config.base_url!r})"

    async def chat(self, messages: Sequence[ChatMessage], tools: Sequence[ToolSpec]) -> ChatMessage:
        try:
            response = await self._accepted(lambda: self._chat_body(messages, tools))
            return _assistant_message(self._choice_of(response))
        except ModelError as error:
            if isinstance(error, ChatModelError):
                raise
            raise _as_chat_error(type(error))(*error.args) from error

    def _chat_body(
        self, messages: Sequence[ChatMessage], tools: Sequence[ToolSpec]
    ) -> dict[str, Any]:
        compat = self._compat
        body: dict[str, Any] = {
            "model": self.config.model,
            "messages": [message.wire() for message in messages],
            compat.token_field: self.config.max_output_tokens,
        }
        if compat.temperature:
            body["temperature"] = self.config.temperature
        if tools and compat.tools:
            body["tools"] = [tool.wire() for tool in tools]
            body["tool_choice"] = "auto"
        elif tools:
            logger.warning("%s does not accept tools; calling without them", self._where())
        return body


def _assistant_message(choice: WireChoice) -> ChatMessage:
    """A validated reply as a native message (its strings are already valid text)."""
    message = choice.message
    calls = [ToolCall(id=i, name=f.name, arguments=f.arguments) for i, f in message.calls()]
    return ChatMessage(
        role="assistant",
        content=message.content,
        tool_calls=tuple(calls),
        reasoning=message.reasoning_content or message.reasoning,
        finish_reason=choice.finish_reason,
    )


_CHAT_ERRORS: dict[type[ModelError], type[ModelError]] = {}


def _as_chat_error(kind: type[ModelError]) -> type[ModelError]:
    """``kind`` that is also a ``ChatModelError`` (one class per kind, same name)."""
    if kind not in _CHAT_ERRORS:
        bases = (kind, ChatModelError)
        _CHAT_ERRORS[kind] = type(kind.__name__, bases, {"__module__": kind.__module__})
    return _CHAT_ERRORS[kind]
