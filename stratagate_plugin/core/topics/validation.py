"""A projection result checked whole (spec §5.4) before anything is written.

Any broken rule rejects the entire answer: the job fails and no topic changes. What the
model may do: extend an exposed candidate or open a new chapter with a unique label (what
it holds: never an internal tag nor a bare event type), place
every batch event, section the batch events it takes, and add paragraphs citing only the
batch events of that topic (an old paragraph may be repeated only verbatim).
"""

from collections.abc import Mapping, Sequence

from ..errors import StrataGateError
from ..llm.tasks import ProjectedTopic, TopicParagraph, TopicProjection
from .model import Topic, label_key
from .subjects import is_internal_label

MAX_TOPICS = 12
MAX_NEW_PARAGRAPHS = 8


class InvalidProjection(StrataGateError):
    """The topic projector's answer broke a rule; nothing of it is applied."""


def validate_projection(
    projection: TopicProjection,
    batch_ids: Sequence[str],
    candidates: Mapping[str, Topic],
    existing_labels: Mapping[str, str],
    truncated_ids: Sequence[str] = (),
) -> None:
    """Raise ``InvalidProjection`` naming the first broken rule.

    ``candidates``: the exposed chapters by id; ``existing_labels``: every chapter of the
    space, ``label_key(title)`` → id (a new chapter may not take an unexposed one's label).
    """
    topics = projection.topics
    if not 1 <= len(topics) <= MAX_TOPICS:
        raise InvalidProjection(f"{len(topics)} topics; a projection has 1–{MAX_TOPICS}")
    batch = set(batch_ids)
    _check_labels(topics, candidates, existing_labels)
    placed: dict[str, int] = {}
    for index, topic in enumerate(topics):
        for event_id in topic.event_ids:
            if event_id not in batch:
                raise InvalidProjection(f"topic {index} takes {event_id!r}, not a batch event")
            if placed.setdefault(event_id, index) != index:
                raise InvalidProjection(f"event {event_id!r} is placed in two topics")
        old = candidates.get(topic.topic_id or "")
        _check_sections(topic, old, index)
        _check_overview(topic, old, index, set(truncated_ids))
    missing = [event_id for event_id in batch_ids if event_id not in placed]
    if missing:
        raise InvalidProjection(f"batch events placed in no topic: {', '.join(missing)}")


def _check_labels(
    topics: Sequence[ProjectedTopic],
    candidates: Mapping[str, Topic],
    existing: Mapping[str, str],
) -> None:
    seen: set[str] = set()
    for topic in topics:
        key = label_key(topic.title)
        if not key:
            raise InvalidProjection("a topic has an empty title")
        _check_words(topic)
        if key in seen:
            raise InvalidProjection(f"two topics are labelled {topic.title!r}")
        seen.add(key)
        if topic.topic_id is not None and topic.topic_id not in candidates:
            raise InvalidProjection(f"topic id {topic.topic_id!r} was not offered as a candidate")
        owner = existing.get(key)
        if owner is not None and owner != topic.topic_id:
            hint = ": give its topic_id" if owner in candidates else ""
            raise InvalidProjection(f"{topic.title!r} is the title of another chapter{hint}")


def _check_words(topic: ProjectedTopic) -> None:
    """A chapter or section is named by what it holds, never by a tag of the memory's own
    (``agent-recorded``, ``category:fact``) nor a bare event type (``preference``)."""
    for title in [topic.title, *(section.title for section in topic.sections)]:
        if is_internal_label(title):
            raise InvalidProjection(
                f"{title!r} is an internal tag or a bare event type, not what the topic holds"
            )


def _check_sections(topic: ProjectedTopic, old: Topic | None, index: int) -> None:
    if not topic.sections:
        return
    own = set(topic.event_ids)
    old_members = {
        section_key: set(section.event_ids)
        for section in (old.sections if old else [])
        for section_key in [label_key(section.title)]
    }
    sectioned: set[str] = set()
    for section in topic.sections:
        kept = old_members.get(label_key(section.title), set())
        stray = [i for i in section.event_ids if i not in own and i not in kept]
        if stray:
            raise InvalidProjection(
                f"topic {index} section {section.title!r} reassigns events: {', '.join(stray)}"
            )
        sectioned.update(section.event_ids)
    unsectioned = own - sectioned
    if unsectioned:
        left = ", ".join(sorted(unsectioned))
        raise InvalidProjection(f"topic {index} leaves batch events out of every section: {left}")


def _check_overview(
    topic: ProjectedTopic, old: Topic | None, index: int, truncated: set[str]
) -> None:
    inherited = [p for p in (old.overview if old else [])]
    new = [p for p in topic.overview if p not in inherited]
    if len(new) > MAX_NEW_PARAGRAPHS:
        raise InvalidProjection(f"topic {index} adds {len(new)} paragraphs; at most 8")
    titles = {label_key(s.title) for s in topic.sections}
    titles |= {label_key(s.title) for s in (old.sections if old else [])}
    own = set(topic.event_ids)
    for paragraph in new:
        _check_paragraph(paragraph, own, titles, truncated, index)


def _check_paragraph(
    paragraph: TopicParagraph, own: set[str], titles: set[str], truncated: set[str], index: int
) -> None:
    cited = set(paragraph.event_ids)
    if not cited <= own:
        stray = ", ".join(sorted(cited - own))
        raise InvalidProjection(
            f"topic {index} has a paragraph citing events it does not take from the batch "
            f"(an old paragraph must be repeated verbatim): {stray}"
        )
    if paragraph.kind != "scope" and cited & truncated:
        raise InvalidProjection(f"topic {index}: truncated events may support only scope")
    if paragraph.title is not None and titles and label_key(paragraph.title) not in titles:
        raise InvalidProjection(
            f"topic {index}: paragraph title {paragraph.title!r} names no section"
        )
