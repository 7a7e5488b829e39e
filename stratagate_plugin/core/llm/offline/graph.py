"""The offline graph projector (spec §4): people, places and organisations from event cards,
facts from event types, relations from recurring phrasings. English and Chinese.

General mechanisms only: every participant of an event is a person node; a capitalised
name after a place cue ("in", "to", "visited" …) is a place; the statement's subject is
the speaker for a first-person sentence, else the participant it names. Facts are keyed by
what the event type says about the subject (``plan``, ``preference``, ``state`` …) and the
event's first topic tag, so a later statement on the same topic supersedes the earlier
one. "lives in / moved to / 住在 / 搬到", "works at / 在…工作" and "grew up in / 来自"
become edges to a place or organisation; a new one replaces the old (same relation).
"""

import re
from collections.abc import Mapping, Sequence
from typing import Any

from ...graph.resolution import normalise_key
from ...graph.shapes import EdgeDraft, FactDraft, GraphProjection, NodeDraft
from .events import places
from .lexicon import FIRST_PERSON
from .text import HAN_FUNCTION, clip, is_person_name

USER, USER_ZH = "User", "用户"
_NAME = r"(?P<x>[A-Z][\w'.-]*(?:\s+(?:of\s+)?[A-Z][\w'.-]*){0,3})"
_HAN = r"(?P<x>[\u4e00-\u9fff]{2,8})"
# (relation, target node type, patterns): the subject's single-valued relations
PHRASINGS: tuple[tuple[str, str, tuple[re.Pattern[str], ...]], ...] = (
    ("lives_in", "place", (
        re.compile(rf"\b(?:live[sd]?|living|moved|relocated|moving|settled)\s+(?:back\s+)?"
                   rf"(?:in|to)\s+{_NAME}"),
        re.compile(rf"(?:住在|搬到了?|搬去了?|定居在?|搬家到){_HAN}"),
    )),
    ("works_at", "organization", (
        re.compile(rf"\b(?:work(?:s|ed|ing)?|job|employed)\s+(?:at|for|with)\s+{_NAME}"),
        re.compile(rf"\bjoined\s+{_NAME}\s+as\b"),
        re.compile(r"在(?P<x>[\u4e00-\u9fff]{2,8}?)(?:工作|上班|任职)"),
    )),
    ("from", "place", (
        re.compile(rf"\b(?:[Gg]rew up in|(?:am|[Ii]'m|is|are|come|comes|came) from|[Bb]orn in)"
                   rf"\s+{_NAME}"),
        re.compile(rf"(?:来自|老家在|老家是|出生在|出生于|家乡是){_HAN}"),
    )),
)  # fmt: skip
_KINDS = {
    "plan": "plan",
    "cancellation": "plan",
    "decision": "decision",
    "change": "state",
    "migration": "state",
    "task_completed": "achievement",
    "release": "release",
    "meeting": "meeting",
    "incident": "incident",
    "collaboration": "collaboration",
}
_FUNCTION = re.compile(f"[{HAN_FUNCTION}]")


def project_graph(payload: Mapping[str, Any]) -> GraphProjection:
    """A projection of the payload's events (``PROJECT_GRAPH``); every record cites them."""
    nodes: dict[str, NodeDraft] = {}
    edges: list[EdgeDraft] = []
    for event in payload.get("events", []):
        _project_event(event, nodes, edges)
    return GraphProjection(nodes=list(nodes.values())[:24], edges=edges[:32])


def _project_event(
    event: Mapping[str, Any], nodes: dict[str, NodeDraft], edges: list[EdgeDraft]
) -> None:
    source = [str(event["id"])]
    text = " ".join(event.get("quotes") or []) or str(event.get("summary", ""))
    people = [p for p in event.get("participants", []) if _is_name(p)]
    for person in people:
        _add(nodes, person, "person", source)
    subject = _subject(text, people)
    if subject == USER:
        _add(nodes, USER, "person", source, aliases=[USER_ZH])
    related = [p for p in _phrasings(text) if subject and _key(p[2]) != _key(subject)]
    named = {_key(target) for _, _, target in related}
    for place in places(text):
        if place not in people and _key(place) not in named:
            _add(nodes, place, "place", source)
    if subject is None:
        return
    subject_ref = _ref(subject, "person")
    for relation, kind, target in related:
        target_ref = _add(nodes, target, kind, source)
        edges.append(EdgeDraft(from_ref=subject_ref, to_ref=target_ref, relation=relation,
                               source_event_ids=source))  # fmt: skip
    fact = _fact(event, [*people, *places(text)], source)
    if fact is not None:
        nodes[subject_ref].facts.append(fact)


def _is_name(name: object) -> bool:
    return isinstance(name, str) and bool(normalise_key(name)) and is_person_name(name)


def _subject(text: str, people: Sequence[str]) -> str | None:
    """The speaker of a first-person statement (the user when unnamed), else a named one."""
    if FIRST_PERSON.search(text):
        return people[0] if people else USER
    named = [p for p in people if p in text]
    return named[0] if named else people[0] if people else None


def _phrasings(text: str) -> list[tuple[str, str, str]]:
    found = []
    for relation, kind, patterns in PHRASINGS:
        for pattern in patterns:
            match = pattern.search(text)
            if match and (target := _target(match["x"])):
                found.append((relation, kind, target))
                break
    return found


def _target(text: str) -> str | None:
    """The name matched, cut at a Chinese function character ("上海了" → "上海")."""
    cut = _FUNCTION.search(text, 1) if re.match(r"[\u4e00-\u9fff]", text) else None
    name = (text[: cut.start()] if cut else text).strip(" .,'")
    return name if len(name) >= 2 else None


def _fact(event: Mapping[str, Any], names: Sequence[str], source: list[str]) -> FactDraft | None:
    """Keyed by kind and topic — the first phrase of several words naming neither a person
    nor a place, else the last such tag, else the first tag — so a later statement on the
    same topic replaces this one."""
    kind = _kind(event)
    tags = [t for t in event.get("tags", []) if isinstance(t, str) and _topic(t)]
    plain = [t for t in tags if t not in names]
    phrases = [t for t in plain if " " in t.strip()]
    chosen = phrases[0] if phrases else plain[-1] if plain else tags[0] if tags else ""
    key = f"{kind}:{_topic(chosen)}" if chosen else kind
    value = clip(str(event.get("summary") or event.get("title") or ""), 300)
    if not value:
        return None
    return FactDraft(key=key, value=value, source_event_ids=source)


def _topic(tag: str) -> str:
    return "_".join(tag.lower().split())[:40]


def _key(name: str) -> str:
    return normalise_key(name)


def _kind(event: Mapping[str, Any]) -> str:
    if event.get("criticality") in ("preference", "identity"):
        return str(event["criticality"])
    kind = _KINDS.get(str(event.get("event_type", "other")))
    if kind is not None:
        return kind
    return "state" if event.get("status") == "ongoing" else "activity"


def _ref(name: str, type_: str) -> str:
    return f"{type_}:{normalise_key(name)}"


def _add(
    nodes: dict[str, NodeDraft],
    name: str,
    type_: str,
    source: list[str],
    aliases: Sequence[str] = (),
) -> str:
    ref = _ref(name, type_)
    node = nodes.get(ref)
    if node is None:
        nodes[ref] = NodeDraft(ref=ref, name=name, type=type_, aliases=list(aliases),  # type: ignore[arg-type]
                               source_event_ids=list(source))  # fmt: skip
    elif source[0] not in node.source_event_ids:
        node.source_event_ids.append(source[0])
    return ref
