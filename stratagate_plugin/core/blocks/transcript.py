"""Deterministic block views: L5 raw, L4 readable, L3 condensed (spec §2.2–2.5).

L4 and L3 are pure functions of the L5 messages, so they can be recomputed at any time
and never need a model. L3 removes only bounded redundancy: standalone fillers, raw
tool arguments, and exact repeats of long pastes; it never paraphrases.
"""

import json
import math
import re
from collections.abc import Iterable, Sequence
from typing import Any, Protocol

from ..records import Role, ToolTrace
from ..text.token_budget import estimate_tokens

RESULT_SUMMARY_CHARS = 160
ERROR_SUMMARY_CHARS = 140
REPEATED_PASTE_MARKER = "[repeated paste omitted; original remains in L5]"
PASTE_MIN_CHARS = 80
IMAGE_DESCRIPTION_CHARS = 300
FILLERS = frozenset(
    [
        "ok",
        "okay",
        "got it",
        "thanks",
        "thank you",
        "yes",
        "correct",
        "sure",
        "好",
        "好的",
        "嗯",
        "嗯嗯",
        "明白",
        "收到",
        "谢谢",
        "感谢",
        "辛苦了",
        "是",
        "是的",
        "对",
        "对的",
        "没错",
        "可以",
        "行",
        "同意",
        "就这样",
    ]
)
LABELS: dict[str, str] = {"user": "User", "assistant": "Assistant", "tool": "Tool"}
_IGNORED_ARRAY_KEYS = frozenset({"arguments", "params", "input", "request"})
_FENCE = re.compile(r"```.*?(?:```|\Z)", re.DOTALL)
_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n")
_PIECE_SPLIT = re.compile(r"(?<=[。！？!?])|\n")
_MAY_SPLIT = re.compile(r"[。！？!?\n]")
_FILLER_TAIL = "。！？，、,.!?～~"
_CODE_LINE = re.compile(
    r"^\s*(const|let|var|function|class|import|export|def|SELECT|INSERT|UPDATE)\b", re.M
)
_CODE_MARKS = re.compile(r"=>|[{};]")
_TOOLISH = re.compile(r'tool_calls|tool_call|"function"|"arguments"')
_NAME_FIELD = re.compile(r'"name"\s*:\s*"([^"]+)"')
_WHITESPACE = re.compile(r"\s+")


class TranscriptMessage(Protocol):
    """Anything with a role, content and tool traces (stored or incoming messages)."""

    @property
    def role(self) -> Role: ...
    @property
    def content(self) -> str: ...
    @property
    def tool_calls(self) -> Sequence[ToolTrace]: ...


def collapse(text: str) -> str:
    return _WHITESPACE.sub(" ", text).strip()


def image_marker(description: str = "") -> str:
    """An image in recorded text: ``[image]``, or ``[image: what it shows]`` when described.

    The description (alt text, a caption) is what later searches can find of the image;
    it is collapsed to one line and cut to ``IMAGE_DESCRIPTION_CHARS``.
    """
    text = collapse(description)[:IMAGE_DESCRIPTION_CHARS].rstrip()
    return f"[image: {text}]" if text else "[image]"


def render_raw(messages: Iterable[TranscriptMessage]) -> str:
    """L5: every message including system ones, with each tool trace as raw JSON."""
    entries = []
    for message in messages:
        lines = [f"{message.role}: {message.content}"]
        for trace in message.tool_calls:
            payload = {"name": trace.name, "arguments": trace.arguments, "result": trace.result}
            lines.append("Tool call (raw): " + json.dumps(payload, ensure_ascii=False))
        entries.append("\n".join(lines))
    return "\n\n".join(entries)


def summarize_result(value: Any) -> str:
    """A one-line, bounded description of a tool result of any JSON shape."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, str):
        return _summarize_text_result(value)
    if isinstance(value, dict):
        return _summarize_object_result(value)
    if isinstance(value, list):
        return _summarize_object_result({str(i): item for i, item in enumerate(value)})
    return ""


def _summarize_text_result(text: str) -> str:
    flat = collapse(text)
    if flat[:1] in ("{", "["):
        try:
            return summarize_result(json.loads(flat))
        except ValueError:
            pass
    return flat[:RESULT_SUMMARY_CHARS]


def _summarize_object_result(value: dict[str, Any]) -> str:
    if isinstance(value.get("error"), str):
        return "failed: " + collapse(value["error"])[:ERROR_SUMMARY_CHARS]
    for key in ("summary", "message"):
        if isinstance(value.get(key), str):
            return collapse(value[key])[:RESULT_SUMMARY_CHARS]
    counts = [
        f"{key}: {len(item)}"
        for key, item in value.items()
        if isinstance(item, list) and key not in _IGNORED_ARRAY_KEYS
    ]
    if counts:
        return ", ".join(counts)[:RESULT_SUMMARY_CHARS]
    if value.get("ok") is True:
        return "completed"
    if value.get("ok") is False:
        return "not completed"
    return "structured result returned"


def tool_line(name: str, summary: str) -> str:
    return f"Tool call: {name} ({summary})" if summary else f"Tool call: {name}"


def summarize_tool_json(text: str) -> str | None:
    """The summary line of a message that is a tool-call record, else None."""
    body = _strip_json_fence(text.strip())
    if body[:1] not in ("{", "[") and not _TOOLISH.search(body):
        return None
    try:
        parsed = json.loads(body)
    except ValueError:
        return _summarize_unparsable_tool_text(body)
    names = _collect_tool_names(parsed)
    if not names:
        return None
    result = None
    if isinstance(parsed, dict):
        result = parsed.get("result", parsed.get("content"))
    summary = summarize_result(result) if result is not None else ""
    return tool_line(", ".join(names), summary)


def _strip_json_fence(text: str) -> str:
    if not text.startswith("```"):
        return text
    match = re.fullmatch(r"```(?:json)?\s*\n?(.*?)\n?```", text, re.DOTALL | re.IGNORECASE)
    return match.group(1).strip() if match else text


def _summarize_unparsable_tool_text(text: str) -> str | None:
    if not _TOOLISH.search(text):
        return None
    names = list(dict.fromkeys(_NAME_FIELD.findall(text)))
    if names:
        return f"Tool call: {', '.join(names)} (raw arguments omitted)"
    return "Tool call (raw arguments omitted)"


def _collect_tool_names(node: Any) -> list[str]:
    names: list[str] = []
    stack = [node]
    while stack:
        current = stack.pop(0)
        if isinstance(current, list):
            stack.extend(current)
        if not isinstance(current, dict):
            continue
        names.extend(_names_of_object(current))
        stack.extend(v for v in current.values() if isinstance(v, dict | list))
    return list(dict.fromkeys(names))


def _names_of_object(obj: dict[str, Any]) -> list[str]:
    found = []
    if isinstance(obj.get("name"), str) and ("arguments" in obj or "parameters" in obj):
        found.append(obj["name"])
    if isinstance(obj.get("tool"), str):
        found.append(obj["tool"])
    function = obj.get("function")
    if isinstance(function, dict) and isinstance(function.get("name"), str):
        found.append(function["name"])
    return found


def render_readable(messages: Iterable[TranscriptMessage]) -> str:
    """L4: system messages dropped, role labels, tool records reduced to summaries."""
    entries = []
    for message in messages:
        if message.role == "system":
            continue
        content = message.content.strip()
        if message.role == "tool":
            content = summarize_tool_json(content) or content
        lines = [f"{LABELS[message.role]}: {content}"]
        lines += [_trace_line(trace) for trace in message.tool_calls]
        entries.append("\n".join(lines))
    return "\n\n".join(entries)


def _trace_line(trace: ToolTrace) -> str:
    summary = summarize_result(trace.result) if trace.result is not None else ""
    return tool_line(trace.name, summary)


def render_condensed(messages: Iterable[TranscriptMessage]) -> str:
    """L3: fillers, raw tool arguments and repeated long pastes removed (block-wide)."""
    seen_pastes: set[str] = set()
    entries = []
    for message in messages:
        if message.role == "system":
            continue
        parts = _condensed_parts(message, seen_pastes)
        if parts:
            entries.append(f"{LABELS[message.role]}: " + "\n\n".join(parts))
    return "\n\n".join(entries)


def _condensed_parts(message: TranscriptMessage, seen_pastes: set[str]) -> list[str]:
    content = message.content.strip()
    tool_summary = summarize_tool_json(content) if content else None
    if tool_summary is not None:
        parts = [tool_summary]
    else:
        parts = [_dedup_paste(p, fenced, seen_pastes) for p, fenced in _paragraphs(content)]
    return parts + [_trace_line(trace) for trace in message.tool_calls]


def _paragraphs(content: str) -> list[tuple[str, bool]]:
    """Fenced code blocks (paste candidates) and condensed text paragraphs, in order."""
    if "```" not in content:
        return [(p, False) for p in _text_paragraphs(content)]
    out: list[tuple[str, bool]] = []
    cursor = 0
    for fence in _FENCE.finditer(content):
        out += [(p, False) for p in _text_paragraphs(content[cursor : fence.start()])]
        out.append((fence.group(0).strip(), True))
        cursor = fence.end()
    out += [(p, False) for p in _text_paragraphs(content[cursor:])]
    return out


def _text_paragraphs(text: str) -> list[str]:
    chunks = _PARAGRAPH_BREAK.split(text) if "\n" in text else [text]
    kept = (_drop_fillers(p) for p in chunks)
    return [p for p in kept if p]


def _drop_fillers(paragraph: str) -> str:
    if not _MAY_SPLIT.search(paragraph):  # one piece (the common case): no split needed
        return "" if is_filler(paragraph) else paragraph.strip()
    pieces = [piece.strip() for piece in _PIECE_SPLIT.split(paragraph)]
    pieces = [piece for piece in pieces if piece]
    if not any(is_filler(piece) for piece in pieces):
        return paragraph.strip()
    return "\n".join(piece for piece in pieces if not is_filler(piece))


def is_filler(piece: str) -> bool:
    return piece.strip().rstrip(_FILLER_TAIL).strip().lower() in FILLERS


def looks_like_code(text: str) -> bool:
    if "\n" not in text:
        return False
    return bool(_CODE_LINE.search(text) or _CODE_MARKS.search(text))


def _dedup_paste(paragraph: str, fenced: bool, seen: set[str]) -> str:
    if not fenced and len(paragraph) < PASTE_MIN_CHARS and "\n" not in paragraph:
        return paragraph  # short single-line text is never a paste (or code)
    key = collapse(paragraph).lower()
    if not (fenced or looks_like_code(paragraph) or len(key) >= PASTE_MIN_CHARS):
        return paragraph
    if key in seen:
        return REPEATED_PASTE_MARKER
    seen.add(key)
    return paragraph


def layer_texts(messages: Sequence[TranscriptMessage]) -> tuple[str, str, str]:
    """(L5, L4, L3) with the length guard L3 ≤ L4 ≤ L5 in estimated tokens."""
    raw = render_raw(messages)
    readable = render_readable(messages)
    if estimate_tokens(readable) > estimate_tokens(raw):
        readable = raw
    condensed = render_condensed(messages)
    if estimate_tokens(condensed) > estimate_tokens(readable):
        condensed = readable
    return raw, readable, condensed


def percent_of(part: int, whole: int) -> int:
    return 100 if whole <= 0 else math.floor(100 * part / whole)
