"""A chapter holds at most ``CHAPTER_LIMIT`` events, whoever groups them.

The offline grouper stops filling a chapter at the limit; a model is shown each chapter's
count but may keep extending one. Its answer is therefore held to the same limit before
it is validated: the batch events a chapter has no room for move, in order, to new
chapters named after it ("Title (2)"), with their own sections and paragraphs, so a long
conversation reads as chapters of a readable size whatever the model answered.
"""

from collections.abc import Mapping, Sequence

from ..llm.tasks import ProjectedTopic, TopicParagraph, TopicProjection, TopicSection
from .model import Topic, label_key

CHAPTER_LIMIT = 40


def held_to_limit(
    projection: TopicProjection,
    candidates: Mapping[str, Topic],
    labels: Mapping[str, str],
    limit: int = CHAPTER_LIMIT,
) -> TopicProjection:
    """The projection with every chapter at most ``limit`` events: an exposed chapter's
    members count, the overflow opens new chapters (titles unique in the space)."""
    taken = set(labels) | {label_key(t.title) for t in projection.topics}
    topics: list[ProjectedTopic] = []
    for topic in projection.topics:
        old = candidates.get(topic.topic_id or "")
        members = set(old.member_ids) if old else set()
        fresh = [i for i in topic.event_ids if i not in members]
        room = max(limit - len(members), 0)
        overflow = fresh[room:]
        if not overflow:
            topics.append(topic)
            continue
        chunks = [overflow[i : i + limit] for i in range(0, len(overflow), limit)]
        moved = set(overflow)
        kept = [i for i in topic.event_ids if i not in moved]
        if kept:
            topics.append(_part(topic, kept, members, topic.title, topic.topic_id))
        for chunk in chunks:
            title = _next_title(topic.title, taken)
            topics.append(_part(topic, chunk, set(), title, None))
    return TopicProjection(topics=topics)


def _part(
    topic: ProjectedTopic,
    event_ids: Sequence[str],
    members: set[str],
    title: str,
    topic_id: str | None,
) -> ProjectedTopic:
    """The share of ``topic`` holding ``event_ids``: its sections cut to them (an exposed
    chapter's own members stay in its sections), its paragraphs citing only them."""
    own = set(event_ids) | members
    sections = [
        TopicSection(title=s.title, event_ids=[i for i in s.event_ids if i in own])
        for s in topic.sections
    ]
    kept = [s for s in sections if s.event_ids]
    named = {label_key(s.title) for s in kept}
    overview: list[TopicParagraph] = [
        p
        for p in topic.overview
        if set(p.event_ids) <= own
        and (p.title is None or not kept or label_key(p.title) in named or topic_id)
    ]
    return ProjectedTopic(
        topic_id=topic_id,
        title=title,
        description=topic.description,
        event_ids=list(event_ids),
        sections=kept,
        overview=overview,
    )


def _next_title(title: str, taken: set[str]) -> str:
    """``Title (2)``, ``Title (3)`` … the first no chapter of the space or answer holds;
    the base is clipped so the number always fits in 120 characters."""
    number = 2
    while True:
        suffix = f" ({number})"
        candidate = title[: 120 - len(suffix)].rstrip() + suffix
        if label_key(candidate) not in taken:
            taken.add(label_key(candidate))
            return candidate
        number += 1
