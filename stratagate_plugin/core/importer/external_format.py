"""The ``stratagate.external-memory.v2`` document (spec §11.1), parsed within its limits.

Another AI, given the export prompt, writes this JSON; people paste it with a Markdown fence
around it, with fields too long, with too many tags. The parser forgives what can be cut
to size (texts, tags, quotes, participants; confidence clamped to [0, 1]) and refuses, in
one line naming the field, what has the wrong shape: a field of the wrong type, an unknown
enum value, more than 200 candidates, a body over 4 MB, binary or zip-like bytes, JSON
nested deeper than any real export. A candidate without a title or a summary is dropped and
counted (``ExternalDocument.dropped``), never guessed. Text that is not JSON at all raises
``NotJson`` (an ``InvalidInput``) so the caller may try recovery instead.
"""

import json
import re
from collections.abc import Callable
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
)

from ..errors import InvalidInput, validation_problems
from ..text.clean import valid_json_value

SchemaVersion = Literal["stratagate.external-memory.v2", "stratagate.external-memory.v1"]
SourceType = Literal["external_ai_memory_export"]
V2: SchemaVersion = "stratagate.external-memory.v2"
V1: SchemaVersion = "stratagate.external-memory.v1"
SOURCE_TYPE: SourceType = "external_ai_memory_export"
MAX_BYTES = 4 * 1024 * 1024
MAX_CANDIDATES = 200  # §11.1: what another AI writes from the export prompt
# StrataGate's own export and other systems' files (mem0, MCP memory, Letta, pasted lists)
# are not written for that limit: a round trip must not fail on a space of 500 events.
MAX_BULK_CANDIDATES = 2000
EXPORT_SOURCE = "stratagate"
MAX_DEPTH = 16
TITLE_LIMIT, SUMMARY_LIMIT, NARRATIVE_LIMIT = 160, 2000, 8000
MAX_TAGS, TAG_LIMIT, MAX_QUOTES, QUOTE_LIMIT = 12, 80, 12, 500
TEMPORAL_LIMIT, EVENT_TYPE_LIMIT, MAX_PARTICIPANTS = 200, 80, 24
CATEGORIES = ("instruction", "identity", "career", "project", "preference")
Category = Literal["instruction", "identity", "career", "project", "preference"]
MemoryKind = Literal["instruction", "preference", "fact", "event"]
Coverage = Literal["full", "partial", "limited"]
_FENCE = re.compile(r"^\s*```[A-Za-z0-9_-]*[ \t]*\r?\n(?P<body>.*?)\r?\n?```\s*$", re.DOTALL)
_ZIP_MAGIC = ("PK\x03\x04", "PK\x05\x06", "\x1f\x8b", "%PDF")


class NotJson(InvalidInput):
    """The text is not JSON at all: a plain list, prose, broken JSON (recovery may help)."""


def _cut(limit: int) -> Callable[[str], str]:
    return lambda text: text.strip()[:limit]


def _cut_list(limit: int, each: int) -> Callable[[list[str]], list[str]]:
    def cut(values: list[str]) -> list[str]:
        kept = dict.fromkeys(v.strip()[:each] for v in values if v.strip())
        return list(kept)[:limit]

    return cut


def _clamp(value: float) -> float:
    return min(1.0, max(0.0, value))


def _no_bool(value: Any) -> Any:
    if isinstance(value, bool):
        raise ValueError("Input should be a number, not true/false")
    return value


Short = Annotated[str, AfterValidator(_cut(TEMPORAL_LIMIT))]
Confidence = Annotated[float, BeforeValidator(_no_bool), AfterValidator(_clamp)]


class _Model(BaseModel):
    model_config = ConfigDict(populate_by_name=True, extra="ignore", frozen=True)


class ExternalTemporal(_Model):
    """When it happened, as far as the exporter reliably knew (never guessed)."""

    mentioned_at: Short | None = Field(None, alias="mentionedAt")
    happened_start: Short | None = Field(None, alias="happenedStart")
    happened_end: Short | None = Field(None, alias="happenedEnd")
    original_text: Short | None = Field(None, alias="originalText")
    precision: Short | None = None
    basis: Short | None = None
    status: Short | None = None
    participants: Annotated[
        list[str], AfterValidator(_cut_list(MAX_PARTICIPANTS, TEMPORAL_LIMIT))
    ] = Field(default_factory=list)
    event_type: Annotated[str, AfterValidator(_cut(EVENT_TYPE_LIMIT))] | None = Field(
        None, alias="eventType"
    )


class ExternalCandidate(_Model):
    """One independent memory; ``tags`` start with the category when there is one."""

    memory_kind: MemoryKind | None = Field(None, alias="memoryKind")
    category: Category | None = None
    title: Annotated[str, AfterValidator(_cut(TITLE_LIMIT))]
    summary: Annotated[str, AfterValidator(_cut(SUMMARY_LIMIT))]
    narrative: Annotated[str, AfterValidator(_cut(NARRATIVE_LIMIT))] | None = None
    tags: Annotated[list[str], AfterValidator(_cut_list(MAX_TAGS * 2, TAG_LIMIT))] = Field(
        default_factory=list
    )
    quotes: Annotated[list[str], AfterValidator(_cut_list(MAX_QUOTES, QUOTE_LIMIT))] = Field(
        default_factory=list
    )
    temporal: ExternalTemporal = Field(default_factory=lambda: ExternalTemporal.model_validate({}))
    scope: Literal["user", "project", "session"] = "user"
    criticality: Annotated[str, AfterValidator(_cut(40))] | None = None
    confidence: Confidence | None = None

    @field_validator("tags")
    @classmethod
    def _twelve(cls, tags: list[str]) -> list[str]:
        return tags[:MAX_TAGS]

    def model_post_init(self, _context: Any) -> None:
        """The category is the first tag (spec: tags must include it), within twelve."""
        if self.category and self.category not in self.tags:
            object.__setattr__(self, "tags", [self.category, *self.tags][:MAX_TAGS])

    def to_v2(self) -> dict[str, Any]:
        """The candidate as v2 JSON (camelCase, no empty or null fields)."""
        data = self.model_dump(by_alias=True, exclude_none=True)
        temporal = {k: v for k, v in data.get("temporal", {}).items() if v not in ([], "")}
        data["temporal"] = temporal
        return {k: v for k, v in data.items() if v not in ([], {})}


class ExternalDocument(_Model):
    """A whole export: its candidates in order, and how many were dropped (no title/summary)."""

    schema_version: SchemaVersion = Field(V2, alias="schemaVersion")
    source_type: SourceType = Field(SOURCE_TYPE, alias="sourceType")
    source_system: Annotated[str, AfterValidator(_cut(TEMPORAL_LIMIT))] = Field(
        "unknown", alias="sourceSystem"
    )
    exported_at: Short | None = Field(None, alias="exportedAt")
    candidates: list[ExternalCandidate] = Field(default_factory=list)
    coverage: Coverage | None = None
    coverage_note: Annotated[str, AfterValidator(_cut(SUMMARY_LIMIT))] | None = Field(
        None, alias="coverageNote"
    )
    uncertain_items: Annotated[list[str], AfterValidator(_cut_list(50, SUMMARY_LIMIT))] = Field(
        default_factory=list, alias="uncertainItems"
    )
    dropped: int = 0


def parse_external(text: str) -> ExternalDocument:
    """The v2 (or v1) document in ``text``; ``InvalidInput`` (``NotJson`` if not JSON)."""
    return document_from_data(load_json(text))


def load_json(text: str) -> Any:
    """The JSON value of ``text`` (fence stripped) after the size, binary and depth checks."""
    check_text(text)
    body = strip_fence(text)
    try:
        data = json.loads(body)
    except RecursionError:
        raise InvalidInput(f"the JSON is nested deeper than {MAX_DEPTH} levels") from None
    except ValueError as error:
        raise NotJson(f"not JSON: {error}") from None
    if _depth(data) > MAX_DEPTH:
        raise InvalidInput(f"the JSON is nested deeper than {MAX_DEPTH} levels")
    return data


def check_text(text: object) -> None:
    """Refuse what no importer reads: non-text, over 4 MB, binary or zip-like bytes."""
    if not isinstance(text, str):
        raise InvalidInput("the import must be text")
    if len(text) > MAX_BYTES or len(text.encode("utf-8", "surrogatepass")) > MAX_BYTES:
        raise InvalidInput(f"the import is larger than {MAX_BYTES // (1024 * 1024)} MB")
    if text.startswith(_ZIP_MAGIC) or "\x00" in text or _mostly_control(text[:4096]):
        raise InvalidInput("the import looks binary (zip, gzip, PDF or other bytes), not text")
    if not text.strip():
        raise InvalidInput("the import is empty")


def _mostly_control(head: str) -> bool:
    odd = sum(1 for c in head if (ord(c) < 32 and c not in "\t\r\n") or c == "\ufffd")
    return odd > max(8, len(head) // 10)


def strip_fence(text: str) -> str:
    """The body of a Markdown code fence wrapped around the whole text, else the text."""
    found = _FENCE.match(text)
    return found.group("body") if found else text


def _depth(data: Any) -> int:
    deepest, stack = 0, [(data, 1)]
    while stack:
        value, depth = stack.pop()
        deepest = max(deepest, depth)
        if depth > MAX_DEPTH:
            return depth
        children = value.values() if isinstance(value, dict) else value
        if isinstance(value, dict | list):
            stack.extend((child, depth + 1) for child in children)
    return deepest


def document_from_data(data: Any, limit: int | None = None) -> ExternalDocument:
    """Validate a decoded v2-shaped value (also what the format converters produce), with
    at most ``limit`` candidates (by default 200, or 2,000 for StrataGate's own export)."""
    if not isinstance(data, dict):
        raise InvalidInput("the import must be a JSON object with a candidates list")
    data = valid_json_value(data)  # "\\ud800" escapes become U+FFFD, as on every entry
    raw = data.get("candidates", data.get("events", []))
    if not isinstance(raw, list):
        raise InvalidInput("invalid import: candidates: Input should be a valid list")
    if limit is None:
        ours = data.get("sourceSystem") == EXPORT_SOURCE
        limit = MAX_BULK_CANDIDATES if ours else MAX_CANDIDATES
    if len(raw) > limit:
        raise InvalidInput(f"the import has {len(raw)} candidates; at most {limit}")
    kept = [c for c in raw if not _lacks_text(c)]
    fields = {k: v for k, v in data.items() if k not in ("candidates", "events", "dropped")}
    try:
        return ExternalDocument.model_validate(
            {**fields, "candidates": kept, "dropped": len(raw) - len(kept)}
        )
    except ValidationError as error:
        raise InvalidInput(_first_problem(error, data, kept)) from None


def _lacks_text(candidate: Any) -> bool:
    """No title or no summary (absent, null or blank): the candidate is dropped."""
    if not isinstance(candidate, dict):
        return False  # validation reports it as a wrong type
    return any(
        candidate.get(key) is None
        or (isinstance(candidate[key], str) and not candidate[key].strip())
        for key in ("title", "summary")
    )


def _first_problem(error: ValidationError, data: dict[str, Any], kept: list[Any]) -> str:
    """One line, naming the field; a candidate's index is its place in the original list."""
    problem = validation_problems(error)[0]
    where = error.errors(include_url=False)[0]["loc"]
    if len(where) > 1 and where[0] == "candidates" and isinstance(where[1], int):
        original: list[Any] = data.get("candidates", data.get("events")) or []
        index = next(i for i, c in enumerate(original) if c is kept[where[1]])
        problem = problem.replace(f"candidates.{where[1]}", f"candidates.{index}", 1)
    extra = f" (and {error.error_count() - 1} more)" if error.error_count() > 1 else ""
    return f"invalid import: {problem}{extra}"
