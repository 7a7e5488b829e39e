"""The one rule for text that cannot be stored: replace it with U+FFFD on entry.

Python strings can hold lone surrogates (``"\\ud800"`` from JSON escapes, or the
``surrogateescape`` bytes of a non-UTF-8 command-line argument); SQLite and UTF-8 files
cannot. They can hold U+0000 too (a JSON ``"\\u0000"``), which PostgreSQL's text cannot,
and which would make a SQLite memory one that ``db copy`` cannot take to a server: it is
replaced on both backends, so the same turn stores the same words on either. Every
entrance (CLI arguments, ingest files, model replies, tool results, web forms) passes text
through ``valid_text`` so a turn is stored with a visible mark instead of failing to store.
"""

import re
from typing import Any

REPLACEMENT = "\ufffd"
_SURROGATE = re.compile("[\ud800-\udfff]")


def valid_text(text: str) -> str:
    """``text`` with every lone surrogate and NUL replaced by U+FFFD (valid text is returned
    as is)."""
    if "\x00" in text:
        text = text.replace("\x00", REPLACEMENT)
    if text.isascii():
        return text
    return _SURROGATE.sub(REPLACEMENT, text)


def valid_bytes(data: bytes) -> tuple[str, int]:
    """UTF-8 ``data`` decoded with invalid bytes replaced; the text and how many were bad."""
    try:
        return data.decode("utf-8"), 0
    except UnicodeDecodeError:
        text = data.decode("utf-8", errors="replace")
        return text, text.count(REPLACEMENT) - data.count(REPLACEMENT.encode())


def valid_json_value(value: Any) -> Any:
    """A parsed JSON value with ``valid_text`` applied to every string, keys included."""
    if isinstance(value, str):
        return valid_text(value)
    if isinstance(value, list):
        return [valid_json_value(item) for item in value]
    if isinstance(value, dict):
        return {valid_text(str(k)): valid_json_value(v) for k, v in value.items()}
    return value
