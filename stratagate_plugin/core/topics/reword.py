"""An offline chapter worded again from everything it holds, once a batch is committed.

The embedded grouper sees one batch and the candidates' short views; a chapter it named
after its first events would keep that name as it grows. So after each commit an offline
chapter's title, description, sections and overview are rebuilt from all its members
(``chapter_words``), its title kept unique in the space. A model's chapters keep the
model's words (validated as ever).
"""

from collections.abc import Mapping, Sequence
from typing import Any

from .chapter_words import describe, overview, sections
from .model import Topic, label_key, language_of
from .subjects import TermStats, chapter_title, is_internal_label

TITLE_CHARS = 120


def reworded(
    topic: Topic,
    members: Sequence[Mapping[str, Any]],
    stats: TermStats,
    taken: Mapping[str, str],
) -> Topic:
    """``topic`` with words from ``members`` (its compact events in membership order);
    ``taken``: every chapter title of the space → its id."""
    if not members:
        return topic
    zh = language_of([str(e["title"]) + str(e["summary"]) for e in members]) == "zh"
    title = chapter_title(members, stats, zh)
    if is_internal_label(title):
        title = topic.title
    parts = sections(members, stats, zh)
    return topic.model_copy(
        update={
            "title": _unique(title, topic.id, taken),
            "description": describe(members, stats, zh)[:400],
            "sections": parts,
            "overview": overview(parts, members),
        }
    )


def _unique(title: str, topic_id: str, taken: Mapping[str, str]) -> str:
    keys = {label_key(other): owner for other, owner in taken.items()}
    candidate, number = title, 1
    while keys.get(label_key(candidate), topic_id) != topic_id:
        number += 1
        suffix = f" ({number})"
        candidate = title[: TITLE_CHARS - len(suffix)].rstrip() + suffix
    return candidate
