"""Building v2 candidates and documents (§11.1) from what another system stored.

Every converter ends here, so the rules of the v2 shape live in one place: camelCase keys,
no ``null`` anywhere (a field the source lacks is left out), tags that start with the
category, a time only when the source gave one (as UTC ISO-8601 with its offset), and the
source's own order (issue 27): §11.1's instruction → … → preference order is what the export
prompt asks another AI for; a converted file is shown as it was written, so the user finds
each line of it in the wizard where it stood.
"""

from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from ...clock import iso, parse_iso
from .classify import category_for
from .sentences import shorten, title_for

SCHEMA_VERSION = "stratagate.external-memory.v2"
SOURCE_TYPE = "external_ai_memory_export"
SUMMARY_LIMIT = 2000
TAG_LIMIT = 12
TAG_LENGTH = 60
KIND_OF = {"instruction": "instruction", "preference": "preference"}
"""memoryKind by category; everything else a source stored about the user is a ``fact``."""
CRITICALITY_OF = {"preference": "preference", "identity": "identity"}
"""criticality by category (§3.1); the others are left to the parser's ``routine``."""


@dataclass
class Draft:
    """One memory as a converter read it, before it becomes a v2 candidate."""

    summary: str
    hint: str = ""
    """A heading, block label, entity type or source category: the first clue to the category."""
    title: str = ""
    category: str = ""
    """Set when the source itself named a §11.1 category; otherwise it is guessed."""
    tags: tuple[str, ...] = ()
    mentioned_at: str | None = None


@dataclass
class Skipped:
    """What a converter left out and why, counted: it becomes the ``coverageNote``."""

    reasons: Counter[str] = field(default_factory=Counter)

    def add(self, reason: str, count: int = 1) -> None:
        self.reasons[reason] += count

    def note(self, converted: int) -> str:
        said = f"{converted} memories converted"
        if not self.reasons:
            return f"{said}; nothing was left out."
        left = "; ".join(f"{reason} ({n})" for reason, n in sorted(self.reasons.items()))
        return f"{said}; left out: {left}."


def candidate(draft: Draft, confidence: float) -> dict[str, Any]:
    """The v2 candidate for ``draft``: summary whitespace-collapsed and at most 2,000
    characters, a title of its first sentence unless the source named one."""
    summary = shorten(" ".join(draft.summary.split()), SUMMARY_LIMIT)
    category = draft.category or category_for(summary, draft.hint)
    item: dict[str, Any] = {
        "memoryKind": KIND_OF.get(category, "fact"),
        "category": category,
        "title": title_for(draft.title or summary),
        "summary": summary,
        "tags": tags_for(category, draft.tags),
        "scope": "project" if category == "project" else "user",
        "confidence": confidence,
    }
    if draft.mentioned_at:
        item["temporal"] = {"mentionedAt": draft.mentioned_at}
    if category in CRITICALITY_OF:
        item["criticality"] = CRITICALITY_OF[category]
    return item


def tags_for(category: str, extra: tuple[str, ...]) -> list[str]:
    """The category first (§11.1: tags must include it), then the source's own labels,
    each trimmed, without repeats, at most 12."""
    tags = [category]
    for tag in extra:
        cleaned = shorten(" ".join(tag.split()), TAG_LENGTH)
        if cleaned and cleaned not in tags:
            tags.append(cleaned)
    return tags[:TAG_LIMIT]


def document(
    source_system: str,
    drafts: list[Draft],
    skipped: Skipped,
    *,
    confidence: float,
    exported_at: str | None = None,
) -> dict[str, Any]:
    """The v2 document: candidates in the source's order, coverage
    ``full`` when nothing was left out, else ``partial`` with the reasons counted."""
    candidates = [candidate(draft, confidence) for draft in drafts if draft.summary.strip()]
    result: dict[str, Any] = {
        "schemaVersion": SCHEMA_VERSION,
        "sourceType": SOURCE_TYPE,
        "sourceSystem": source_system,
    }
    if exported_at:
        result["exportedAt"] = exported_at
    result["candidates"] = candidates
    result["coverage"] = "partial" if skipped.reasons else "full"
    result["coverageNote"] = skipped.note(len(candidates))
    return result


def utc_time(value: Any) -> str | None:
    """A source's timestamp as UTC ISO-8601, or ``None`` when it has none that can be read:
    ISO text (naive taken as UTC, as the sources write it) or Unix seconds/milliseconds."""
    try:
        if isinstance(value, str) and value.strip():
            return iso(parse_iso(value))
        if isinstance(value, int | float) and not isinstance(value, bool):
            seconds = value / 1000 if abs(value) > 10**11 else value
            return iso(datetime.fromtimestamp(seconds, UTC))
    except (ValueError, OverflowError, OSError):
        return None
    return None


def read_time(value: Any, skipped: Skipped) -> str | None:
    """``utc_time``, counting a time the source gave that could not be read (it is left out)."""
    moment = utc_time(value)
    if moment is None and value is not None and value != "":
        skipped.add("unreadable times")
    return moment


def text_list(value: Any) -> list[str]:
    """The strings of a list (a source's categories or labels); anything else is none."""
    if not isinstance(value, list):
        return []
    return [item for item in value if isinstance(item, str) and item.strip()]
