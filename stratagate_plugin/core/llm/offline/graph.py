"""The offline graph projector (spec §4): people, places, organisations and tools from
event cards, facts from event types and relation frames. English and Chinese.

General mechanisms only: every participant of an event is a person node, and so is the
speaker (the summary's attribution, the user when unnamed; the assistant is none); a
capitalised name after a place cue ("in", "to", "visited" …) is a place. Each sentence is
read for the frames of ``graph_frames`` (kinship and roles, residence, work, study, origin,
tools, favourites, self-introduction): they become edges, facts keyed by their relation
(so "moved to Lisbon" replaces "lives in Porto") and aliases of the speaker, each citing
its event. The event's own fact is keyed by what its type says (``plan``, ``preference``,
``state`` …) and its first topic tag.
"""

import re
from collections.abc import Mapping, Sequence
from typing import Any

from ...graph.resolution import normalise_key
from ...graph.shapes import MAX_EDGES, MAX_NODES, EdgeDraft, FactDraft, GraphProjection, NodeDraft
from . import graph_frames as frames
from .events import places
from .lexicon import FIRST_PERSON
from .text import clip, is_person_name, split_sentences

USER, USER_ZH = "User", "用户"
_ATTRIBUTION = re.compile(r"^(?P<speaker>[^:：]{1,40}?)(?:\s+said|说)\s*[:：]\s*")
_USER_WORDS = frozenset({"The user", "the user", "User", "用户"})
_ASSISTANT_WORDS = frozenset({"The assistant", "the assistant", "Assistant", "助手"})
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


def project_graph(payload: Mapping[str, Any]) -> GraphProjection:
    """A projection of the payload's events (``PROJECT_GRAPH``); every record cites them.
    Over the §4 limits the first nodes are kept, and only the edges between kept nodes."""
    nodes: dict[str, NodeDraft] = {}
    edges: list[EdgeDraft] = []
    for event in payload.get("events", []):
        _project_event(event, nodes, edges)
    kept = list(nodes.values())[:MAX_NODES]
    refs = {node.ref for node in kept}
    between = [e for e in edges if e.from_ref in refs and e.to_ref in refs]
    return GraphProjection(nodes=kept, edges=between[:MAX_EDGES])


def _project_event(
    event: Mapping[str, Any], nodes: dict[str, NodeDraft], edges: list[EdgeDraft]
) -> None:
    source = [str(event["id"])]
    text = " ".join(event.get("quotes") or []) or str(event.get("summary", ""))
    people = [p for p in event.get("participants", []) if _is_name(p)]
    speaker = _speaker(event, text, people)
    if speaker is not None:  # "I'm Mara": Mara is the speaker, not someone else
        _add(nodes, speaker, "person", source)
        for name in frames.self_names(text, []):
            _alias(nodes[_ref_of(nodes, speaker)], name, source)
    for person in people:
        _add(nodes, person, "person", source)
    subject = _subject(text, people, speaker)
    if USER in (speaker, subject):
        _add(nodes, USER, "person", source, aliases=[USER_ZH])
    targets: set[str] = set()
    known = [*people, *(n.name for n in nodes.values() if n.type == "person")]
    for sentence in split_sentences(text):
        targets |= _frames(sentence, speaker, known, source, nodes, edges)
    for place in places(text):
        if place not in people and _key(place) not in targets:
            _add(nodes, place, "place", source)
    if subject is not None and (fact := _fact(event, [*people, *places(text)], source)):
        nodes[_add(nodes, subject, "person", source)].facts.append(fact)


def _frames(
    sentence: str,
    speaker: str | None,
    people: Sequence[str],
    source: list[str],
    nodes: dict[str, NodeDraft],
    edges: list[EdgeDraft],
) -> set[str]:
    """The sentence's relation frames, self-introductions and favourites as nodes, edges
    and relation-keyed facts; the keys of the targets named. ``people``: the persons known
    so far (never a target); without a speaker only frames about a named one count."""
    if speaker is not None:
        speaker_ref = _add(nodes, speaker, "person", source)
        for key, value in frames.favourites(sentence):
            fact = FactDraft(key=key, value=value, source_event_ids=source)
            nodes[speaker_ref].facts.append(fact)
    targets = set()
    for mention in frames.mentions(sentence, people):
        subject = speaker if mention.subject == frames.SPEAKER else mention.subject
        if subject is None:
            continue
        subject_ref = _add(nodes, subject, "person", source)
        target_ref = _add(nodes, mention.target, mention.kind, source)
        targets.add(_key(mention.target))
        edges.append(EdgeDraft(from_ref=subject_ref, to_ref=target_ref, relation=mention.relation,
                               exclusive=mention.exclusive, source_event_ids=source))  # fmt: skip
        if mention.fact_key:
            fact = FactDraft(key=mention.fact_key, value=mention.target, source_event_ids=source)
            nodes[subject_ref].facts.append(fact)
    return targets


def _speaker(event: Mapping[str, Any], text: str, people: Sequence[str]) -> str | None:
    """Who said it: the summary's attribution ("Caroline said: …"), the user for an
    unnamed one, None for the assistant (not a node); else the first participant of a
    first-person statement, or the user."""
    said = _ATTRIBUTION.match(str(event.get("summary", "")))
    if said is not None:
        name = said["speaker"].strip()
        if name in _ASSISTANT_WORDS:
            return None
        if name in _USER_WORDS:
            return USER
        if _is_name(name):
            return name
    if FIRST_PERSON.search(text):
        return people[0] if people else USER
    return None


def _is_name(name: object) -> bool:
    return isinstance(name, str) and bool(normalise_key(name)) and is_person_name(name)


def _subject(text: str, people: Sequence[str], speaker: str | None) -> str | None:
    """Whom the event's fact is about: the speaker of a first-person statement, else the
    participant it names (or the first)."""
    if FIRST_PERSON.search(text) and speaker is not None:
        return speaker
    named = [p for p in people if p in text]
    return named[0] if named else people[0] if people else None


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
    node = nodes.get(ref) or _by_alias(nodes, name, type_)
    if node is None:
        nodes[ref] = NodeDraft(ref=ref, name=name, type=type_,  # type: ignore[arg-type]
                               source_event_ids=list(source))  # fmt: skip
        for alias in aliases:
            _alias(nodes[ref], alias, source)
    else:
        for alias in aliases:
            _alias(node, alias, source)
        if source[0] not in node.source_event_ids:
            node.source_event_ids.append(source[0])
        ref = node.ref
    return ref


def _ref_of(nodes: Mapping[str, NodeDraft], name: str) -> str:
    """The ref of the person draft answering to ``name`` (by name, else alias)."""
    found = nodes.get(_ref(name, "person")) or _by_alias(nodes, name, "person")
    assert found is not None  # added just before
    return found.ref


def _by_alias(nodes: Mapping[str, NodeDraft], name: str, type_: str) -> NodeDraft | None:
    """The draft that already answers to ``name`` as an alias ("I'm Mara" made it the
    user's), so the batch proposes one node, not two the store would then merge."""
    key = _key(name)
    for node in nodes.values():
        if node.type == type_ and any(_key(alias) == key for alias in node.aliases):
            return node
    return None


def _alias(node: NodeDraft, name: str, source: list[str]) -> None:
    """Another name of the node, with the events that gave it (its field provenance)."""
    if _key(name) == _key(node.name):
        return
    if name not in node.aliases:
        node.aliases.append(name)
    cited = node.alias_sources.setdefault(name, [])
    cited += [i for i in source if i not in cited]
