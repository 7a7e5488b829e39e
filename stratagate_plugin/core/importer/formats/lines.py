"""A plain list of saved memories, as ChatGPT's "Manage memories" or Claude's memory show it.

What a user copies out of those screens is text: one memory per line ("Is a backend
engineer at Acme.", "User prefers short answers."), often as ``-``/``*``/``•`` or numbered
bullets, sometimes under Markdown headings ("## Work context", "**Personal**") and, in
Claude's summary, as paragraphs of prose. Each bullet is one memory; a prose line is cut
into sentences (one fact per candidate, §11.1); a heading is the category clue of the
lines under it. Nothing is rewritten: the summary is the line as the user saw it.

The same reader serves Letta's memory blocks (``letta.py``) and the offline recovery of
§11.4 (``recovery.py``).
"""

import re
from dataclasses import replace
from typing import Any

from ...errors import InvalidInput
from .candidates import Draft, Skipped, document
from .json_text import try_json, unfenced
from .sentences import sentences

CONFIDENCE = 0.8
LIST_SHARE = 0.6  # of the lines that are not headings: bullets make it a list
"""Plain text: the memory is the user's own list, but its structure was guessed."""

_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.*?)[\s#]*$")
_BOLD_HEADING = re.compile(r"^\s*(\*\*|__)([^*_]+?)\1\s*[:：]?\s*$")
_BULLET = re.compile(
    r"^\s*(?:[-*+•·‣▪●◦–—]|\d{1,3}[.)、]|[(（]\d{1,3}[)）])\s+(?:\[[ xX]\]\s+)?(.*)$"
)
_RULE = re.compile(r"^\s*([-*_=])(?:\s*\1){2,}\s*$")
_PLACEHOLDER = re.compile(r"^[^:：]{1,40}[:：]\s*(\?+|unknown|n/?a|none|-+|未知|无)?\s*$", re.I)
_EMPHASIS = re.compile(r"(\*\*|__)(.+?)\1")
_FENCE = re.compile(r"^\s*(```|~~~)")


def convert(text: str) -> dict[str, Any]:
    """A pasted list of memories → a v2 document (``sourceSystem`` unknown: the text does
    not say which assistant it came from)."""
    skipped = Skipped()
    drafts = read_drafts(list_text(text), skipped)
    if not drafts:
        raise InvalidInput("no memories found: every line is blank, a heading or a placeholder")
    return document("unknown", drafts, skipped, confidence=CONFIDENCE)


def list_text(text: str) -> str:
    """The list's text: a JSON array of strings is one memory per string; other JSON is
    not a plain list and is refused rather than imported as lines of braces."""
    text = unfenced(text)
    parsed, value = try_json(text)
    if not parsed or isinstance(value, str | int | float | bool) or value is None:
        return text
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return "\n".join(f"- {' '.join(item.split())}" for item in value if item.strip())
    raise InvalidInput("this is JSON, not a plain list of memories: choose the format it came from")


def looks_like_list(text: str) -> bool:
    """Whether ``text`` is a list of memories (most lines bullets, or a JSON array of
    strings) rather than prose: ``auto`` imports a list as ``lines`` and leaves prose to
    recovery, where every item is confirmed."""
    body = unfenced(text)
    parsed, value = try_json(body)
    if parsed:
        return isinstance(value, list) and all(isinstance(item, str) for item in value)
    rows = [
        line
        for line in body.splitlines()
        if line.strip() and not _RULE.match(line) and heading_of(line) is None
    ]
    bullets = sum(1 for line in rows if _BULLET.match(line))
    return bool(rows) and bullets >= LIST_SHARE * len(rows)


def read_drafts(text: str, skipped: Skipped, hint: str = "") -> list[Draft]:
    """One draft per bullet and per sentence of a prose line, each with the heading it
    stands under (or ``hint``) as its category clue."""
    drafts: list[Draft] = []
    heading, in_bullet = hint, False
    for line in text.splitlines():
        if not line.strip() or _RULE.match(line) or _FENCE.match(line):
            in_bullet = in_bullet and bool(line.strip())
            continue
        if (title := heading_of(line)) is not None:
            heading, in_bullet = title or heading, False
            continue
        bullet = _BULLET.match(line)
        body = _EMPHASIS.sub(r"\2", bullet.group(1) if bullet else line).strip()
        if not any(char.isalnum() for char in body):  # "#", "…", a stray bracket
            continue
        if in_bullet and not bullet and line[:1] in (" ", "\t"):  # a wrapped bullet
            drafts[-1] = replace(drafts[-1], summary=f"{drafts[-1].summary} {body}")
            continue
        in_bullet = bool(bullet)
        if _PLACEHOLDER.match(body):
            skipped.add("lines without a value")
            continue
        pieces = [body] if bullet else sentences(body)
        drafts.extend(Draft(summary=piece, hint=heading) for piece in pieces)
    return drafts


def heading_of(line: str) -> str | None:
    """The heading a line is (``## Work``, ``**Work**``, ``Work context:``; ``""`` for an
    empty ``##``), or ``None`` for a line that is not one."""
    for pattern, group in ((_HEADING, 1), (_BOLD_HEADING, 2)):
        if match := pattern.match(line):
            return match.group(group).strip().rstrip(":：").strip()
    stripped = line.strip()
    short = len(stripped) <= 60 and not _BULLET.match(line)
    if short and stripped.endswith((":", "：")) and stripped.count(":") + stripped.count("：") == 1:
        return stripped.rstrip(":：").strip()
    return None
