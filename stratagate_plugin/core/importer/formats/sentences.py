"""Cutting memory text into sentences and titles, in English and Chinese.

A saved-memory paragraph ("Dana is a backend engineer. She is moving billing to Rust.")
holds several facts, and §11.1 wants one fact per candidate. A period ends a sentence only
before a space and a capital (or the end), and not after a common abbreviation, so
"St. Louis", "3.5" and "e.g. tea" stay whole; 。！？ always end one.
"""

import re

TITLE_LIMIT = 80
ABBREVIATIONS = frozenset(
    {"mr", "mrs", "ms", "dr", "prof", "st", "sr", "jr", "vs", "etc", "e.g", "i.e", "inc", "no"}
)
_BOUNDARY = re.compile(r"(?<=[.!?])\s+(?=[\"'“(]?[A-Z0-9])|(?<=[。！？])\s*")


def sentences(text: str) -> list[str]:
    """The sentences of ``text``, each stripped; a cut after an abbreviation is undone."""
    parts: list[str] = []
    for piece in _BOUNDARY.split(text):
        piece = piece.strip()
        if not piece:
            continue
        if parts and _ends_with_abbreviation(parts[-1]):
            parts[-1] = f"{parts[-1]} {piece}"
        else:
            parts.append(piece)
    return parts


def _ends_with_abbreviation(sentence: str) -> bool:
    last = sentence.rsplit(None, 1)[-1].rstrip(".").lower()
    return sentence.endswith(".") and last in ABBREVIATIONS


def title_for(text: str) -> str:
    """The first sentence of ``text`` (without its end mark), at most 80 characters."""
    first_line = next((line for line in text.splitlines() if line.strip()), "")
    first = next(iter(sentences(first_line)), "")
    return shorten(first.rstrip(".。!！?？;；").strip() or first, TITLE_LIMIT)


def shorten(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, at a space when one is near, marked with …"""
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    if space > limit // 2:
        cut = cut[:space]
    return cut.rstrip() + "…"
