"""The model-derivation view of L5 (spec §2.6): long tool content compacted, L5 untouched.

Summaries and extraction read this view; user and assistant text is passed unchanged,
ids, roles, times and threads are kept, and every marker says the full value is in L5. An
answer composed from memory carries ``composed_from_memory``: the model sees it as context,
and neither the offline extractor nor source validation takes it as a source.
"""

import json
import re
from collections.abc import Sequence
from typing import Any

from ..clock import iso
from ..records import Message, ToolTrace

TOOL_CONTENT_LIMIT = 2400
CODE_FIELD_LIMIT = 240
ARGUMENTS_LIMIT = 1200
RESULT_LIMIT = 2400
_CODE_KEYS = {"code", "command", "program", "script", "source", "sourcecode"}


def compact_text(text: str, label: str = "tool message content") -> str:
    if len(text) <= TOOL_CONTENT_LIMIT:
        return text
    head, tail = max(160, int(len(text) * 0.6)), max(80, int(len(text) * 0.2))
    omitted = len(text) - head - tail
    marker = f"[{label} compacted: {omitted} chars omitted; full value remains in L5]"
    return f"{text[:head]}\n{marker}\n{text[-tail:]}"


def compact_arguments(arguments: Any) -> Any:
    """Long code-like string fields replaced by a marker; oversized arguments summarised."""
    if isinstance(arguments, dict):
        arguments = {k: _compact_code_field(k, v) for k, v in arguments.items()}
    serialized = _dump(arguments)
    if len(serialized) <= ARGUMENTS_LIMIT:
        return arguments
    return _compaction_object("tool arguments", serialized)


def _compact_code_field(key: str, value: Any) -> Any:
    normalized = re.sub(r"[_\- ]", "", key).lower()
    if normalized in _CODE_KEYS and isinstance(value, str) and len(value) > CODE_FIELD_LIMIT:
        return f"[{key} omitted: {len(value)} chars; full value remains in L5]"
    return value


def compact_result(result: Any) -> Any:
    serialized = _dump(result)
    if len(serialized) <= RESULT_LIMIT:
        return result
    return _compaction_object("tool result", serialized)


def _compaction_object(label: str, serialized: str) -> dict[str, Any]:
    head = max(160, int(len(serialized) * 0.48))
    tail = max(80, int(len(serialized) * 0.2))
    return {
        "_stratagate": f"{label} compacted; full value remains in L5",
        "originalChars": len(serialized),
        "head": serialized[:head],
        "tail": serialized[-tail:],
        "omittedChars": max(0, len(serialized) - head - tail),
    }


def _dump(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def derivation_message(message: Message) -> dict[str, Any]:
    content = message.content
    if message.role == "tool":
        content = compact_text(content)
    view: dict[str, Any] = {
        "id": message.id,
        "role": message.role,
        "content": content,
        "created_at": iso(message.created_at),
        "thread_id": message.thread_id,
        "tool_calls": [_compact_trace(trace) for trace in message.tool_calls],
    }
    if message.composed_from_memory:  # an answer repeating memory: context, never a source
        view["composed_from_memory"] = True
    return view


def _compact_trace(trace: ToolTrace) -> dict[str, Any]:
    return {
        "name": trace.name,
        "arguments": compact_arguments(trace.arguments),
        "result": compact_result(trace.result),
    }


def derivation_messages(messages: Sequence[Message]) -> list[dict[str, Any]]:
    return [derivation_message(m) for m in messages]
