"""The model-derivation view of L5 (spec §2.6): long tool content compacted, L5 untouched.

Summaries and extraction read this view; user and assistant text is passed unchanged up
to ``DERIVE_TEXT_LIMIT`` characters a message (the config's ``derive_text_limit``): a
longer message is derived from its first characters, marked ``derived_from_prefix``, and
the block's L1 says so (``prefix_note``). A 5 MB message once kept the offline model busy
for over a minute; L5 keeps every message whole, as evidence. Ids, roles, times and
threads are kept, and every marker says the full value is in L5. An answer composed from
memory carries ``composed_from_memory``: the model sees it as context, and neither the
offline extractor nor source validation takes it as a source.
"""

import json
import re
from collections.abc import Sequence
from typing import Any

from ..clock import iso
from ..records import Message, ToolTrace

DERIVE_TEXT_LIMIT = 64_000  # characters of a user or assistant message a derivation reads
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


def text_prefix(text: str, limit: int) -> str:
    """The first ``limit`` characters of ``text``, cut back to a space when one is near."""
    if len(text) <= limit:
        return text
    cut = text[:limit]
    space = cut.rfind(" ", limit - 200)
    return cut[:space] if space > 0 else cut


def derivation_message(message: Message, text_limit: int = DERIVE_TEXT_LIMIT) -> dict[str, Any]:
    tool = message.role == "tool"
    content = compact_text(message.content) if tool else text_prefix(message.content, text_limit)
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
    if not tool and len(content) < len(message.content):
        view["derived_from_prefix"] = {"chars": len(content), "of": len(message.content)}
    return view


def _compact_trace(trace: ToolTrace) -> dict[str, Any]:
    return {
        "name": trace.name,
        "arguments": compact_arguments(trace.arguments),
        "result": compact_result(trace.result),
    }


def derivation_messages(
    messages: Sequence[Message], text_limit: int = DERIVE_TEXT_LIMIT
) -> list[dict[str, Any]]:
    return [derivation_message(m, text_limit) for m in messages]


def prefix_note(messages: Sequence[dict[str, Any]]) -> str:
    """What a derived view says when a message was derived from its prefix; "" if none was."""
    cut = [m["derived_from_prefix"] for m in messages if m.get("derived_from_prefix")]
    if not cut:
        return ""
    read = max(part["chars"] for part in cut)
    whole = max(part["of"] for part in cut)
    many = f"{len(cut)} messages, the longest" if len(cut) > 1 else "a message"
    return (
        f"[derived from the first {read:,} characters of {many} of {whole:,} characters; "
        "the whole text is kept in L5]"
    )
