"""From pasted text to v2 candidates: the strict parse, other systems' formats, recovery.

``to_document`` is the one door: ``v2`` is parsed here; every other format (``lines``,
``mem0``, ``mcp-memory``, ``letta``) is converted by ``core.importer.formats`` and then read
by the same v2 validation (of any length: those files are not written for the
export prompt's 200). With ``auto`` the format is detected (a bulleted list is ``lines``);
other text that is not JSON is left for **recovery** (§11.2): the model's
``recover_external_memory`` task, or offline ``formats.recover``, a reader of the
title/summary pairs of broken JSON, else of plain lists and Markdown bullets. Recovered
items always need the user's confirmation, so nothing recovered is written unseen.
"""

from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field

from ..errors import InvalidInput
from ..llm.base import StructuredTask
from ..remember.rules import first_sentence
from . import formats
from .external_format import (
    MAX_CANDIDATES,
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
CONVERTED_LIMIT = 1_000_000
"""A converted file (mem0, MCP memory, Letta, a list) is taken whole: the 4 MiB text cap
bounds it first, and analysis goes one item at a time with progress (a real 56-block Letta
agent holds 2,107 lines; refusing it whole helped nobody)."""


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
    converted = formats.convert(text, fmt)
    return Parsed(fmt, document_from_data(converted, CONVERTED_LIMIT))


def _detected(text: str) -> str:
    """The converters' guess; ``auto`` (strict v2, else recovery) for v2 and for plain text
    that is not a list (prose is recovered, every item confirmed)."""
    try:
        found = formats.detect_format(text)
    except InvalidInput:
        return "auto"
    if found == "lines":
        return "lines" if formats.lines.looks_like_list(text) else "auto"
    return "auto" if found == "v2" else found


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
    """The offline recovery (``formats.recover``); nothing readable is an empty document."""
    try:
        recovered = formats.recover(text)
    except InvalidInput:
        return document_from_data({"sourceSystem": "recovered", "candidates": []})
    found = recovered["candidates"]
    if len(found) > MAX_CANDIDATES:
        recovered["candidates"] = found[:MAX_CANDIDATES]
        recovered["coverageNote"] += f" Only the first {MAX_CANDIDATES} of {len(found)} were kept."
    return document_from_data(recovered)
