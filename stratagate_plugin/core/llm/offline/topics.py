"""The embedded topic grouper: a batch of events into chapters, sections and paragraphs.

Deterministic and general. An event continues the chapter it already belongs to; else it
joins the candidate chapter it shares a subject with (shared subject words weighed by
their rarity in the whole memory, at least ``MATCH_WEIGHT``; the same main person adds
one); else the open chapter of its main person; a chapter holding ``CHAPTER_LIMIT``
events takes no more, so a long conversation reads as chapters of a readable size, in
time order. The rest form new chapters, one per main participant, else linked by a
shared subject. Titles, descriptions and sections come from what the events hold
(``core.topics.subjects``): people and recurring subjects, never the memory's own tags.

The payload may carry, for this grouper only, ``term_stats`` (how many events of the
memory hold each token) and ``taken_titles`` (every chapter title of the space), so that
rarer words weigh more and a new title never repeats an unexposed chapter's.
"""

import math
from collections.abc import Mapping, Sequence
from typing import Any

from ...topics.chapter_limit import CHAPTER_LIMIT
from ...topics.chapter_words import describe, overview, sections
from ...topics.model import label_key, language_of
from ...topics.subjects import TermStats, chapter_title, event_terms, main_person, subject_marks
from ..tasks import ProjectedTopic, TopicProjection

MATCH_WEIGHT = 1.5  # one shared subject held by under a fifth of all events
WORD_FLOOR = 0.75  # two shared words, however common, also suffice
MARK_WEIGHT = 1.0  # the same tag (the extractor's or the user's own label) counts more


def project_topics(payload: dict[str, Any]) -> TopicProjection:
    events: list[dict[str, Any]] = payload.get("events", [])
    candidates: list[dict[str, Any]] = payload.get("candidates", [])
    stats = _stats(payload.get("term_stats"))
    placed = _place_in_candidates(events, candidates, stats)
    groups: dict[str, list[dict[str, Any]]] = {}
    for event in events:
        if event["id"] in placed:
            groups.setdefault(placed[event["id"]], []).append(event)
    rest = [e for e in events if e["id"] not in placed]
    by_id = {c["topic_id"]: c for c in candidates}
    topics = [_chapter(group, by_id[owner], stats) for owner, group in groups.items()]
    topics += [_chapter(group, None, stats) for group in _new_groups(rest, stats)]
    taken = {label_key(c["title"]): c["topic_id"] for c in candidates if c.get("title")}
    for title in payload.get("taken_titles", []):
        taken.setdefault(label_key(title), f"unexposed:{title}")
    return TopicProjection(topics=unique_titles(topics, taken))


def _stats(given: Any) -> TermStats:
    if not isinstance(given, Mapping):
        return TermStats()
    return TermStats(dict(given.get("counts", {})), int(given.get("total", 0)))


def _candidate_terms(candidate: Mapping[str, Any]) -> set[str]:
    marks = [str(w) for w in [*candidate.get("sections", []), *candidate.get("keywords", [])]]
    return set(event_terms({"title": "", "tags": [str(candidate.get("title", "")), *marks]}))


def _place_in_candidates(
    events: Sequence[dict[str, Any]], candidates: Sequence[dict[str, Any]], stats: TermStats
) -> dict[str, str]:
    placed: dict[str, str] = {}
    for candidate in candidates:
        for event_id in candidate.get("continued_event_ids", []):
            placed.setdefault(event_id, candidate["topic_id"])
    open_ = [c for c in candidates if c.get("title")]  # one being rebuilt takes its own only
    room = {c["topic_id"]: CHAPTER_LIMIT - int(c.get("event_count", 0)) for c in open_}
    terms = {c["topic_id"]: _candidate_terms(c) for c in open_}
    people = {c["topic_id"]: _candidate_people(c) for c in open_}
    for event in events:
        if event["id"] in placed:
            continue
        best = _best_candidate(event, open_, terms, people, room, stats)
        if best is not None:
            placed[event["id"]] = best
            room[best] -= 1
    return placed


def _candidate_people(candidate: Mapping[str, Any]) -> set[str]:
    title = label_key(str(candidate.get("title", "")))
    return {label_key(k) for k in candidate.get("keywords", []) if title.startswith(label_key(k))}


def _best_candidate(
    event: dict[str, Any],
    candidates: Sequence[dict[str, Any]],
    terms: Mapping[str, set[str]],
    people: Mapping[str, set[str]],
    room: Mapping[str, int],
    stats: TermStats,
) -> str | None:
    """The candidate sharing the most subject weight (a person alone does not suffice),
    else the first-ranked open chapter of the event's main person."""
    own = set(event_terms(event))
    marks = {label_key(m) for m in subject_marks(event)}
    person = label_key(main_person(event) or "")
    best, best_score = None, MATCH_WEIGHT
    for candidate in candidates:
        topic_id = candidate["topic_id"]
        if room[topic_id] <= 0:
            continue
        shared = _shared(own, terms[topic_id], stats)
        shared += MARK_WEIGHT * len(marks & {label_key(k) for k in candidate.get("keywords", [])})
        score = shared + (1.0 if person and person in people[topic_id] else 0.0)
        if shared and score >= best_score:
            best, best_score = topic_id, score + 1e-9
    if best is not None or not person:
        return best
    return next(
        (
            c["topic_id"]
            for c in candidates
            if room[c["topic_id"]] > 0 and person in people[c["topic_id"]]
        ),
        None,
    )


def _shared(mine: set[str], theirs: set[str], stats: TermStats) -> float:
    """Shared subject words by rarity; a word every event holds still counts a little.
    Summed exactly (``fsum``): a plain sum follows the set's order, which changes between
    runs with string hashing, and a last-bit difference flipped ties between chapters."""
    return math.fsum(max(stats.weight(token), WORD_FLOOR) for token in sorted(mine & theirs))


def _new_groups(events: Sequence[dict[str, Any]], stats: TermStats) -> list[list[dict[str, Any]]]:
    """One group per main participant; the others linked by a shared subject."""
    by_person: dict[str, list[dict[str, Any]]] = {}
    loose = []
    for event in events:
        person = main_person(event)
        if person:
            by_person.setdefault(label_key(person), []).append(event)
        else:
            loose.append(event)
    return [*by_person.values(), *_linked(loose, stats)]


def _linked(events: Sequence[dict[str, Any]], stats: TermStats) -> list[list[dict[str, Any]]]:
    parent = list(range(len(events)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    terms = [set(event_terms(e)) for e in events]
    marks = [{label_key(m) for m in subject_marks(e)} for e in events]
    for i in range(len(events)):
        for j in range(i):
            score = _shared(terms[i], terms[j], stats) + MARK_WEIGHT * len(marks[i] & marks[j])
            if score >= MATCH_WEIGHT:
                parent[root(i)] = root(j)
    groups: dict[int, list[dict[str, Any]]] = {}
    for i, event in enumerate(events):
        groups.setdefault(root(i), []).append(event)
    return list(groups.values())


def _chapter(
    events: list[dict[str, Any]], candidate: dict[str, Any] | None, stats: TermStats
) -> ProjectedTopic:
    zh = language_of([e["title"] + e["summary"] for e in events]) == "zh"
    known = (candidate or {}).get("sections", [])
    parts = sections(events, stats, zh, known)
    return ProjectedTopic(
        topic_id=(candidate or {}).get("topic_id"),
        title=(candidate or {}).get("title") or chapter_title(events, stats, zh),
        description=((candidate or {}).get("description") or describe(events, stats, zh))[:400],
        event_ids=[e["id"] for e in events],
        sections=parts,
        overview=overview(parts, events),
    )


def unique_titles(topics: list[ProjectedTopic], taken: dict[str, str]) -> list[ProjectedTopic]:
    """Titles made unique among the answer and the chapters it knows (a chapter being
    rebuilt may meet a namesake opened while it was pending): ``Title (2)``, ``Title (3)``
    … The base is clipped to leave the number room: clipping the whole could cut the
    number off and give the same title again, for ever (a 120-character title did)."""
    used = dict(taken)
    for topic in topics:
        base, number = topic.title, 1
        while used.get(label_key(topic.title), topic.topic_id) != topic.topic_id:
            number += 1
            suffix = f" ({number})"
            topic.title = base[: 120 - len(suffix)].rstrip() + suffix
        used[label_key(topic.title)] = topic.topic_id or f"new:{id(topic)}"
    return topics
