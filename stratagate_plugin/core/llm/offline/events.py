"""Offline event extraction (spec §3.3): one card per sentence stating a fact or state change.

A sentence becomes an event when a cue names its type (decision, plan, change, cancellation,
preference, rule, first-person activity …) or states a standing fact (a habit, a home, a job,
a health fact: "I drink coffee every morning", "Clara lives in Porto", "我对花生过敏"), it is
not a question and carries at least two content terms (one beside a health cue). A
cancelling verb under a negation ("not gonna give up on") cancels nothing. Admission is
asymmetric: a person's statements (the user, or any speaker named "Name: …") pass that low
threshold; an unnamed assistant's sentence must state an outcome,
root cause, limit or decision that is not an acknowledgement nor an echo of the user's words
in the same block. Its time comes from ``core.text.temporal``; a sentence without one inherits the
latest expression of the same message (basis ``inferred``), and "just"/"刚" means the message
day. A sentence that corrects or changes an earlier statement supersedes it (``relations``),
whether that one is in the timeline or drafted from an earlier sentence of the same block.
"""

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from datetime import datetime, timedelta, tzinfo
from typing import Any

from ...clock import parse_iso
from ...text.temporal.resolve import UNKNOWN, TimeExpression, find_time_expressions, is_future
from ..tasks import Criticality, EventCardDraft, EventExtraction, Scope
from .entity_types import never_entity
from .event_people import card_tags, participants_of
from .gazetteer import is_known_place
from .graph_frames import mentions as frame_mentions
from .han_names import HAN_NAMED, han_person
from .lexicon import (
    ACKNOWLEDGEMENT,
    ASSISTANT_FINDING,
    CANCELLATION,
    ELIDED_SUBJECT,
    EVENT_CUES,
    FEELING,
    FIRST_PERSON,
    IDENTITY,
    JUST_NOW,
    LONG_TERM,
    NEGATED_CANCEL,
    ONGOING,
    PREFERENCE,
    PROJECT_SCOPE,
    REPLACEMENT,
    REQUEST,
    RESCHEDULE,
    RULE,
    SAFETY,
    SESSION_SCOPE,
    STANDING,
)
from .relations import relation_fields
from .statements import owned_title, statement_kind
from .text import (
    Sentence,
    clean,
    clip,
    content_terms,
    is_latin,
    is_person_name,
    is_question,
    split_sentences,
    split_speaker,
)
from .titles import attributed, bare, headline, is_chinese, speaker_label

MAX_EVENTS = 24
_ASSISTANT_TYPES = {"decision", "change", "cancellation", "release", "task_completed", "migration"}
_IMPERSONAL_TYPES = _ASSISTANT_TYPES | {"meeting", "incident"}
ECHO = 0.5
_HAN_START = re.compile(r"[\u4e00-\u9fff]")
_CLAUSE_BREAK = re.compile(
    r"[,;:—–，；：]|\s(?:and|but|so|because)\s|但是|而且|所以|因为", re.IGNORECASE
)


def message_sentences(messages: Iterable[Mapping[str, Any]]) -> list[Sentence]:
    """The sentences of user and assistant messages, speaker labels split off; an answer
    composed from memory states nothing new and gives none."""
    sentences: list[Sentence] = []
    for message in messages:
        role = str(message.get("role", ""))
        if role not in ("user", "assistant") or message.get("composed_from_memory"):
            continue
        speaker, body = split_speaker(clean(str(message.get("content") or "")))
        for index, text in enumerate(split_sentences(body)):
            sentences.append(
                Sentence(text, str(message.get("id", "")), role, speaker,
                         str(message.get("created_at") or ""), index)
            )  # fmt: skip
    return sentences


def event_type_of(
    sentence: Sentence, timed: bool = False, heard: frozenset[str] = frozenset()
) -> str | None:
    """The event type a sentence announces, or None for fillers, questions and chatter.

    ``timed``: the sentence has its own time expression, which counts as a content term
    and makes a statement an event even without a first-person subject. ``heard``: the
    content terms the user said in the block, which an assistant sentence must not echo.
    """
    if sentence.role == "assistant" and sentence.speaker is None:
        return _assistant_type(sentence.text, timed, heard)
    return _person_type(sentence, timed)


def _person_type(sentence: Sentence, timed: bool) -> str | None:
    text = sentence.text
    kind = statement_kind(bare(text)) or _relation_stated(bare(text))
    # "我对花生过敏", "I'm vegetarian": one term is enough beside a health cue or a frame
    weighty = timed or kind is not None or SAFETY.search(text) is not None
    if is_question(text) or len(content_terms(text)) + weighty < 2:
        return None
    found = next((name for name, cue in EVENT_CUES if cue.search(text)), None)
    resolve = found == "cancellation" and NEGATED_CANCEL.search(text) is not None
    if resolve:
        found = "other"  # "I won't give up on X" is resolve, not a cancellation
    changed = REPLACEMENT.search(text) or RESCHEDULE.search(text)
    if found == "cancellation" and changed and not CANCELLATION.search(text):
        found = "change"
    personal = FIRST_PERSON.search(text) is not None or _elided_subject(text)
    if found is None and (kind is not None or _standing(text)):
        found = "other"
    if found is None and RULE.search(text):
        found = "decision" if PROJECT_SCOPE.search(text) or not personal else "other"
    if found is None and sentence.role == "user" and REQUEST.search(text):
        return "other"
    if found is None and (timed or (personal and ELIDED_SUBJECT.search(bare(text)))):
        found = "plan" if is_future(text) else "other"
    if found is None:
        return None
    named = _named_subject(text) and STANDING.search(text) is not None
    admitted = personal or timed or named or resolve or found in _IMPERSONAL_TYPES
    admitted = admitted or kind is not None  # its frame has a person for subject
    return found if admitted else None


def _relation_stated(text: str) -> str | None:
    """A relation the graph reads ("Been only to Rome once", 我在祖国瑞典的奶奶…): a
    statement, so an event card the graph can cite (issue 26: statements become events)."""
    found = [m for m in frame_mentions(text, ()) if _named(m.target, text)]
    return "relation" if found else None


def _named(target: str, text: str) -> bool:
    """A name, not a phrase a loose frame caught (最完美, 本地组织): capitalised words (not an
    acronym before its noun, "LGBTQ+ rights"), a known Chinese place, a named Chinese group
    or person, or a group's quoted name."""
    if never_entity(target, text):
        return False
    if is_latin(target):
        return not (target.isupper() and re.search(rf"\b{re.escape(target)}\+?\s+[a-z]", text))
    quoted = re.search(rf"[‘'“\"《「]{re.escape(target)}[’'”\"》」]", text)
    named = HAN_NAMED.fullmatch(target) or han_person(target) == target
    return bool(is_known_place(target) or named or quoted)


def _standing(text: str) -> bool:
    """A preference, identity, ongoing state, habit, home, job or health fact; a feeling
    about something done every day ("thrilled about dancing each day") is no habit."""
    if any(cue.search(text) for cue in (PREFERENCE, IDENTITY, ONGOING, SAFETY)):
        return True
    return STANDING.search(text) is not None and FEELING.search(text) is None


def _named_subject(text: str) -> bool:
    """The sentence is about someone named: "Clara lives in Porto", "小林住在杭州"."""
    said = bare(text)
    standing = STANDING.search(said)
    if standing is not None and _HAN_START.match(said) and standing.start() > 0:
        return True
    first = said.split(maxsplit=1)[:1]
    return bool(first) and first[0][:1].isupper() and is_person_name(first[0].strip(",.'"))


def _assistant_type(text: str, timed: bool, heard: frozenset[str]) -> str | None:
    """High threshold: a new outcome, root cause, limit or decision, not an ack or echo."""
    said = ACKNOWLEDGEMENT.sub("", text).strip()
    terms = set(content_terms(said))
    if is_question(said) or len(terms) + timed < 2 or len(terms & heard) >= ECHO * len(terms):
        return None
    found = next((name for name, cue in EVENT_CUES if cue.search(said)), None)
    if found in _ASSISTANT_TYPES:
        return found
    return "incident" if ASSISTANT_FINDING.search(said) else None


def _elided_subject(text: str) -> bool:
    """Chat drops the subject: "Took a trip to Rome last week" speaks for the speaker."""
    return ELIDED_SUBJECT.search(bare(text)) is not None


def extract_events(payload: Mapping[str, Any], zone: tzinfo) -> EventExtraction:
    """Event cards for the target block of an EXTRACT_EVENT_CARDS payload."""
    messages = list(payload.get("target", {}).get("messages", []))
    allowed = set(payload.get("allowed_source_message_ids") or [m.get("id") for m in messages])
    timeline = [dict(entry) for entry in payload.get("timeline") or []]
    sentences = message_sentences(messages)
    speakers = {s.speaker for s in sentences if s.speaker}
    heard = frozenset(t for s in sentences if s.role == "user" for t in content_terms(s.text))
    cards: dict[str, EventCardDraft] = {}
    for sentence, when, own in _timed(sentences, zone):
        event_type = event_type_of(sentence, own, heard)
        if event_type is None or sentence.message_id not in allowed:
            continue
        card = draft_card(sentence, event_type, when, _reference(sentence, zone), speakers)
        card = _related(card, sentence.text, event_type, timeline, speakers)
        if _merge(cards, card) and len(cards) <= MAX_EVENTS:
            timeline.append(_as_entry(card, f"card:{len(cards) - 1}"))
    events = list(cards.values())[:MAX_EVENTS]
    return EventExtraction(should_extract=bool(events), events=events)


def _related(
    card: EventCardDraft,
    text: str,
    event_type: str,
    candidates: list[dict[str, Any]],
    speakers: set[str],
) -> EventCardDraft:
    """The card with its links to the timeline or an earlier card of this block; what it
    supersedes is no longer live for the sentences after it."""
    links = relation_fields(_as_entry(card, ""), text, event_type, candidates, speakers)
    for entry in candidates:
        if entry.get("id") in links.get("supersedes_event_ids", []):
            entry["status"] = "superseded"
    if not links:
        return card
    return card.model_copy(update={"temporal": {**(card.temporal or {}), **links}})


def _as_entry(card: EventCardDraft, event_id: str) -> dict[str, Any]:
    """A drafted card in the timeline's shape, so later sentences can link to it."""
    return {**(card.temporal or {}), "id": event_id, "title": card.title,
            "summary": card.summary, "status": "active"}  # fmt: skip


def _reference(sentence: Sentence, zone: tzinfo) -> datetime:
    if not sentence.created_at:
        return datetime.now(zone)
    return parse_iso(sentence.created_at).astimezone(zone)


def _timed(
    sentences: Sequence[Sentence], zone: tzinfo
) -> list[tuple[Sentence, TimeExpression, bool]]:
    """Each sentence, its time and whether that time is its own expression.

    Without one it inherits the message's latest expression (basis inferred), or takes the
    message day for "just …", "is now open" and present-progressive statements.
    """
    timed: list[tuple[Sentence, TimeExpression, bool]] = []
    latest: dict[str, TimeExpression] = {}
    for sentence in sentences:
        reference = _reference(sentence, zone)
        found = find_time_expressions(sentence.text, reference)
        if found:
            latest[sentence.message_id] = found[-1]
            timed.append((sentence, found[0], True))
        elif sentence.message_id in latest:
            inherited = replace(latest[sentence.message_id], basis="inferred")
            timed.append((sentence, inherited, False))
        else:
            timed.append((sentence, _mention_day(sentence.text, reference), False))
    return timed


def _mention_day(text: str, reference: datetime) -> TimeExpression:
    """The message day for "just …", "is now open" and ongoing statements, else unknown.

    The tense is the clause's: "I'm currently reading X and hoping it'll help" is read now.
    """
    match = JUST_NOW.search(text) or ONGOING.search(text)
    if match is None or is_future(_clause_at(text, match.start())):
        return UNKNOWN
    start = reference.replace(hour=0, minute=0, second=0, microsecond=0)
    end = start + timedelta(days=1, seconds=-1)
    return TimeExpression(start, end, "day", "inferred", match.group(0), match.start())


def _clause_at(text: str, position: int) -> str:
    """The clause of ``text`` around ``position`` (cut at commas, semicolons, "and", "but")."""
    starts = [0] + [m.end() for m in _CLAUSE_BREAK.finditer(text) if m.end() <= position]
    ends = [m.start() for m in _CLAUSE_BREAK.finditer(text) if m.start() > position]
    return text[max(starts) : min(ends, default=len(text))]


def draft_card(
    sentence: Sentence,
    event_type: str,
    when: TimeExpression,
    reference: datetime,
    speakers: set[str],
) -> EventCardDraft:
    """One atomic card: title, summary with speaker and resolved date, temporal object."""
    participants = participants_of(sentence, speakers)
    kind = statement_kind(bare(sentence.text))
    temporal: dict[str, Any] = {"mentioned_at": reference.isoformat(), **when.as_temporal()}
    temporal |= {"status": _status(sentence.text, event_type, when, reference, kind)}
    temporal |= {"participants": participants, "event_type": event_type}
    title = headline(sentence)
    if kind == "introduction" and is_chinese(sentence.text):  # 我叫李明，是一名医生: both
        title = clip(bare(sentence.text).rstrip("。！!."), 90)
    if kind is not None:
        title = owned_title(title, bare(sentence.text), speaker_label(sentence))
    return EventCardDraft(
        title=title,
        summary=clip(attributed(sentence, _date_note(when)), 1000),
        source_message_ids=[sentence.message_id],
        scope=_scope(sentence.text),
        criticality=_criticality(sentence.text, kind),
        tags=card_tags(sentence.text, speakers),
        quotes=[clip(sentence.text, 400)],
        temporal=temporal,
    )


def _date_note(when: TimeExpression) -> str:
    if when.basis in ("relative", "inferred") and when.known:
        return f" [{when.original_text} = {when.describe()}]"
    return ""


def _status(
    text: str, event_type: str, when: TimeExpression, reference: datetime, kind: str | None
) -> str:
    """``kind``: the durable statement the sentence makes; an age or a birthday holds on
    whatever date it names, other statements while they are said in the present."""
    if event_type == "cancellation":
        return "cancelled"
    if kind in ("age", "birthday") or (kind and not when.known and event_type == "other"):
        return "ongoing"
    if REQUEST.search(text):
        return "planned"
    if when.start is not None and when.start > reference:
        return "planned"
    if when.end is not None and when.end < reference and when.basis != "inferred":
        return "occurred"
    if event_type == "plan" or is_future(text):
        return "planned"
    if any(cue.search(text) for cue in (ONGOING, PREFERENCE, IDENTITY, STANDING)):
        return "ongoing"
    return "occurred"


def _scope(text: str) -> Scope:
    """Project rules → project; one-off requests → session; personal facts → user."""
    if PROJECT_SCOPE.search(text):
        return "project"
    if LONG_TERM.search(text) or not (SESSION_SCOPE.search(text) or REQUEST.search(text)):
        return "user"
    return "session"


def _criticality(text: str, kind: str | None = None) -> Criticality:
    """A durable statement about a person (``statements``) is part of who they are."""
    if SAFETY.search(text):
        return "safety"
    if PREFERENCE.search(text):
        return "preference"
    return "identity" if IDENTITY.search(text) or kind is not None else "routine"


def _merge(cards: dict[str, EventCardDraft], card: EventCardDraft) -> bool:
    """Identical summaries become one card with the union of their source messages; True
    when ``card`` is a new one."""
    existing = cards.get(card.summary)
    if existing is None:
        cards[card.summary] = card
        return True
    ids = list(dict.fromkeys(existing.source_message_ids + card.source_message_ids))
    cards[card.summary] = existing.model_copy(update={"source_message_ids": ids})
    return False
