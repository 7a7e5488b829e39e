"""The topic catalog's reads (spec §5.5): the directory's entries, a page, one entry, the book.

Nothing here writes: a chapter whose events changed since it was projected is shown as
pending at once (``stale_members`` without ``write``), before the next pass rebuilds it.
Chapters come first in their order, then fallback entries (visible events in no shown
chapter) in table order; with a query, both ranked by BM25 over title ×4, description ×2.
Each function runs inside the caller's ``TopicsTransaction`` (one consistent read).
"""

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..clock import iso
from ..errors import NotFound
from ..text.search_terms import query_tokens
from . import chapter_index
from .categories import CATEGORIES, event_category
from .chapter_index import Shown
from .directory import Entry, Listing
from .merge import order_topics, ordered_paragraphs, ordered_sections
from .model import (
    FALLBACK_DESCRIPTION,
    FALLBACK_PREFIX,
    PENDING_TITLE,
    Topic,
    fallback_id,
    is_fallback,
)
from .storage import ChapterText, TopicsTransaction
from .sync import stale_members


def listing(
    tx: TopicsTransaction,
    space: str,
    weight: float,
    category: str | None,
    offset: int,
    limit: int,
    query: str = "",
) -> Listing:
    """One page of entries with every category's count and first entry. Reads the
    chapters it shows, not all of them (the directory is read on every model call); a
    query ranks the chapters holding its words through the space's word index, which
    reads every chapter only when a chapter was written since it was built."""
    stale = stale_members(tx, space)
    heads = tx.category_firsts(space, weight)
    chapters = {text.category: count for text, count in heads}
    spare = fallback_counts(tx, space, weight)
    totals = Counter(chapters) + Counter(spare)
    firsts = {entry.category: entry for entry in _entries(tx, [t for t, _ in heads], stale)}
    for name in CATEGORIES:
        if name not in firsts and spare.get(name):
            rows = tx.fallback_rows(space, weight, name, (1, 0))
            firsts[name] = _fallbacks(rows)[0]
    if query:
        total, page = _ranked(tx, space, (weight, category), query, stale, (offset, limit))
        return Listing(total, page, dict(totals), firsts)
    mine = chapters.get(category, 0) if category else sum(chapters.values())
    total = mine + (spare.get(category, 0) if category else sum(spare.values()))
    page = _entries(tx, tx.shown_texts(space, weight, category, (offset, limit)), stale)
    if len(page) < limit:
        window = (limit - len(page), max(0, offset - mine))
        page += _fallbacks(tx.fallback_rows(space, weight, category, window))
    return Listing(total, page, dict(totals), firsts)


def _ranked(
    tx: TopicsTransaction,
    space: str,
    shown: tuple[float, str | None],
    query: str,
    stale: Mapping[str, set[str]],
    window: tuple[int, int],
) -> tuple[int, list[Entry]]:
    """How many entries match ``query`` and the ``window`` (offset, limit) of them: the
    shown chapters holding its words (``chapter_index``) ranked with the matching
    fallbacks, entries made for the page."""
    weight, category = shown
    index = chapter_index.current(tx, space)
    found = _fallbacks(tx.matching_fallbacks(space, weight, category, query_tokens(query)))
    words = [(e.title, e.description) for e in found]
    keys = chapter_index.ranked(index, query, Shown(weight > 0, category), stale, words)
    offset, limit = window
    places = keys[offset : offset + limit]
    chapters = iter(_entries(tx, [index.texts[p] for kind, p in places if kind == 0], stale))
    page = [next(chapters) if kind == 0 else found[p] for kind, p in places]
    return len(keys), page


def _entries(
    tx: TopicsTransaction, texts: Sequence[ChapterText], stale: Mapping[str, set[str]]
) -> list[Entry]:
    """The entries of those chapters, their members counted for them alone."""
    counts = tx.member_counts([text.id for text in texts])
    return [_Head(*text).shown(counts.get(text.id, 0), text.id in stale) for text in texts]


@dataclass(frozen=True)
class _Head:
    """What a chapter's entry shows of it (from its light row or its whole record)."""

    id: str
    title: str
    description: str
    category: str
    status: str

    def shown(self, members: int, stale: bool) -> Entry:
        """Its entry: a stale or pending chapter shows the pending title and no words."""
        pending = stale or self.status == "pending"
        return Entry(
            id=self.id,
            title=PENDING_TITLE if pending else self.title,
            description="" if pending else self.description,
            category=self.category,
            source_event_count=members,
            status="pending" if pending else "ready",
        )


def _entry(topic: Topic, members: int, stale: bool) -> Entry:
    head = _Head(topic.id, topic.title, topic.description, topic.category, topic.status)
    return head.shown(members, stale)


def _fallbacks(rows: Sequence[Sequence[Any]]) -> list[Entry]:
    return [
        Entry(
            id=fallback_id(row[0]),
            title=row[1][:120],
            description=FALLBACK_DESCRIPTION,
            category=row[2],
            source_event_count=1,
            is_fallback=True,
        )
        for row in rows
    ]


def opened(
    tx: TopicsTransaction, space: str, entry_id: str, weight: float
) -> tuple[Entry, Topic | None]:
    if is_fallback(entry_id):
        # an id listed earlier still opens once its event has joined a chapter
        event_id = entry_id.removeprefix(FALLBACK_PREFIX)
        cards = tx.visible_cards(space, [event_id])
        if not cards or (cards[0].pool == "agent" and weight <= 0):
            raise NotFound(f"no fallback entry {entry_id!r} in this memory space")
        card = cards[0]
        category = event_category(card.criticality, card.temporal.get("event_type"))
        return _fallbacks([(card.id, card.title, category)])[0], None
    topic = tx.get_topic(entry_id)
    if topic is None or topic.namespace != space or (topic.has_agent and weight <= 0):
        raise NotFound(f"no topic {entry_id!r} in this memory space")
    entry = _entry(topic, len(topic.member_ids), entry_id in stale_members(tx, space))
    if entry.status == "pending":
        topic = topic.model_copy(update={"status": "pending"})
    return entry, topic


def book(
    tx: TopicsTransaction,
    space: str,
    weight: float,
    pending_limit: int | None = None,
    window: tuple[int, int] | None = None,
) -> dict[str, Any]:
    """The book; with ``window`` (offset, count), only those chapters whole (a page shows
    20: the others' sections and overviews were built to be dropped), and how many
    chapters there are (``chapterCount``) and are shown to the agent (``listedChapters``)."""
    stale = stale_members(tx, space)
    counts: dict[str, int] = {}
    if window is None:
        start, shown = 0, order_topics(tx.load_topics(space, members=True))
    else:
        start, shown, counts = _window(tx, space, weight, window)
    chapters = [
        _chapter(number, topic, topic.id in stale, weight)
        for number, topic in enumerate(shown, start + 1)
    ]
    pending = [
        {
            "jobId": job.id,
            "status": job.status,
            "attempts": job.attempts,
            "lastError": job.last_error,
            "nextRetryAt": iso(job.next_retry_at) if job.next_retry_at else None,
            "eventIds": ids,
        }
        for job, ids in tx.topic_jobs(space, pending_limit)
    ]
    spare = fallback_counts(tx, space, weight)
    return {
        "namespace": space,
        "chapters": chapters,
        **counts,
        "pending": pending,
        "pendingCounts": tx.topic_job_counts(space),
        "fallbackEntries": sum(spare.values()),
    }


def _window(
    tx: TopicsTransaction, space: str, weight: float, window: tuple[int, int]
) -> tuple[int, list[Topic], dict[str, int]]:
    """The window's chapters (placed by the chapter order, ``order_topics``' key, read
    from its index without the chapters themselves) and the counts of all."""
    ids, count, listed = tx.chapter_window(space, weight, window)
    shown = order_topics(tx.load_topics(space, members=True, only=ids)) if ids else []
    return window[0], shown, {"chapterCount": count, "listedChapters": listed}


def _hidden(topic: Topic, weight: float) -> bool:
    return topic.has_agent and weight <= 0


def _chapter(number: int, topic: Topic, stale: bool, weight: float) -> dict[str, Any]:
    """One chapter of the book: its card, overview paragraphs and sections once ready."""
    entry = _entry(topic, len(topic.member_ids), stale)
    ready = entry.status == "ready"
    sections = ordered_sections(topic) if ready else []
    return {
        "number": number,
        **entry.card(),
        "hidden": _hidden(topic, weight),
        "overview": [
            p.model_dump(exclude_none=True) for p in ordered_paragraphs(topic, topic.overview)
        ]
        if ready
        else [],
        "sections": [
            {"number": f"{number}.{k}", "title": s.title, "eventIds": s.event_ids}
            for k, s in enumerate(sections, 1)
        ],
        "eventIds": topic.member_ids,
    }


def fallback_counts(tx: TopicsTransaction, space: str, weight: float) -> dict[str, int]:
    """How many fallback entries each category has, in the categories' order."""
    counts = tx.fallback_counts(space, weight)
    return {c: counts[c] for c in CATEGORIES if c in counts}
