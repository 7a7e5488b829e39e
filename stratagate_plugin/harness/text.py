"""The harness's text rules: what is not valid Unicode becomes U+FFFD as it enters (a
session line must always store), and an image reads ``[image: what it shows]`` in a
folded turn, as the memory engine records images too."""

import re
from typing import Any

REPLACEMENT = "\ufffd"
IMAGE_DESCRIPTION_CHARS = 300
_SURROGATE = re.compile("[\ud800-\udfff]")
_WHITESPACE = re.compile(r"\s+")


def valid_text(text: str) -> str:
    """``text`` with every lone surrogate and NUL (which PostgreSQL cannot store) replaced by
    U+FFFD (valid text returned as is)."""
    if "\x00" in text:
        text = text.replace("\x00", REPLACEMENT)
    return text if text.isascii() else _SURROGATE.sub(REPLACEMENT, text)


def valid_json(value: Any) -> Any:
    """A parsed JSON value with ``valid_text`` applied to every string, keys included."""
    if isinstance(value, str):
        return valid_text(value)
    if isinstance(value, dict):
        return {valid_text(str(key)): valid_json(item) for key, item in value.items()}
    return [valid_json(item) for item in value] if isinstance(value, list) else value


def image_marker(description: str = "") -> str:
    """``[image]``, or ``[image: …]`` with the description on one line, cut to 300 characters."""
    text = _WHITESPACE.sub(" ", description).strip()[:IMAGE_DESCRIPTION_CHARS].rstrip()
    return f"[image: {text}]" if text else "[image]"
