"""The bytes of an import file → a JSON value whose every string is valid text.

Invalid UTF-8 and lone-surrogate escapes (``"\\ud800"``) become U+FFFD here, on entry, so a
turn is stored with a visible mark instead of failing deep in the store; how many bytes
were replaced is counted so the caller can say so. Nesting is bounded because Python's
JSON decoder, and every recursive walk after it, stops at the interpreter's recursion
limit with a ``RecursionError`` that names nothing.
"""

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from ..errors import InvalidInput
from ..text.clean import valid_bytes, valid_json_value
from .input_file import STDIN, read_capped

MAX_DEPTH = 100
"""Deepest list/object nesting accepted: far beyond any message list or tool argument."""
MAX_FILE_BYTES = 64 * 1024 * 1024
"""Largest file read (LoCoMo's ten conversations are under 3 MB): a bound, not a quota."""


@dataclass(frozen=True)
class JsonDocument:
    value: Any
    notes: tuple[str, ...] = ()
    """Warnings for the user, each naming the file (invalid bytes that were replaced)."""


def read_json_file(
    path: Path | str, cap: int = MAX_FILE_BYTES, stdin: BinaryIO | None = None
) -> JsonDocument:
    """The one place an import file's bytes are read (``-``: ``stdin``), at most ``cap``
    of them, so a directory, a device or a missing file is one line naming it."""
    source = "stdin" if str(path) == STDIN else str(path)
    return decode_json(read_capped(path, cap, stdin), source)


def decode_json(data: bytes, source: str) -> JsonDocument:
    """Parse ``data`` read from ``source`` (a file name); an error is one line naming it."""
    if not data.strip():
        raise InvalidInput(f"{source} is empty")
    text, replaced = valid_bytes(data)
    too_deep = InvalidInput(f"{source} is nested deeper than {MAX_DEPTH} levels")
    try:
        value = json.loads(text)
    except RecursionError:
        raise too_deep from None
    except ValueError as error:  # JSONDecodeError, or an integer too long to convert
        raise InvalidInput(f"{source} is not valid JSON: {error}") from None
    if nesting_depth(value) > MAX_DEPTH:
        raise too_deep
    notes = (f"{source}: {replaced} bytes of invalid UTF-8 replaced with U+FFFD",)
    return JsonDocument(valid_json_value(value), notes if replaced else ())


def nesting_depth(value: Any) -> int:
    """How deep lists and objects nest (a scalar is 0), found without recursion."""
    deepest, pending = 0, [(value, 0)]
    while pending:
        item, depth = pending.pop()
        if isinstance(item, dict):
            item = list(item.values())
        if isinstance(item, list):
            deepest = max(deepest, depth + 1)
            pending.extend((child, depth + 1) for child in item)
    return deepest
