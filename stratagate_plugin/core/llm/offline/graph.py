"""The offline graph projector (spec §4, issue 26): typed entities, relation edges and
attribute facts from event cards, English and Chinese.

A name becomes a node only with evidence for its type (``entity_types``): the speaker's
label makes a person, "Sweden" or "in Porto" a place, "Acme Logistics" or "works at" an
organization, "switched to Linear" a tool, "Project Atlas" a project; weekdays, months,
holidays, quoted titles and sentence openers never do. Each sentence is read for relation
frames (``graph_frames``: kinship and roles, residence, work, study, origin, membership,
projects, tools, travel, ownership) and attribute frames (``graph_attributes``: role, age,
diet, favourites, pets …); they become edges and facts keyed by the attribute, so "moved to
Lisbon" replaces "lives in Porto" and unrelated facts never share a key. A sentence stating
no attribute gives no fact: it stays an event. Self-introductions, short forms of a known
person ("Mel" for Melanie, when only one fits) and "my sister" after "my sister Ana" resolve
to that person. Every node, alias, edge and fact cites the event it came from.
"""

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ...graph.resolution import normalise_key
from ...graph.shapes import MAX_EDGES, MAX_NODES, EdgeDraft, FactDraft, GraphProjection, NodeDraft
from . import discourse
from . import graph_frames as frames
from .discourse import Focus
from .entity_types import never_entity, organization_shape, short_form_of, type_of
from .gazetteer import PLACES
from .graph_attributes import attributes
from .han_names import han_person
from .lexicon import FIRST_PERSON
from .roles import EXCLUSIVE_ROLES, ROLES, SPEAKER, THIRD
from .subjects import is_name, subject_before
from .text import is_latin, is_person_name, proper_names, split_sentences

USER, USER_ZH = "User", "用户"
_ATTRIBUTION = re.compile(r"^(?P<speaker>[^:：]{1,40}?)(?:\s+said|说)\s*[:：]\s*")
_USER_WORDS = frozenset({"The user", "the user", "User", "用户"})
_ASSISTANT_WORDS = frozenset({"The assistant", "the assistant", "Assistant", "助手"})
_HAN_PLACES = tuple(p for p in PLACES if not p.isascii())


@dataclass
class _Batch:
    """What the projection holds so far, and whom it knows to be a person."""

    known: list[str]  # existing person nodes' names (the payload's context)
    nodes: dict[str, NodeDraft] = field(default_factory=dict)
    edges: list[EdgeDraft] = field(default_factory=list)
    kin: dict[str, dict[str, str]] = field(default_factory=dict)  # speaker → relation → name
    focus: Focus = field(default_factory=Focus)  # whom "she" / 他 refers to
    said_first: dict[str, str] = field(default_factory=dict)  # named speaker → first event

    def persons(self) -> list[str]:
        return [*self.known, *(n.name for n in self.nodes.values() if n.type == "person")]


def project_graph(payload: Mapping[str, Any]) -> GraphProjection:
    """A projection of the payload's events (``PROJECT_GRAPH``); every record cites them.
    Over the §4 limits the first nodes are kept, and only the edges between kept nodes."""
    context = payload.get("nodes") or []
    batch = _Batch(known=[str(n["name"]) for n in context if n.get("type") == "person"])
    batch.kin = _known_kin(payload.get("kin") or [])
    batch.known += [name for relatives in batch.kin.values() for name in relatives.values()]
    for event in payload.get("events", []):
        _project_event(event, batch)
    _speakers_know(batch)
    kept = list(batch.nodes.values())[:MAX_NODES]
    refs = {node.ref for node in kept}
    between = [e for e in batch.edges if e.from_ref in refs and e.to_ref in refs]
    return GraphProjection(nodes=kept, edges=between[:MAX_EDGES])


def _known_kin(edges: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, str]]:
    """speaker → relation → relative from the graph's kinship edges (the payload's ``kin``),
    only where exactly one person holds the relation: two sisters, and "my sister" is
    nobody in particular."""
    holders: dict[tuple[str, str], set[str]] = {}
    for edge in edges:
        pair = (str(edge.get("from", "")), str(edge.get("relation", "")))
        if all(pair) and edge.get("to"):
            holders.setdefault(pair, set()).add(str(edge["to"]))
    kin: dict[str, dict[str, str]] = {}
    for (speaker, relation), names in holders.items():
        if len(names) == 1:
            kin.setdefault(speaker, {})[relation] = next(iter(names))
    return kin


def _speakers_know(batch: _Batch) -> None:
    """Two named speakers talking to each other know each other: one ``knows`` edge per pair
    (alphabetical, so every batch proposes the same one), citing each one's first line."""
    named = sorted(batch.said_first)
    for index, first in enumerate(named):
        for second in named[index + 1 :]:
            one, other = (
                _by_name(batch.nodes, first, "person"),
                _by_name(batch.nodes, second, "person"),
            )
            if one is not None and other is not None:
                source = [batch.said_first[first], batch.said_first[second]]
                _edge(batch, one.ref, other.ref, "knows", False, source)


def _project_event(event: Mapping[str, Any], batch: _Batch) -> None:
    source = [str(event["id"])]
    text = " ".join(event.get("quotes") or []) or _said(str(event.get("summary", "")))
    speaker = _speaker(event, text, batch)
    if speaker not in (None, USER) and _ATTRIBUTION.match(str(event.get("summary", ""))):
        batch.said_first.setdefault(str(speaker), source[0])
    own_names: list[str] = []
    if speaker is not None:  # "I'm Mara": Mara is the speaker, not someone else
        ref = _add(batch, speaker, "person", source)
        own_names = frames.self_names(text, [])
        for name in own_names:
            _alias(batch.nodes[ref], name, source)
        batch.focus.speakers.add(speaker)
    batch.focus.next_event()
    kin = batch.kin.setdefault(speaker or "", {})
    sentences = split_sentences(text)
    for index, sentence in enumerate(sentences):
        _kin_said(sentence, speaker, kin, source, batch)
        _relations(sentence, speaker, kin, source, batch)
        _kin_said(sentence, speaker, kin, source, batch)  # "他是我的教练" after "认识张伟"
        following = sentences[index + 1] if index + 1 < len(sentences) else ""
        _attributes(sentence, following, speaker, kin, source, batch)
        batch.focus.follow(sentence, batch.persons(), kin)
    named = [n.name for n in batch.nodes.values() if source[0] in n.source_event_ids]
    for name in _candidates(event, text):
        if name in own_names or name == speaker or any(name in n and name != n for n in named):
            continue  # "Edinburgh" of "University of Edinburgh", 浙江 of 浙江大学
        if _by_name(batch.nodes, name, "animal"):
            continue  # a pet is not also a person
        if found := type_of(name, text, batch.persons()):
            _add(batch, name, found, source)
    batch.focus.follow(text, batch.persons(), kin)


def _kin_said(
    sentence: str, speaker: str | None, kin: dict[str, str], source: list[str], batch: _Batch
) -> None:
    """Kinship said with a copula, a naming verb or a pronoun ("Jonas is my boss", "she's
    been my flatmate", "I have a daughter. Her name is Mira", 他叫李响): speaker → person."""
    if speaker is None:
        return
    found = [(name, role, at) for name, role, at in discourse.named_roles(sentence)]
    if role := discourse.role_alone(sentence):
        batch.focus.wait(speaker, role)
    if waiting := batch.focus.waiting(speaker):
        found += [(name, waiting, 0) for name in discourse.naming(sentence)]
    for name in discourse.called(sentence):
        if is_name(name):
            _add(batch, name, "person", source)
    for name, role, at in found:
        person = _third(sentence[:at], batch, kin) if name == THIRD else name
        if not person or person == speaker or not is_name(person):
            continue
        if never_entity(person, sentence):
            continue
        kin[role] = person
        subject_ref = _add(batch, speaker, "person", source)
        person_ref = _add(batch, person, "person", source)
        exclusive = role in EXCLUSIVE_ROLES
        _edge(batch, subject_ref, person_ref, role, exclusive, source)


def _third(prefix: str, batch: _Batch, kin: dict[str, str]) -> str | None:
    """Whom "she" / 他 refers to: the person mentioned last before it, else the focus."""
    return batch.focus.last_in(prefix, batch.persons(), kin)


def _candidates(event: Mapping[str, Any], text: str) -> list[str]:
    """Names to type: the card's participants, capitalised names within sentences, and
    gazetteer places written in Chinese."""
    names = [p for p in event.get("participants", []) if isinstance(p, str) and p.strip()]
    names = [n if is_latin(n) else han_person(n.strip()) or n for n in names]  # 罗布邀请
    names += proper_names(text)
    names += [p for p in _HAN_PLACES if p in text]
    return list(dict.fromkeys(n.strip() for n in names))


def _relations(
    sentence: str, speaker: str | None, kin: dict[str, str], source: list[str], batch: _Batch
) -> None:
    """The sentence's relation frames as edges (and relation-keyed facts); "my sister Ana"
    remembered so that a later "my sister" alone is Ana."""
    for mention in frames.mentions(sentence, batch.persons(), kin):
        subject = speaker if mention.subject == SPEAKER else mention.subject
        if subject == THIRD:
            subject = _third(sentence[: mention.at], batch, kin)
        if never_entity(mention.target, sentence):
            continue
        kind = _frame_kind(mention, batch)
        target_ref = _add(batch, mention.target, kind, source, owned=mention.relation == "owns")
        if subject is None:  # "my dad works at X": X is evidenced, whose edge is unknown
            continue
        if (
            mention.subject == SPEAKER
            and mention.kind == "person"
            and mention.relation in (set(ROLES.values()))
        ):
            kin[mention.relation] = mention.target
        subject_ref = _add(batch, subject, "person", source)
        _edge(batch, subject_ref, target_ref, mention.relation, mention.exclusive, source)
        if mention.fact_key:
            fact = FactDraft(key=mention.fact_key, value=mention.target, source_event_ids=source)
            _fact(batch.nodes[subject_ref], fact)


def _frame_kind(mention: frames.Mention, batch: _Batch) -> str:
    """The target's type as its frame says, a company-shaped name an organization, and
    what someone owns an animal when the batch knows it as one ("Sam owns Biscuit")."""
    if mention.kind == "place" and organization_shape(mention.target):
        return "organization"
    if mention.relation == "owns" and _by_name(batch.nodes, mention.target, "animal"):
        return "animal"
    return mention.kind


def _attributes(
    sentence: str,
    following: str,
    speaker: str | None,
    kin: dict[str, str],
    source: list[str],
    batch: _Batch,
) -> None:
    """Attribute facts of the sentence (a pet's name may come in the next one), on the
    subject named before the frame, else the speaker."""
    text = f"{sentence} {following}".strip() if following else sentence
    for found in attributes(text):
        if found.start >= len(sentence):
            continue
        prefix = sentence[: found.start]
        if _PRONOUN.match(sentence, found.start):  # "Marco works …, he's an engineer"
            subject = _third(prefix, batch, kin)
        else:
            marker = subject_before(prefix, batch.persons(), kin)
            subject = speaker if marker == SPEAKER else marker
            subject = _third(prefix, batch, kin) if subject == THIRD else subject
        if subject is None or (found.owned and never_entity(found.value, text)):
            continue
        if subject != speaker and subject not in batch.persons():
            continue  # "Networking was a lifesaver": only a known person has attributes
        subject_ref = _add(batch, subject, "person", source)
        fact = FactDraft(key=found.key, value=found.value, source_event_ids=source)
        _fact(batch.nodes[subject_ref], fact)
        if found.owned:  # a pet: "my dog Biscuit", "Biscuit, our beagle", 我的猫咪咪
            owned_ref = _add(batch, found.value, "animal", source, owned=True)
            _edge(batch, subject_ref, owned_ref, "owns", False, source)


_PRONOUN = re.compile(r"(?:[Hh]e|[Ss]he)(?:'s|\s+is|\s+was)\b|[他她]")


def _said(summary: str) -> str:
    return _ATTRIBUTION.sub("", summary, count=1)


def _speaker(event: Mapping[str, Any], text: str, batch: _Batch) -> str | None:
    """Who said it: the summary's attribution ("Caroline said: …"), the user for an
    unnamed one, None for the assistant (not a node); else, for a first-person statement,
    its first participant known as a person, or the user."""
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
        persons = set(batch.persons())
        named = [p for p in event.get("participants", []) if p in persons]
        return named[0] if named else USER
    return None


def _is_name(name: object) -> bool:
    return isinstance(name, str) and bool(normalise_key(name)) and is_person_name(name)


def _key(name: str) -> str:
    return normalise_key(name)


def _ref(name: str, type_: str) -> str:
    return f"{type_}:{normalise_key(name)}"


def _add(batch: _Batch, name: str, type_: str, source: list[str], owned: bool = False) -> str:
    """The ref of the draft for ``name`` (made if new). A person's short form of exactly one
    known full name ("Mel" → "Melanie") is that person, with the short form as an alias."""
    nodes = batch.nodes
    short = name
    if type_ == "person" and not owned and _by_name(nodes, name, type_) is None:
        name = short_form_of(name, batch.persons()) or name
    node = _by_name(nodes, name, type_)
    if node is None:
        node = NodeDraft(ref=_ref(name, type_), name=name, type=type_,  # type: ignore[arg-type]
                         source_event_ids=list(source))  # fmt: skip
        nodes[node.ref] = node
        if name == USER:
            _alias(node, USER_ZH, source)
    elif source[0] not in node.source_event_ids:
        node.source_event_ids.append(source[0])
    if short != name:
        _alias(node, short, source)
    if owned and "owned" not in node.tags:
        node.tags.append("owned")
        node.tag_sources["owned"] = list(source)
    return node.ref


def _by_name(nodes: Mapping[str, NodeDraft], name: str, type_: str) -> NodeDraft | None:
    """The draft answering to ``name`` by name or alias ("I'm Mara" made it the user's),
    so the batch proposes one node, not two the store would then merge."""
    found = nodes.get(_ref(name, type_))
    if found is not None:
        return found
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


def _fact(node: NodeDraft, fact: FactDraft) -> None:
    same = [f for f in node.facts if f.key == fact.key and f.value == fact.value]
    if same:
        same[0].source_event_ids.extend(i for i in fact.source_event_ids
                                        if i not in same[0].source_event_ids)  # fmt: skip
    else:
        node.facts.append(fact)


def _edge(
    batch: _Batch, from_ref: str, to_ref: str, relation: str, exclusive: bool, source: list[str]
) -> None:
    if from_ref == to_ref:
        return
    for edge in batch.edges:
        if (edge.from_ref, edge.relation, edge.to_ref) == (from_ref, relation, to_ref):
            edge.source_event_ids.extend(i for i in source if i not in edge.source_event_ids)
            return
    batch.edges.append(EdgeDraft(from_ref=from_ref, to_ref=to_ref, relation=relation,
                                 exclusive=exclusive, source_event_ids=list(source)))  # fmt: skip


__all__: Sequence[str] = ["USER", "project_graph"]
