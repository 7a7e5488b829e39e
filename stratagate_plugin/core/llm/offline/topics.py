"""The embedded topic grouper: a batch of events into chapters, sections and paragraphs.

Deterministic and general: an event continues the chapter it already belongs to, else
joins the candidate chapter it shares the most with (participants weigh 3, tags and hints
2, content terms 1; at least 3 needed); the rest form new chapters — one per main
participant, else events linked by a shared tag or two shared terms (an event sharing
nothing opens its own, which later events may join). A chapter is titled
by its participant or its most frequent tag; inside it an event's section is its catalog
hint, else a tag it shares with another event (or an existing section), else its browse
category. Each section gets one paragraph made of its events' titles, citing them.
"""

from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from ...topics.categories import CATEGORY_LABELS, CATEGORY_LABELS_ZH, event_category
from ...topics.model import label_key, language_of
from ..tasks import ProjectedTopic, TopicParagraph, TopicProjection, TopicSection
from .text import clip, content_terms

MATCH_SCORE = 3
MAX_PARAGRAPHS = 8
DESCRIPTION_TAGS = 8
_KIND_BY_TYPE = {
    "decision": "decision",
    "plan": "decision",
    "cancellation": "decision",
    "change": "change",
}


def project_topics(payload: dict[str, Any]) -> TopicProjection:
    events: list[dict[str, Any]] = payload.get("events", [])
    candidates: list[dict[str, Any]] = payload.get("candidates", [])
    placed = _place_in_candidates(events, candidates)
    groups: dict[str, list[dict[str, Any]]] = {}
    for event in events:
        if event["id"] in placed:
            groups.setdefault(placed[event["id"]], []).append(event)
    rest = [e for e in events if e["id"] not in placed]
    by_id = {c["topic_id"]: c for c in candidates}
    topics = [_chapter(group, by_id[owner]) for owner, group in groups.items()]
    topics += [_chapter(group, None) for group in _new_groups(rest)]
    taken = {label_key(c["title"]): c["topic_id"] for c in candidates if c.get("title")}
    return TopicProjection(topics=_unique_titles(topics, taken))


def _features(event: dict[str, Any]) -> tuple[set[str], set[str], set[str]]:
    people = {label_key(p) for p in event.get("participants", [])}
    marks = {label_key(t) for t in [*event.get("tags", []), *event.get("catalog_hints", [])]}
    terms = set(content_terms(f"{event['title']} {' '.join(event.get('tags', []))}"))
    return people, marks, terms


def _place_in_candidates(
    events: Sequence[dict[str, Any]], candidates: Sequence[dict[str, Any]]
) -> dict[str, str]:
    placed: dict[str, str] = {}
    for candidate in candidates:
        for event_id in candidate.get("continued_event_ids", []):
            placed.setdefault(event_id, candidate["topic_id"])
    for event in events:
        if event["id"] in placed:
            continue
        best, best_score = None, MATCH_SCORE - 1
        for candidate in candidates:
            score = _score(event, candidate)
            if score > best_score:
                best, best_score = candidate["topic_id"], score
        if best is not None:
            placed[event["id"]] = best
    return placed


def _score(event: dict[str, Any], candidate: dict[str, Any]) -> int:
    if not candidate.get("title"):
        return 0  # a chapter being rebuilt takes only its own members back
    people, marks, terms = _features(event)
    labels = {label_key(w) for w in [candidate["title"], *candidate.get("keywords", [])]}
    labels |= {label_key(s) for s in candidate.get("sections", [])}
    words = " ".join([candidate["title"], *candidate.get("sections", [])])
    their_terms = set(content_terms(f"{words} {' '.join(candidate.get('keywords', []))}"))
    return 3 * len(people & labels) + 2 * len(marks & labels) + len(terms & their_terms)


def _new_groups(events: Sequence[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """One group per main participant; the others linked by a shared tag or two terms."""
    by_person: dict[str, list[dict[str, Any]]] = {}
    loose = []
    for event in events:
        people = event.get("participants", [])
        if people:
            by_person.setdefault(label_key(people[0]), []).append(event)
        else:
            loose.append(event)
    return [*by_person.values(), *_linked(loose)]


def _linked(events: Sequence[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    parent = list(range(len(events)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    features = [_features(e) for e in events]
    for i, (_, marks_i, terms_i) in enumerate(features):
        for j in range(i):
            _, marks_j, terms_j = features[j]
            if marks_i & marks_j or len(terms_i & terms_j) >= 2:
                parent[root(i)] = root(j)
    groups: dict[int, list[dict[str, Any]]] = {}
    for i, event in enumerate(events):
        groups.setdefault(root(i), []).append(event)
    return list(groups.values())


def _chapter(events: list[dict[str, Any]], candidate: dict[str, Any] | None) -> ProjectedTopic:
    zh = language_of([e["title"] + e["summary"] for e in events]) == "zh"
    title = (candidate or {}).get("title") or _title(events)
    sections = _sections(events, (candidate or {}).get("sections", []), zh)
    description = (candidate or {}).get("description") or _description(events, zh)
    return ProjectedTopic(
        topic_id=(candidate or {}).get("topic_id"),
        title=clip(title, 120),
        description=clip(description, 400),
        event_ids=[e["id"] for e in events],
        sections=sections,
        overview=[_paragraph(s, events) for s in sections[:MAX_PARAGRAPHS]],
    )


def _title(events: Sequence[dict[str, Any]]) -> str:
    people = Counter(p for e in events for p in e.get("participants", [])[:1])
    if people:
        return _most_common(people)
    marks = Counter(m for e in events for m in [*e.get("catalog_hints", []), *e.get("tags", [])])
    if marks:
        return _most_common(marks)
    return str(events[0]["title"])


def _most_common(counts: Counter[str]) -> str:
    return max(counts, key=lambda word: (counts[word], -list(counts).index(word)))


def _description(events: Sequence[dict[str, Any]], zh: bool) -> str:
    """The chapter's most frequent tags (its participants when it has no tag)."""
    marks = Counter(t for e in events for t in [*e.get("catalog_hints", []), *e.get("tags", [])])
    top = [word for word, _ in marks.most_common(DESCRIPTION_TAGS)]
    if not top:
        top = list(dict.fromkeys(p for e in events for p in e.get("participants", [])))
    return ("、" if zh else ", ").join(top) or events[0]["title"]


def _sections(
    events: Sequence[dict[str, Any]], existing: Iterable[str], zh: bool
) -> list[TopicSection]:
    known = {label_key(title): title for title in existing}
    shared = Counter(label_key(t) for e in events for t in set(e.get("tags", [])))
    sections: dict[str, TopicSection] = {}
    for event in events:
        title = _section_title(event, known, shared, zh)
        key = label_key(title)
        section = sections.setdefault(key, TopicSection(title=clip(title, 80)))
        section.event_ids.append(event["id"])
    return list(sections.values())


def _section_title(
    event: dict[str, Any], known: dict[str, str], shared: Counter[str], zh: bool
) -> str:
    hints = event.get("catalog_hints", [])
    if hints:
        return str(hints[0])
    tags = event.get("tags", [])
    for tag in tags:
        if label_key(tag) in known:
            return known[label_key(tag)]
    for tag in tags:
        if shared[label_key(tag)] >= 2:
            return str(tag)
    category = event_category(event.get("criticality", "routine"), event.get("event_type"))
    return (CATEGORY_LABELS_ZH if zh else CATEGORY_LABELS)[category]


def _paragraph(section: TopicSection, events: Sequence[dict[str, Any]]) -> TopicParagraph:
    members = [e for e in events if e["id"] in set(section.event_ids)][:12]
    kinds = [_KIND_BY_TYPE.get(e.get("event_type", ""), "history") for e in members]
    kind = next((k for k in ("decision", "change") if k in kinds), "history")
    text = "; ".join(e["title"].rstrip("。.") for e in members)
    return TopicParagraph(
        kind=kind,  # type: ignore[arg-type]
        title=section.title,
        text=clip(text, 600),
        event_ids=[e["id"] for e in members],
    )


def _unique_titles(topics: list[ProjectedTopic], taken: dict[str, str]) -> list[ProjectedTopic]:
    """Titles made unique among the answer and the candidates (a chapter being rebuilt may
    meet a namesake opened while it was pending): ``Title (2)``, ``Title (3)`` … The base
    is clipped to leave the number room: clipping the whole could cut the number off and
    give the same title again, for ever (a 120-character title of one token did)."""
    used = dict(taken)
    for topic in topics:
        base, number = topic.title, 1
        while used.get(label_key(topic.title), topic.topic_id) != topic.topic_id:
            number += 1
            suffix = f" ({number})"
            topic.title = clip(base, 120 - len(suffix)) + suffix
        used[label_key(topic.title)] = topic.topic_id or f"new:{id(topic)}"
    return topics
