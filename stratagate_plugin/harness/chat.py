"""The harness's chat models: the messages, the protocol, a scripted fake, an echo fallback.

Messages follow the OpenAI chat shape. The harness needs no memory engine: the HTTP chat
model is the engine's client adapted to this protocol (``memory_plugin/chat_model.py``).
"""

import json
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict

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


class ChatModelError(Exception):
    """A chat model call failed; ``str`` is a user-facing message without secrets (the
    agent records the turn as failed with it)."""


class ChatModel(Protocol):
    """Anything that answers a conversation with an assistant message (maybe tool calls)."""

    name: str

    async def chat(self, messages: Sequence[ChatMessage], tools: Sequence[ToolSpec]) -> ChatMessage:
        """The assistant's reply to ``messages``; ``tools`` empty means no tool may be called.
        A failed call raises ``ChatModelError``."""
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
            raise ChatModelError("scripted chat model has no reply left")
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


def _wire_call(call: ToolCall) -> dict[str, Any]:
    function = {"name": call.name, "arguments": call.arguments}
    return {"id": call.id, "type": "function", "function": function}
