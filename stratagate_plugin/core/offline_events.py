"""Offline event extraction (spec §3.3): one card per sentence stating a fact or state change.

A sentence becomes an event when a cue names its type (decision, plan, change, cancellation,
preference, first-person activity …), it is not a question and carries at least two content
terms. Its time comes from ``core.temporal``; a sentence without one inherits the latest
expression of the same message (basis ``inferred``), and "just"/"刚" means the message day.
"""

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from datetime import datetime, timedelta, tzinfo
from typing import Any

from .offline_lexicon import (
    DISCOURSE,
    ELIDED_SUBJECT,
    EVENT_CUES,
    FIRST_PERSON,
    HONORIFIC_NAME,
    IDENTITY,
    JUST_NOW,
    LONG_TERM,
    ONGOING,
    PREFERENCE,
    PROJECT_SCOPE,
    SAFETY,
    SESSION_SCOPE,
)
from .offline_text import (
    Sentence,
    clean,
    clip,
    content_terms,
    is_question,
    phrases,
    proper_names,
    split_sentences,
    split_speaker,
    without_times,
)
from .tasks import Criticality, EventCardDraft, EventExtraction, Scope
from .temporal import UNKNOWN, TimeExpression, find_time_expressions, is_future
from .timeutil import parse_iso

MAX_EVENTS = 24
_ASSISTANT_TYPES = {"decision", "change", "cancellation", "release", "task_completed", "migration"}
_IMPERSONAL_TYPES = _ASSISTANT_TYPES | {"meeting", "incident"}


def message_sentences(messages: Iterable[Mapping[str, Any]]) -> list[Sentence]:
    """The sentences of user and assistant messages, speaker labels split off."""
    sentences: list[Sentence] = []
    for message in messages:
        role = str(message.get("role", ""))
        if role not in ("user", "assistant"):
            continue
        speaker, body = split_speaker(clean(str(message.get("content") or "")))
        for index, text in enumerate(split_sentences(body)):
            sentences.append(
                Sentence(text, str(message.get("id", "")), role, speaker,
                         str(message.get("created_at") or ""), index)
            )  # fmt: skip
    return sentences


def event_type_of(sentence: Sentence, timed: bool = False) -> str | None:
    """The event type a sentence announces, or None for fillers, questions and chatter.

    ``timed``: the sentence has its own time expression, which counts as a content term
    and makes a statement an event even without a first-person subject.
    """
    text = sentence.text
    if is_question(text) or len(content_terms(text)) + timed < 2:
        return None
    found = next((name for name, cue in EVENT_CUES if cue.search(text)), None)
    personal = FIRST_PERSON.search(text) is not None or _elided_subject(text)
    if found is None and (PREFERENCE.search(text) or IDENTITY.search(text) or ONGOING.search(text)):
        found = "other"
    if found is None and (timed or (personal and ELIDED_SUBJECT.search(_bare(text)))):
        found = "plan" if is_future(text) else "other"
    if found is None:
        return None
    if sentence.role == "assistant" and sentence.speaker is None:
        return found if found in _ASSISTANT_TYPES else None
    return found if personal or timed or found in _IMPERSONAL_TYPES else None


def _bare(text: str) -> str:
    """The sentence without leading greetings and discourse markers."""
    return DISCOURSE.sub("", text).lstrip(" ,!.-—")


def _elided_subject(text: str) -> bool:
    """Chat drops the subject: "Took a trip to Rome last week" speaks for the speaker."""
    return ELIDED_SUBJECT.search(_bare(text)) is not None


def extract_events(payload: Mapping[str, Any], zone: tzinfo) -> EventExtraction:
    """Event cards for the target block of an EXTRACT_EVENT_CARDS payload."""
    messages = list(payload.get("target", {}).get("messages", []))
    allowed = set(payload.get("allowed_source_message_ids") or [m.get("id") for m in messages])
    sentences = message_sentences(messages)
    speakers = {s.speaker for s in sentences if s.speaker}
    cards: dict[str, EventCardDraft] = {}
    for sentence, when, own in _timed(sentences, zone):
        event_type = event_type_of(sentence, own)
        if event_type is None or sentence.message_id not in allowed:
            continue
        card = draft_card(sentence, event_type, when, _reference(sentence, zone), speakers)
        _merge(cards, card)
    events = list(cards.values())[:MAX_EVENTS]
    return EventExtraction(should_extract=bool(events), events=events)


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
    """The message day for "just …", "is now open" and ongoing statements, else unknown."""
    match = JUST_NOW.search(text) or ONGOING.search(text)
    if match is None or is_future(text):
        return UNKNOWN
    start = reference.replace(hour=0, minute=0, second=0, microsecond=0)
    end = start + timedelta(days=1, seconds=-1)
    return TimeExpression(start, end, "day", "inferred", match.group(0), match.start())


def draft_card(
    sentence: Sentence,
    event_type: str,
    when: TimeExpression,
    reference: datetime,
    speakers: set[str],
) -> EventCardDraft:
    """One atomic card: title, summary with speaker and resolved date, temporal object."""
    speaker = sentence.speaker or ("User" if sentence.role == "user" else "Assistant")
    participants = _participants(sentence, speakers)
    temporal: dict[str, Any] = {"mentioned_at": reference.isoformat(), **when.as_temporal()}
    temporal |= {"status": _status(sentence.text, event_type, when, reference)}
    temporal |= {"participants": participants, "event_type": event_type}
    return EventCardDraft(
        title=clip(f"{speaker}: {_main_clause(sentence.text)}", 120),
        summary=clip(f"{speaker}: {sentence.text}{_date_note(when)}", 1000),
        source_message_ids=[sentence.message_id],
        scope=_scope(sentence.text),
        criticality=_criticality(sentence.text),
        tags=_tags(sentence.text),
        quotes=[clip(sentence.text, 400)],
        temporal=temporal,
    )


def _main_clause(text: str) -> str:
    """The sentence without greetings, cut at its first clause break."""
    clause = _bare(text) if len(_bare(text).split()) > 2 else text
    for separator in (" - ", " – ", " — ", "; ", ", and ", ", but ", "，但", "；"):
        head = clause.split(separator, 1)[0]
        if len(content_terms(head)) >= 2:
            clause = head
    clause = clause.rstrip(" .!。！")
    return clip(clause[:1].upper() + clause[1:], 90)


def _date_note(when: TimeExpression) -> str:
    if when.basis in ("relative", "inferred") and when.known:
        return f" [{when.original_text} = {when.describe()}]"
    return ""


def _status(text: str, event_type: str, when: TimeExpression, reference: datetime) -> str:
    if event_type == "cancellation":
        return "cancelled"
    if when.start is not None and when.start > reference:
        return "planned"
    if when.end is not None and when.end < reference and when.basis != "inferred":
        return "occurred"
    if event_type == "plan" or is_future(text):
        return "planned"
    if ONGOING.search(text) or PREFERENCE.search(text) or IDENTITY.search(text):
        return "ongoing"
    return "occurred"


def _scope(text: str) -> Scope:
    if PROJECT_SCOPE.search(text):
        return "project"
    if LONG_TERM.search(text) or not SESSION_SCOPE.search(text):
        return "user"
    return "session"


def _criticality(text: str) -> Criticality:
    if SAFETY.search(text):
        return "safety"
    if PREFERENCE.search(text):
        return "preference"
    return "identity" if IDENTITY.search(text) else "routine"


def _participants(sentence: Sentence, speakers: set[str]) -> list[str]:
    names = [sentence.speaker] if sentence.speaker else []
    names += [name for name in sorted(speakers) if name in sentence.text]
    names += proper_names(sentence.text) + HONORIFIC_NAME.findall(sentence.text)
    return list(dict.fromkeys(names))


def _tags(text: str) -> list[str]:
    """Up to five content phrases of the sentence, time expressions left out."""
    return list(dict.fromkeys(phrases(without_times(text))))[:5]


def _merge(cards: dict[str, EventCardDraft], card: EventCardDraft) -> None:
    """Identical summaries become one card with the union of their source messages."""
    existing = cards.get(card.summary)
    if existing is None:
        cards[card.summary] = card
        return
    ids = list(dict.fromkeys(existing.source_message_ids + card.source_message_ids))
    cards[card.summary] = existing.model_copy(update={"source_message_ids": ids})
