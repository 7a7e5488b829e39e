"""The memory directory (spec §5.5): the injected text, the topic page, a bounded topic.

Everything here is navigation only: it names where memory is, never what is true. The
injected directory fits 400 estimated tokens in every case — when the entries do not,
it shows the total, each category with its count, how to page, and a first entry per
category while it fits, so every branch stays reachable. ``memory_expand_topic`` fits
2,400: the section index first, then the overview paragraphs that fit.
"""

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from ..errors import InvalidInput
from ..llm.tasks import TopicSection
from ..retrieval.bm25 import bm25_rank_counted, weighted_tokens
from ..text.search_terms import query_tokens
from ..text.token_budget import estimate_tokens
from .categories import CATEGORIES, CATEGORY_LABELS
from .directory_words import EN, WORDS, DirectoryWords
from .merge import ordered_paragraphs, ordered_sections
from .model import Topic

DIRECTORY_BUDGET = 400
EXPAND_BUDGET = 2_400
EXPAND_SOURCE_IDS = 12
_MARGIN = 16
SECTION_PAGE = 9  # member events per page of a section (spec §5.5: ≤ 9 a read-only page)
SECTION_PAGING = {
    "tool": "memory_expand_topic",
    "section": "a section's number",
    "offset": "its nextOffset (0 when its eventIds are not shown)",
}


@dataclass(frozen=True)
class Entry:
    """One line of the directory: a chapter, or a fallback entry for one event."""

    id: str
    title: str
    description: str
    category: str
    source_event_count: int
    is_fallback: bool = False
    status: str = "ready"

    def card(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "title": self.title,
            "description": self.description,
            "category": self.category,
            "sourceEventCount": self.source_event_count,
            "isFallback": self.is_fallback,
            "status": self.status,
        }


@dataclass
class Listing:
    """Entries of one page, with the totals the directory and the list tool report."""

    total: int
    entries: list[Entry]
    category_counts: dict[str, int] = field(default_factory=dict)
    firsts: dict[str, Entry] = field(default_factory=dict)  # first entry of each category


def entry_line(
    entry: Entry, title_chars: int = 64, description_chars: int = 48, words: DirectoryWords = EN
) -> str:
    """``- <id>: <title>; <description>`` (full-width separators in Chinese); a pending
    chapter and a fallback entry in the directory's own language."""
    title = words.pending_title if entry.status == "pending" else entry.title
    line = f"- {entry.id}{words.entry_sep}{title[:title_chars]}"
    description = words.fallback_description if entry.is_fallback else entry.description
    description = description[:description_chars]
    return f"{line}{words.description_sep}{description}" if description else line


def render_directory(listing: Listing, budget: int = DIRECTORY_BUDGET, language: str = "en") -> str:
    """The directory text in ``language`` (en, zh), ≤ ``budget`` estimated tokens; "" when
    the space has no entry."""
    if listing.total == 0:
        return ""
    words = WORDS[language]
    lines = [words.header, words.notice, *(entry_line(e, words=words) for e in listing.entries)]
    text = "\n".join(lines)
    if len(listing.entries) == listing.total and estimate_tokens(text) <= budget:
        return text
    return _overview(listing, budget, words)


def _overview(listing: Listing, budget: int, words: DirectoryWords) -> str:
    counted = [c for c in CATEGORIES if listing.category_counts.get(c)]
    lines = [
        words.header,
        words.notice,
        words.totals.format(total=listing.total, categories=len(counted)),
    ]
    lines += [
        words.category_line.format(id=c, label=words.labels[c], count=listing.category_counts[c])
        for c in counted
    ]
    lines.append(words.paging)
    firsts = [listing.firsts[c] for c in counted if c in listing.firsts]
    if not firsts:
        return "\n".join(lines)
    text = "\n".join([*lines, words.firsts])
    added = 0
    for entry in firsts:
        candidate = f"{text}\n{entry_line(entry, 40, 0, words)}"
        if estimate_tokens(candidate) > budget:
            break
        text, added = candidate, added + 1
    return text if added else "\n".join(lines)


def topic_page(
    space: str, listing: Listing, offset: int, limit: int, category: str | None
) -> dict[str, Any]:
    """``memory_list_topics``' answer: one page of entries and every category's count."""
    following = offset + len(listing.entries)
    return {
        "namespace": space,
        "navigationOnly": True,
        "total": listing.total,
        "offset": offset,
        "nextOffset": following if following < listing.total else None,
        "category": category,
        "categories": [
            {"id": c, "label": CATEGORY_LABELS[c], "count": listing.category_counts.get(c, 0)}
            for c in CATEGORIES
        ],
        "topics": [entry.card() for entry in listing.entries[:limit]],
    }


def bounded_topic(
    space: str, entry: Entry, topic: Topic | None, budget: int = EXPAND_BUDGET
) -> dict[str, Any]:
    """One entry opened within ``budget`` tokens: the section index, the paragraphs that
    fit, then each section's first page of member events while they fit, the first 12
    source ids and what was left out."""
    members = topic.member_ids if topic else [entry.id.partition(":")[2]]
    sections = _sections(topic)
    shown = _envelope(space, entry) | {
        "sections": [],
        "overview": [],
        "sourceEventIds": members[:EXPAND_SOURCE_IDS],
        "totalSections": len(sections),
        "omittedSections": 0,
        "totalSourceEvents": len(members),
        "omittedSourceEvents": max(0, len(members) - EXPAND_SOURCE_IDS),
        "omittedOverviewParagraphs": 0,
        "omittedSectionPages": 0,
    }
    if sections:
        shown["sectionPaging"] = SECTION_PAGING | {"id": entry.id}
    index = [
        {"number": k, "title": s.title, "sourceEventCount": len(s.event_ids)}
        for k, s in enumerate(sections, 1)
    ]
    room = budget - _MARGIN  # the omitted counts may still grow by a few digits
    shown["omittedSections"] = _fill(shown, "sections", index, room)
    ready = topic is not None and topic.status == "ready"
    paragraphs = ordered_paragraphs(topic, topic.overview) if topic and ready else []
    cards = [p.model_dump(exclude_none=True) for p in paragraphs]
    shown["omittedOverviewParagraphs"] = _fill(shown, "overview", cards, room)
    shown["omittedSectionPages"] = _page_sections(shown, sections, room)
    return shown


def section_page(
    space: str, entry: Entry, topic: Topic | None, number: int, offset: int
) -> dict[str, Any]:
    """One page (≤ 9) of the member events of section ``number`` (1-based, in the order
    ``bounded_topic`` lists them), from ``offset``; ``nextOffset`` None on the last page."""
    sections = _sections(topic)
    if not sections:
        raise InvalidInput(f"{entry.id} has no sections to page (a fallback or pending entry)")
    if not 1 <= number <= len(sections) or offset < 0:
        raise InvalidInput(f"section must be 1–{len(sections)} and offset ≥ 0 for {entry.id}")
    section = sections[number - 1]
    ids = section.event_ids[offset : offset + SECTION_PAGE]
    following = offset + len(ids)
    return _envelope(space, entry) | {
        "section": {
            "number": number,
            "title": section.title,
            "sourceEventCount": len(section.event_ids),
            "offset": offset,
            "eventIds": ids,
            "nextOffset": following if following < len(section.event_ids) else None,
        }
    }


def _sections(topic: Topic | None) -> list[TopicSection]:
    """A ready chapter's sections in their shown order (none for a pending one)."""
    return ordered_sections(topic) if topic and topic.status == "ready" else []


def _envelope(space: str, entry: Entry) -> dict[str, Any]:
    return {
        "namespace": space,
        "navigationOnly": True,
        **entry.card(),
        "eventRetrieval": {
            "tool": "memory_search_events",
            "topic_id": entry.id,
            "query": "",
            "offset": 0,
        },
    }


def _page_sections(shown: dict[str, Any], sections: Sequence[TopicSection], budget: int) -> int:
    """Give each listed section its first page of event ids while the answer fits; how
    many listed sections got none (their pages start at offset 0)."""
    used = _tokens(shown)
    listed = shown["sections"]
    for place, (item, section) in enumerate(zip(listed, sections, strict=False)):
        more = len(section.event_ids) > SECTION_PAGE
        page = {
            "eventIds": section.event_ids[:SECTION_PAGE],
            "nextOffset": SECTION_PAGE if more else None,
        }
        cost = _tokens(page)
        if used + cost > budget:
            return len(listed) - place
        item.update(page)
        used += cost
    return 0


def _fill(shown: dict[str, Any], key: str, items: Sequence[Mapping[str, Any]], budget: int) -> int:
    """Append ``items`` to ``shown[key]`` while the whole answer fits; how many were left."""
    used = _tokens(shown)
    for place, item in enumerate(items):
        cost = _tokens(item) + 1
        if used + cost > budget:
            return len(items) - place
        shown[key].append(item)
        used += cost
    return 0


def _tokens(value: Any) -> int:
    return estimate_tokens(json.dumps(value, ensure_ascii=False))


def rank_entries(query: str, entries: Sequence[Entry]) -> list[Entry]:
    """Entries matching ``query`` by BM25 over title ×4 and description ×2, best first."""
    texts = [(entry.title, entry.description) for entry in entries]
    return [entries[place] for place in rank_texts(query, texts)]


def rank_texts(query: str, texts: Sequence[tuple[str, str]]) -> list[int]:
    """The places of the (title, description) pairs matching ``query``, best first (ties
    by place): ranking needs the words only, not the entries they become."""
    docs = {place: entry_document(*text) for place, text in enumerate(texts)}
    return [place for place, _ in bm25_rank_counted(query_tokens(query), docs)]


@lru_cache(maxsize=8_192)
def entry_document(title: str, description: str) -> tuple[Mapping[str, int], int]:
    """An entry's BM25 document (token counts, length). Kept across calls: every query of
    ``memory_list_topics`` ranks all chapters again, and their words rarely change."""
    tokens = weighted_tokens([(title, 4), (description, 2)])
    return Counter(tokens), len(tokens)
