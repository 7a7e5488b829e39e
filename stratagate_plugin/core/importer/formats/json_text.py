"""Reading pasted or uploaded text as JSON or JSON lines, with one-line errors that say where.

A pasted export often arrives wrapped in a Markdown fence, with a sentence of chat around
it; that wrapper is removed before anything is read. Nesting is bounded as for every
import file (``json_document.MAX_DEPTH``), and strings come back valid (U+FFFD for lone
surrogate escapes) so no converter has to think about either.
"""

import json
import re
from typing import Any

from ...errors import InvalidInput
from ...text.clean import valid_json_value
from ..json_document import MAX_DEPTH, nesting_depth

_FENCE = re.compile(r"^[ \t]*```[\w.+-]*[ \t]*\n(.*?)\n[ \t]*```[ \t]*$", re.DOTALL | re.MULTILINE)


def unfenced(text: str) -> str:
    """``text`` without a byte-order mark, and the inside of its first Markdown fence when
    it has one (the prose around a fenced export is the other AI talking, not memory)."""
    text = text.lstrip("\ufeff").strip()
    if match := _FENCE.search(text):
        return match.group(1).strip()
    if text.startswith("```"):  # an opening fence whose closing one was cut off
        return text.split("\n", 1)[1].strip() if "\n" in text else ""
    return text


def load_json(text: str, what: str) -> Any:
    """The JSON value of ``text``; an error names ``what`` and the line and column."""
    try:
        value = json.loads(text)
    except RecursionError:
        raise InvalidInput(f"{what} is nested deeper than {MAX_DEPTH} levels") from None
    except json.JSONDecodeError as error:
        raise InvalidInput(
            f"{what} is not JSON: {error.msg} (line {error.lineno}, column {error.colno})"
        ) from None
    except ValueError as error:  # an integer too long to convert
        raise InvalidInput(f"{what} is not JSON: {error}") from None
    if nesting_depth(value) > MAX_DEPTH:
        raise InvalidInput(f"{what} is nested deeper than {MAX_DEPTH} levels")
    return valid_json_value(value)


def try_json(text: str) -> tuple[bool, Any]:
    """``(True, value)`` when ``text`` is one JSON value, else ``(False, None)``."""
    try:
        return True, load_json(text, "text")
    except InvalidInput:
        return False, None


def load_json_lines(text: str, what: str) -> list[tuple[int, Any]]:
    """``(line number, value)`` for each non-blank line; a bad line is ``line 3: not JSON``."""
    rows = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            rows.append((number, load_json(line, f"{what} line {number}")))
        except InvalidInput:
            raise InvalidInput(f"{what} line {number}: not JSON") from None
    return rows


def json_records(text: str, what: str) -> list[tuple[str, Any]]:
    """The records of a JSON document or of JSON lines, each with where it came from
    (``item 2`` or ``line 3``): one object, a list of them, or one object per line."""
    whole, value = try_json(text)
    if whole:
        items = value if isinstance(value, list) else [value]
        return [(f"item {index}", item) for index, item in enumerate(items, start=1)]
    return [(f"line {number}", item) for number, item in load_json_lines(text, what)]
