"""Chat models for the agent loop: one protocol, a scripted fake, an echo fallback, HTTP.

Messages follow the OpenAI chat shape. ``HttpChatModel`` reuses the structured-task client's
transport, status handling and key scrubbing, so it adds no httpx import of its own.
"""

import json
import logging
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict

from .base import ModelError
from .http import HttpModel
from .replies import WireChoice

logger = logging.getLogger(__name__)

ChatRole = Literal["system", "user", "assistant", "tool"]
Source = Literal["user", "plugin", "host"]


class ToolCall(BaseModel):
    """A function call the model asked for; ``arguments`` is the raw JSON text it sent."""

    model_config = ConfigDict(frozen=True)

    id: str
    name: str
    arguments: str = "{}"


class ChatMessage(BaseModel):
    """One native message. ``content`` is text or OpenAI content parts (text, image_url).

    ``source`` says who wrote a user message (``user`` = the human, ``plugin`` = a steer);
    ``reasoning`` and ``finish_reason`` are kept for the record but never sent back.
    """

    model_config = ConfigDict(frozen=True)

    role: ChatRole
    content: str | list[dict[str, Any]] | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    name: str | None = None
    source: Source | None = None
    reasoning: str | None = None
    finish_reason: str | None = None

    @property
    def text(self) -> str:
        """The visible text: string content, or the text parts joined."""
        if isinstance(self.content, str):
            return self.content
        parts = self.content or []
        return "".join(str(p.get("text", "")) for p in parts if p.get("type") == "text")

    def wire(self) -> dict[str, Any]:
        """The message as an OpenAI-compatible server expects it."""
        data: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.tool_calls:
            data["tool_calls"] = [_wire_call(call) for call in self.tool_calls]
        if self.tool_call_id is not None:
            data["tool_call_id"] = self.tool_call_id
        if self.role == "tool" and self.name:
            data["name"] = self.name
        return data


class ToolSpec(BaseModel):
    """What the model is told about one tool: name, description, JSON-schema parameters."""

    model_config = ConfigDict(frozen=True)

    name: str
    description: str
    parameters: dict[str, Any]

    def wire(self) -> dict[str, Any]:
        return {"type": "function", "function": self.model_dump()}


class ChatModel(Protocol):
    """Anything that answers a conversation with an assistant message (maybe tool calls)."""

    name: str

    async def chat(self, messages: Sequence[ChatMessage], tools: Sequence[ToolSpec]) -> ChatMessage:
        """The assistant's reply to ``messages``; ``tools`` empty means no tool may be called."""
        ...


def text_reply(text: str) -> ChatMessage:
    """An assistant message with text and no tool calls."""
    return ChatMessage(role="assistant", content=text, finish_reason="stop")


def tool_reply(name: str, arguments: dict[str, Any] | str, call_id: str = "call_1") -> ChatMessage:
    """An assistant message asking for one tool call."""
    raw = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
    call = ToolCall(id=call_id, name=name, arguments=raw)
    return ChatMessage(role="assistant", tool_calls=(call,), finish_reason="tool_calls")


@dataclass
class ChatRequest:
    """What a scripted model was asked: the messages and the tools offered."""

    messages: list[ChatMessage]
    tools: list[ToolSpec]


@dataclass
class ScriptedChatModel:
    """A fake model for tests: replies from a queue, records every request.

    Entries are a ``ChatMessage``, a string (plain assistant text) or an exception to raise.
    """

    replies: deque[ChatMessage | str | BaseException] = field(default_factory=deque)
    name: str = "scripted-chat"
    requests: list[ChatRequest] = field(default_factory=list)

    @classmethod
    def of(cls, *replies: ChatMessage | str | BaseException) -> "ScriptedChatModel":
        return cls(replies=deque(replies))

    def push(self, *replies: ChatMessage | str | BaseException) -> None:
        self.replies.extend(replies)

    async def chat(self, messages: Sequence[ChatMessage], tools: Sequence[ToolSpec]) -> ChatMessage:
        self.requests.append(ChatRequest(list(messages), list(tools)))
        if not self.replies:
            raise ModelError("scripted chat model has no reply left")
        reply = self.replies.popleft()
        if isinstance(reply, BaseException):
            raise reply
        return text_reply(reply) if isinstance(reply, str) else reply


@dataclass
class EchoChatModel:
    """The fallback with no model configured: repeats the latest human message."""

    name: str = "echo"

    async def chat(self, messages: Sequence[ChatMessage], tools: Sequence[ToolSpec]) -> ChatMessage:
        human = [m.text for m in messages if m.role == "user" and m.source == "user"]
        said = human[-1] if human else ""
        return text_reply(f"(no model configured) You said: {said}")


class HttpChatModel(HttpModel):
    """A ``ChatModel`` over ``POST {base_url}/chat/completions`` with function tools."""

    def __repr__(self) -> str:
        return f"HttpChatModel(model={self.config.model!r}, base_url={self.config.base_url!r})"

    async def chat(self, messages: Sequence[ChatMessage], tools: Sequence[ToolSpec]) -> ChatMessage:
        response = await self._accepted(lambda: self._chat_body(messages, tools))
        return _assistant_message(self._choice_of(response))

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


def _wire_call(call: ToolCall) -> dict[str, Any]:
    function = {"name": call.name, "arguments": call.arguments}
    return {"id": call.id, "type": "function", "function": function}
