"""A chapter's words from the events it holds: title, description, sections, overview.

The offline grouper words each chapter it writes with these rules, and the topic pass
words an offline chapter again from ALL its members once a batch is committed (a chapter
named by its first dozen events would keep a name its later events no longer fit). A
section is a recurring subject of the chapter (an event goes to the first one it holds),
else the event's browse category; one overview paragraph per section cites its events.
"""

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..llm.tasks import TopicParagraph, TopicSection
from .categories import CATEGORY_LABELS, CATEGORY_LABELS_ZH, event_category
from .model import label_key
from .subjects import TermStats, chapter_title, event_terms, main_people, subjects

SECTION_SUBJECTS = 5
DESCRIPTION_SUBJECTS = 8
MAX_PARAGRAPHS = 8
PARAGRAPH_EVENTS = 12
_KIND_BY_TYPE = {
    "decision": "decision",
    "plan": "decision",
    "cancellation": "decision",
    "change": "change",
}


def describe(events: Sequence[Mapping[str, Any]], stats: TermStats, zh: bool) -> str:
    """The people, then the chapter's subjects beyond the title's."""
    people = main_people(events)
    found = subjects(events, stats, DESCRIPTION_SUBJECTS)
    comma = "、" if zh else ", "
    if people and found:
        return f"{comma.join(people)}{'：' if zh else ': '}{comma.join(found)}"
    return comma.join([*people, *found]) or chapter_title(events, stats, zh)


def sections(
    events: Sequence[Mapping[str, Any]],
    stats: TermStats,
    zh: bool,
    known: Iterable[str] = (),
) -> list[TopicSection]:
    """Each event in the first known section or recurring subject it holds, else in its
    browse category's section."""
    kept = [title for title in known if title]
    found = kept + [s for s in subjects(events, stats, SECTION_SUBJECTS) if s not in kept]
    words = {title: set(event_terms({"title": "", "tags": [title]})) for title in found}
    by_key: dict[str, TopicSection] = {}
    for event in events:
        terms = set(event_terms(event))
        title = next((t for t in found if words[t] and words[t] <= terms), None)
        title = title or next((t for t in found if words[t] & terms), None)
        title = title or _category_title(event, zh)
        section = by_key.setdefault(label_key(title), TopicSection(title=title[:80]))
        section.event_ids.append(str(event["id"]))
    return list(by_key.values())


def _category_title(event: Mapping[str, Any], zh: bool) -> str:
    category = event_category(event.get("criticality", "routine"), event.get("event_type"))
    return (CATEGORY_LABELS_ZH if zh else CATEGORY_LABELS)[category]


def overview(
    shown: Sequence[TopicSection], events: Sequence[Mapping[str, Any]]
) -> list[TopicParagraph]:
    """One paragraph per section (eight at most): its first events' titles, cited."""
    by_id = {str(e["id"]): e for e in events}
    paragraphs = []
    for section in shown[:MAX_PARAGRAPHS]:
        members = [by_id[i] for i in section.event_ids if i in by_id][:PARAGRAPH_EVENTS]
        if not members:
            continue
        kinds = [_KIND_BY_TYPE.get(str(e.get("event_type", "")), "history") for e in members]
        kind = next((k for k in ("decision", "change") if k in kinds), "history")
        text = "; ".join(str(e["title"]).rstrip("。.") for e in members)
        paragraphs.append(
            TopicParagraph(
                kind=kind,  # type: ignore[arg-type]
                title=section.title,
                text=text[:600],
                event_ids=[str(e["id"]) for e in members],
            )
        )
    return paragraphs
