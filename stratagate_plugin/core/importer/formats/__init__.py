"""Other systems' memory → the v2 external-memory shape (§11.1), so every import runs
through the same preview, decider and commit.

``detect_format`` sniffs what was pasted or uploaded; ``convert`` turns a non-v2 format
into a v2-shaped dict (the v2 parser then reads it as it reads the export prompt's own
output); ``recover`` is §11.4's offline reader for v2 text that did not parse. All three
are pure: text in, data out, ``InvalidInput`` with one line for what cannot be read.
"""

from collections.abc import Callable
from typing import Any

from ...errors import InvalidInput
from ...text.clean import valid_text
from . import chat_exports, letta, lines, mcp_memory, mem0
from .json_text import try_json, unfenced
from .recovery import recover as _recover

FORMAT_NAMES = ("v2", "lines", "mem0", "mcp-memory", "letta")
CONVERTERS: dict[str, Callable[[str], dict[str, Any]]] = {
    "lines": lines.convert,
    "mem0": mem0.convert,
    "mcp-memory": mcp_memory.convert,
    "letta": letta.convert,
    "chat-history": chat_exports.refuse,  # conversations, not memories: ingest them
}


def detect_format(text: str) -> str:
    """The format ``text`` is in, by its shape: a JSON document's keys, the first line of
    JSON lines, else a plain list. JSON that matches no known source is ``v2`` (broken or
    unusual v2 then goes to recovery), as is text that starts like JSON but does not parse."""
    body = unfenced(valid_text(text))
    parsed, value = try_json(body)
    if parsed:
        return _json_format(value)
    first_line = next((line for line in body.splitlines() if line.strip()), "")
    parsed, value = try_json(first_line)
    if parsed and isinstance(value, dict) and (found := _record_format(value)):
        return found
    return "v2" if body.startswith(("{", "[")) else "lines"


def _json_format(value: Any) -> str:
    if letta.is_agent_file(value):
        return "letta"
    if chat_exports.export_kind(value):
        return "chat-history"
    if isinstance(value, dict):
        if _is_v2(value):
            return "v2"
        if isinstance(value.get("memories"), list) or isinstance(value.get("results"), list):
            return "mem0"
        if isinstance(value.get("entities"), list) or isinstance(value.get("relations"), list):
            return "mcp-memory"
        return _record_format(value) or "v2"
    if isinstance(value, list):
        if value and all(isinstance(item, str) for item in value):
            return "lines"
        first = value[0] if value else None
        return (_record_format(first) if isinstance(first, dict) else None) or "v2"
    return "lines"


def _is_v2(value: dict[str, Any]) -> bool:
    version = value.get("schemaVersion")
    if isinstance(version, str) and version.startswith("stratagate.external-memory"):
        return True
    return isinstance(value.get("candidates"), list) or isinstance(value.get("events"), list)


def _record_format(record: dict[str, Any]) -> str | None:
    """The format one record belongs to: a graph line, or a mem0/OpenMemory memory."""
    if mcp_memory.shape_of(record):
        return "mcp-memory"
    if "memory" in record or ("content" in record and "id" in record):
        return "mem0"
    return None


def convert(text: str, fmt: str) -> dict[str, Any]:
    """``text`` in format ``fmt`` (not ``v2``) → a v2-shaped dict."""
    if fmt == "v2":
        raise InvalidInput("v2 text is read by the v2 parser; there is nothing to convert")
    converter = CONVERTERS.get(fmt)
    if converter is None:
        raise InvalidInput(f"unknown import format {fmt!r}: one of {', '.join(FORMAT_NAMES)}")
    body = valid_text(text)
    if not body.strip():
        raise InvalidInput("the import text is empty")
    return converter(body)


def recover(text: str) -> dict[str, Any]:
    """§11.4 offline recovery: candidates read from text that was meant to be v2 JSON."""
    body = valid_text(text)
    if not body.strip():
        raise InvalidInput("the import text is empty")
    return _recover(body)
