"""Relations of a new offline card to the extraction timeline (spec §3.3, §3.4).

Only a card that changes, corrects or cancels something is linked, and only to the timeline
event it clearly talks about: the content terms of both (time words, speaker names and role
words removed) must share at least two terms and cover half of the smaller set. An explicit
replacement ("moved to", "instead", "no longer", 改为, 不再) supersedes that event; a
cancellation of it is only related (the card itself carries status ``cancelled``).
"""

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from .lexicon import CANCELLATION, REPLACEMENT
from .text import content_terms, without_times, word_set

MIN_CONTAINMENT = 0.5
_ATTRIBUTION = re.compile(r"^[^:：]{1,40}?(?:\s+said|说)\s*[:：]\s*")
MIN_SHARED = 2
_ROLE_WORDS = ("The user", "the user", "The assistant", "the assistant", "用户", "助手")
_CHANGE_WORDS = word_set(
    """move moved moving change changed switch switched cancel cancelled canceled decided
    postpone postponed reschedule rescheduled instead longer 取消 改为 改成 改到 决定 不再"""
)


def relation_fields(
    text: str, event_type: str, timeline: Sequence[Mapping[str, Any]], names: Iterable[str]
) -> dict[str, list[str]]:
    """``supersedes_event_ids`` / ``related_event_ids`` for the card stating ``text``."""
    replaces = REPLACEMENT.search(text) is not None
    cancels = event_type == "cancellation" or CANCELLATION.search(text) is not None
    if not (replaces or cancels or event_type == "change"):
        return {}
    ignored = (*_ROLE_WORDS, *names)
    target = best_match(_terms(text, ignored), timeline, ignored, replaces)
    if target is None:
        return {}
    key = "supersedes_event_ids" if replaces else "related_event_ids"
    return {key: [target]}


def best_match(
    terms: set[str],
    timeline: Sequence[Mapping[str, Any]],
    ignored: Sequence[str],
    live_only: bool,
) -> str | None:
    """The timeline id whose text the terms contain best (≥ 0.5), first one on ties."""
    best, best_score = None, 0.0
    for entry in timeline:
        if live_only and entry.get("status", "active") != "active":
            continue
        summary = _ATTRIBUTION.sub("", str(entry.get("summary", "")))
        text = f"{entry.get('title', '')} {summary}"
        score = containment(terms, _terms(text, ignored))
        if score >= MIN_CONTAINMENT and score > best_score:
            best, best_score = str(entry["id"]), score
    return best


def containment(first: set[str], second: set[str]) -> float:
    """Shared terms / the smaller set; 0 with fewer than two shared terms."""
    shared = len(first & second)
    return shared / min(len(first), len(second)) if shared >= MIN_SHARED else 0.0


def _terms(text: str, names: Sequence[str]) -> set[str]:
    """Content terms without time words, change words, role words and speaker names."""
    for name in names:
        text = text.replace(name, " ")
    return set(content_terms(without_times(text))) - _CHANGE_WORDS
