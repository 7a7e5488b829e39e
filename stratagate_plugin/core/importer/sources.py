"""From pasted text to v2 candidates: the strict parse, other systems' formats, recovery.

``to_document`` is the one door: ``v2`` is parsed here; every other format (``lines``,
``mem0``, ``mcp-memory``, ``letta``) goes through ``core.importer.formats`` (imported only
when asked for, so this module works before that package exists). With ``auto`` the format
is detected; text that is not JSON at all is left for **recovery** (§11.2): the model's
``recover_external_memory`` task, or offline ``recover_lines``, a reader of plain lists,
Markdown bullets and the title/summary pairs of broken JSON. Recovered items always need
the user's confirmation, so nothing recovered is written unseen.
"""

import importlib
import json
import re
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ..errors import InvalidInput
from ..llm.base import StructuredTask
from ..remember.rules import first_sentence
from .external_format import (
    MAX_CANDIDATES,
    SUMMARY_LIMIT,
    ExternalDocument,
    NotJson,
    check_text,
    document_from_data,
    parse_external,
    strip_fence,
)
from .jobs import IMPORT_FORMATS

RECOVER_EXTERNAL_MEMORY = "recover_external_memory"
RECOVERY_TEXT_LIMIT = 60_000
_BULLET = re.compile(r"^\s*(?:[-*•+·]|\d{1,3}[.)、]|\[[ xX]\])\s*(?:\[[ xX]\]\s*)?")
_PAIR = re.compile(
    r'"title"\s*:\s*"(?P<title>(?:[^"\\]|\\.)*)"[^{}]*?"summary"\s*:\s*"(?P<summary>(?:[^"\\]|\\.)*)"',
    re.DOTALL,
)
_NOT_MEMORY = re.compile(r"^(#|```|>|[\[\]{}(),:;\"'`~=_*\-\s]*$)")


@dataclass(frozen=True)
class Parsed:
    """A parsed document, or (``document`` None) text left for recovery; ``fmt`` as read."""

    fmt: str
    document: ExternalDocument | None


def to_document(text: str, fmt: str = "auto") -> Parsed:
    """Parse ``text`` as ``fmt``; ``InvalidInput`` in one line for what no reader accepts."""
    if fmt not in IMPORT_FORMATS:
        raise InvalidInput(f"unknown import format {fmt!r}; one of {', '.join(IMPORT_FORMATS)}")
    check_text(text)
    if fmt == "auto":
        fmt = _detected(text)
    if fmt in ("auto", "v2"):
        try:
            return Parsed("v2", parse_external(text))
        except NotJson:
            if fmt == "v2" and _looks_like_json(text):
                raise
            return Parsed("v2", None)
    converted = _formats(fmt).convert(text, fmt)
    return Parsed(fmt, document_from_data(converted))


def _formats(fmt: str) -> ModuleType:
    try:
        return importlib.import_module("stratagate_plugin.core.importer.formats")
    except ImportError:
        if fmt == "lines":
            return _LinesOnly()  # type: ignore[return-value]
        raise InvalidInput(f"the {fmt} importer is not installed in this build") from None


class _LinesOnly:
    """Stands in for ``formats`` until it is merged: plain lists only."""

    @staticmethod
    def convert(text: str, fmt: str) -> dict[str, Any]:
        return {"sourceSystem": "plain list", "candidates": recover_lines(text)}


def _detected(text: str) -> str:
    """The converters' guess (``v2`` for our own format), or ``auto`` without them."""
    try:
        formats = importlib.import_module("stratagate_plugin.core.importer.formats")
    except ImportError:
        return "auto"
    try:
        found = str(formats.detect_format(text))
    except InvalidInput:
        return "auto"
    return "auto" if found in ("v2", "lines") else found


def _looks_like_json(text: str) -> bool:
    return strip_fence(text).lstrip()[:1] in ("{", "[")


# -- recovery -----------------------------------------------------------------------------


class RecoveredCandidate(BaseModel):
    model_config = ConfigDict(extra="ignore")

    title: str = ""
    summary: str
    tags: list[str] = Field(default_factory=list)
    quotes: list[str] = Field(default_factory=list)


class Recovered(BaseModel):
    """The recovery task's answer: candidates found in the text, none invented."""

    model_config = ConfigDict(extra="ignore")

    candidates: list[RecoveredCandidate] = Field(default_factory=list)


RECOVERY_INSTRUCTIONS = (
    "The text below was meant to be a memory export but is not valid JSON, or is a plain "
    "list. Recover each independent memory it states as one candidate (title: a short "
    "label; summary: the memory itself, in its own words). Invent nothing, guess no dates, "
    "leave out ids, phone numbers, emails, passwords and keys. At most 200 candidates."
)


def recovery_task(text: str) -> StructuredTask[Recovered]:
    payload = {"text": strip_fence(text)[:RECOVERY_TEXT_LIMIT]}
    return StructuredTask(RECOVER_EXTERNAL_MEMORY, Recovered, RECOVERY_INSTRUCTIONS, payload)


def recovered_document(recovered: Recovered) -> ExternalDocument:
    """The model's recovery as a document (within the same limits as a strict parse)."""
    raw = [c.model_dump() for c in recovered.candidates if c.summary.strip()]
    for item in raw:
        item["title"] = item["title"].strip() or first_sentence(item["summary"])
    return document_from_data({"sourceSystem": "recovered", "candidates": raw[:MAX_CANDIDATES]})


def recover_offline(text: str) -> ExternalDocument:
    """The offline recovery: title/summary pairs of broken JSON, else list lines."""
    body = strip_fence(text)
    pairs = [
        {"title": _unescape(m["title"]), "summary": _unescape(m["summary"])}
        for m in _PAIR.finditer(body)
    ]
    found = pairs or recover_lines(body)
    return document_from_data({"sourceSystem": "recovered", "candidates": found[:MAX_CANDIDATES]})


def recover_lines(text: str) -> list[dict[str, Any]]:
    """One candidate per line or bullet of a plain list (headings, fences and punctuation
    skipped); an indented continuation line joins the bullet above it."""
    found: list[dict[str, Any]] = []
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or _NOT_MEMORY.match(stripped):
            continue
        continued = line[:1] in (" ", "\t") and found and not _BULLET.match(line)
        item = " ".join(_BULLET.sub("", stripped, count=1).split())
        if not item:
            continue
        if continued:
            found[-1]["summary"] = f"{found[-1]['summary']} {item}"[:SUMMARY_LIMIT]
        else:
            found.append({"title": first_sentence(item), "summary": item[:SUMMARY_LIMIT]})
    return found


def _unescape(value: str) -> str:
    try:
        return str(json.loads(f'"{value}"'))
    except ValueError:
        return value
