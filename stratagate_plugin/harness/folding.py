"""Turn folding (behaviour spec §12.4): a turn's native messages → one ``HostTurn``.

``memory_*`` tool calls and their results are never kept (recalled memory must not be
ingested again), reasoning is dropped, images become ``[image]`` (``[image: …]`` when the
part carries a description: ``alt``, ``caption`` or ``description``, on the part or on its
image object), several texts are joined with blank lines, a turn without human text is
dropped, and an empty answer is replaced.
"""

import json
import re
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from .chat import ChatMessage, ToolCall
from .text import image_marker
from .types import HostTurn, ToolTrace

MEMORY_TOOL_PREFIX = "memory_"
_THINK = re.compile(r"<think>.*?</think>", re.DOTALL)
_IMAGE_PARTS = frozenset({"image", "image_url", "input_image"})
_DESCRIPTION_KEYS = ("alt", "caption", "description")


def fold_turn(
    session_id: str,
    turn: int,
    messages: Sequence[ChatMessage],
    started_at: datetime,
    ended_at: datetime,
    error: str | None = None,
) -> HostTurn | None:
    """The folded turn, or None when it holds no human text."""
    user = join(message_text(m) for m in messages if m.role == "user" and m.source == "user")
    if not user:
        return None
    answer = join(message_text(m) for m in messages if m.role == "assistant")
    return HostTurn(
        session_id=session_id,
        turn=turn,
        user=user,
        assistant=answer or empty_answer(error),
        tool_calls=tool_traces(messages),
        started_at=started_at,
        ended_at=ended_at,
        outcome="failed" if error else "completed",
        error=error,
    )


def join(texts: Iterable[str]) -> str:
    return "\n\n".join(text for text in (t.strip() for t in texts) if text)


def empty_answer(error: str | None) -> str:
    return f"Turn ended: {error.strip().rstrip('.')}." if error else "Turn completed."


def message_text(message: ChatMessage) -> str:
    """Visible text: reasoning dropped, images as ``[image]`` or ``[image: description]``."""
    if isinstance(message.content, str):
        return _THINK.sub("", message.content)
    return join(_part_text(part) for part in message.content or [])


def _part_text(part: dict[str, Any]) -> str:
    kind = part.get("type")
    if kind == "text":
        return _THINK.sub("", str(part.get("text", "")))
    return image_marker(_image_description(part)) if kind in _IMAGE_PARTS else ""


def _image_description(part: dict[str, Any]) -> str:
    """The first text description on the part, else on its image object (``part[type]``)."""
    nested = part.get(str(part.get("type")))
    for holder in (part, nested if isinstance(nested, dict) else {}):
        for key in _DESCRIPTION_KEYS:
            if isinstance(holder.get(key), str) and holder[key].strip():
                return str(holder[key])
    return ""


def tool_traces(messages: Sequence[ChatMessage]) -> tuple[ToolTrace, ...]:
    """Every non-memory tool call with its parsed arguments and its result."""
    results = {m.tool_call_id: m for m in messages if m.role == "tool" and m.tool_call_id}
    traces = []
    for message in messages:
        for call in message.tool_calls:
            if call.name.startswith(MEMORY_TOOL_PREFIX):
                continue
            result = results.get(call.id)
            traces.append(_trace(call, message_text(result) if result else None))
    return tuple(traces)


def _trace(call: ToolCall, result: str | None) -> ToolTrace:
    return ToolTrace(name=call.name, arguments=_parsed(call.arguments), result=_result(result))


def _parsed(arguments: str) -> Any:
    try:
        return json.loads(arguments)
    except json.JSONDecodeError:
        return {"raw": arguments}


def _result(text: str | None) -> Any:
    if text is None:
        return None
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text
