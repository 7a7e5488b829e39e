"""A validated projection applied to the chapters (spec §5.1, §5.5), and their order.

Membership grows in order: existing members first, the batch's appended. Sections are
merged by label; old paragraphs are kept verbatim and new ones added after them. Sections
are shown by the earliest position of their members (ties by section key); paragraphs by
their earliest then latest cited position.
"""

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime

from ..llm.tasks import ProjectedTopic, TopicParagraph, TopicProjection, TopicSection
from .model import Topic, label_key, section_key

MAX_KEYWORDS = 24


def apply_projection(
    projection: TopicProjection,
    candidates: Mapping[str, Topic],
    space: str,
    keywords: Mapping[str, Sequence[str]],
    now: datetime,
    new_id: Callable[[], str],
) -> list[Topic]:
    """The chapters this projection creates or changes, with their new members.

    ``keywords``: each batch event's participants and tags (a chapter's ranking words).
    """
    changed = []
    for projected in projection.topics:
        old = candidates.get(projected.topic_id or "")
        if old is None:
            old = Topic(id=new_id(), namespace=space, title="", created_at=now, updated_at=now)
        changed.append(_merged(old, projected, keywords, now))
    return changed


def _merged(
    old: Topic, projected: ProjectedTopic, keywords: Mapping[str, Sequence[str]], now: datetime
) -> Topic:
    members = list(dict.fromkeys([*old.member_ids, *projected.event_ids]))
    words = [*old.keywords, *(w for i in projected.event_ids for w in keywords.get(i, ()))]
    overview = list(old.overview) if old.status == "ready" else []
    overview += [p for p in projected.overview if p not in overview]
    return old.model_copy(
        update={
            "title": projected.title,
            "description": projected.description,
            "status": "ready",
            "member_ids": members,
            "sections": _merged_sections(old.sections, projected.sections),
            "overview": overview,
            "keywords": list(dict.fromkeys(words))[-MAX_KEYWORDS:],
            "updated_at": now,
        }
    )


def _merged_sections(
    old: Sequence[TopicSection], new: Sequence[TopicSection]
) -> list[TopicSection]:
    merged = {label_key(s.title): s.model_copy() for s in old}
    for section in new:
        key = label_key(section.title)
        if key in merged:
            ids = [*merged[key].event_ids, *section.event_ids]
            merged[key] = merged[key].model_copy(update={"event_ids": list(dict.fromkeys(ids))})
        else:
            merged[key] = section.model_copy()
    taken: set[str] = set()
    for section in reversed(list(merged.values())):  # a later section wins a moved event
        section.event_ids = [i for i in section.event_ids if i not in taken]
        taken.update(section.event_ids)
    return [section for section in merged.values() if section.event_ids]


def ordered_sections(topic: Topic) -> list[TopicSection]:
    position = {event_id: place for place, event_id in enumerate(topic.member_ids)}
    end = len(position)

    def key(section: TopicSection) -> tuple[int, str]:
        first = min((position.get(i, end) for i in section.event_ids), default=end)
        return first, section_key(section.title)

    return sorted(topic.sections, key=key)


def ordered_paragraphs(topic: Topic, paragraphs: Sequence[TopicParagraph]) -> list[TopicParagraph]:
    position = {event_id: place for place, event_id in enumerate(topic.member_ids)}
    end = len(position)

    def key(paragraph: TopicParagraph) -> tuple[int, int, str]:
        places = [position.get(i, end) for i in paragraph.event_ids]
        return min(places), max(places), paragraph.model_dump_json()

    return sorted(paragraphs, key=key)


def order_topics(topics: Sequence[Topic]) -> list[Topic]:
    """Chapters by creation, ties by their immutable id (numbers are never stored)."""
    return sorted(topics, key=lambda topic: (topic.created_at, topic.id))
