"""Relations of a new card to what was said before (spec §3.3, §3.4), for the offline model
and for the check derivation runs after any model answered (``derivation/truth.py``).

A correction, change of mind or cancellation supersedes the event it talks about (a
cancellation carries status ``cancelled`` itself; the older card stays as history); an
event that is already over is not cancelled, only related. The candidates are the
extraction timeline's events and the cards drafted earlier from the same block, named
``card:<n>`` (``tasks.py``), so "Actually we moved the launch to May" replaces "We planned
the launch for April 20th" whether or not both sentences are in one block.

A card *changes* something when it says so ("moved … to", "switched", "no longer", "now
prefer", 改到, 不再, 现在更喜欢 …). It then supersedes the live candidate it shares the most
subject terms with: content terms (stemmed) without time words, change and preference
verbs, role words and speaker names; at least two shared, or the whole of a one-term side
("the launch"), covering half of the smaller set. A change of preference with no shared
subject ("I now prefer phone calls" after "I prefer email") supersedes the same speaker's
latest preference stated with the same verb. "Actually" / 其实 alone corrects only a matching
event whose time differs. Ties go to the most recently mentioned candidate. Two different
named speakers never share a subject; the unnamed assistant and the user may.
"""

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ...text.search_terms import stem
from .lexicon import (
    CANCELLATION,
    CORRECTION_HINT,
    DISCOURSE,
    EVENT_CUES,
    NEGATED_CANCEL,
    PREFERENCE,
    PREFERENCE_FRAME,
    REPLACEMENT,
    RESCHEDULE,
    STATE_FRAMES,
)
from .text import content_terms, without_times, word_set

MIN_CONTAINMENT = 0.5
MIN_SHARED = 2
_ATTRIBUTION = re.compile(r"^(?P<speaker>[^:：]{1,40}?)(?:\s+said|说)\s*[:：]\s*")
_ROLE_WORDS = ("The user", "the user", "The assistant", "the assistant", "用户", "助手")
_UNNAMED = frozenset(_ROLE_WORDS)
_VERBS = word_set(
    """move moved moving change changed switch switched cancel cancelled canceled decided
    postpone postponed reschedule rescheduled instead longer prefer prefers preferred rather
    like likes love loves enjoy enjoys hate hates favorite favourite plan plans planned
    planning schedule scheduled delay delayed push pushed meant correction anymore stopped
    stop quit"""
)
_VERB_STEMS = frozenset(stem(word) for word in _VERBS)
# Words that name a kind of event, not which one: "the Iceland trip" is about Iceland.
_EVENT_NOUN_TEXT = """trip trips travel vacation holiday journey plan plans event party meeting
    appointment visit class lesson session"""
_EVENT_NOUNS = frozenset(stem(word) for word in word_set(_EVENT_NOUN_TEXT)) | {
    "旅行", "旅游", "行程", "计划", "活动", "安排"
}  # fmt: skip
_SELF = frozenset({"i", "we", "me", "us", "my", "our", "the user", "user", "我", "我们", "用户"})
# "I live in Paris and I love painting": a second fact with its own subject.
_SECOND_CLAUSE = re.compile(
    r"(?:[,;]|\band\b|\bbut\b)\s*(?:i|i'm|we|we're|he|she|they|my|our)\b|[，；]\s*(?:我|他|她)",
    re.IGNORECASE,
)
_FILLER = re.compile(
    r"\b(?:now|still|currently|actually|just|recently|finally|also|has|have|had|already"
    r"|officially|really|truly|totally|absolutely|usually|kinda|do|does|did|always)\b"
    r"|现在|已经|目前|刚刚|刚|也|还|其实|终于|更|最|很|真|非常|一直",
    re.IGNORECASE,
)
# A stop ("I don't drink coffee anymore", 我已经不喝咖啡了) ends what it names, as a
# cancellation does.
_STOP = re.compile(
    r"\bno longer\b|\bany ?more\b|\bstopped\b|\bquit\b|不再|已经不|戒了", re.IGNORECASE
)
# The cancelling words themselves (not the thing called off, which a pattern of
# CANCELLATION such as "not doing … after all" spans).
_CANCEL_WORDS = re.compile(
    r"\b(?:cancel(?:l?ed|l?ing|s)?|call(?:ed|ing)? off|scrapped|after all|off)\b"
    r"|取消|作罢|不(?=[办做搞]了)",
    re.IGNORECASE,
)
_CLAUSES = re.compile(r"[,;，；]\s*|\s+(?:because|since|so)\s+|因为|所以")
_CANCEL_CUE = dict(EVENT_CUES)["cancellation"]
_ZH_VERBS = re.compile(
    r"取消|改为|改成|改到|换成|换到|决定|不再|现在|其实|实际上|事实上|更喜欢|喜欢|偏好|定在|计划|打算"
    r"|推迟到|提前到|延期到|改期|更正|纠正|而是|改喝|改用|已经不?|不[喝吃抽用去做]了?|了$"
)


@dataclass(frozen=True)
class Statement:
    """What relation matching reads of a card or timeline entry."""

    id: str
    terms: frozenset[str]
    speaker: str
    frame: str | None
    holder: str
    compound: bool
    start: str | None
    end: str | None
    mentioned_at: str
    live: bool
    guessed: bool = False  # its day was inferred ("on 14 November": which year was guessed)


def statement(entry: Mapping[str, Any], names: Sequence[str], text: str | None = None) -> Statement:
    """A timeline entry (or a draft in entry form) as matching sees it; ``text``: the
    sentence itself, when known, instead of the entry's title and summary."""
    summary = str(entry.get("summary", ""))
    attribution = _ATTRIBUTION.match(summary)
    said = text if text is not None else f"{entry.get('title', '')} {summary[_end(attribution) :]}"
    own_words = text if text is not None else summary[_end(attribution) :] or said
    own_words = " ".join(_FILLER.sub(" ", own_words).split())  # 我现在在腾讯工作: after 现在
    frame, at = frame_of(own_words)
    return Statement(
        id=str(entry.get("id", "")),
        terms=subject_terms(said, (*_ROLE_WORDS, *names)),
        speaker=attribution["speaker"].strip() if attribution else "",
        frame=frame,
        holder=holder(own_words[:at]) if frame else "",
        compound=_SECOND_CLAUSE.search(own_words) is not None,
        start=entry.get("happened_start"),
        end=entry.get("happened_end"),
        mentioned_at=str(entry.get("mentioned_at", "")),
        live=entry.get("status", "active") == "active",
        guessed=entry.get("basis") == "inferred",
    )


def _end(match: re.Match[str] | None) -> int:
    return match.end() if match else 0


def frame_of(text: str) -> tuple[str | None, int]:
    """What a standing statement is about (home, work, a preference verb) and where its cue
    starts; (None, 0) for anything else."""
    for name, cue in STATE_FRAMES:
        if found := cue.search(text):
            return name, found.start()
    if PREFERENCE.search(text) and (found := PREFERENCE_FRAME.search(text)):
        return _frame_key(found.group(0)), found.start()
    return None, 0


def holder(subject: str) -> str:
    """Whose fact it is: the last word before the frame ("My friend Tom" → tom), the whole
    Chinese subject (我妈妈), and the speaker's own for "I", "we" or none."""
    clause = re.split(r"[,;:，；：]", DISCOURSE.sub("", subject.strip()))[-1]
    clause = _FILLER.sub(" ", clause).strip(" .!'\"")
    words = clause.lower().split()
    who = (words[-1] if words else "") if clause.isascii() else "".join(clause.split())
    who = who.replace("用户", "我")  # a title's "用户妈妈" is the user's "我妈妈"
    return "" if who in _SELF or who.rstrip("'s") in _SELF else who


def _frame_key(word: str) -> str:
    lower = word.lower()
    return {"rather": "prefer", "favourite": "favorite"}.get(lower, lower)


def relation_fields(
    card: Mapping[str, Any],
    text: str,
    event_type: str,
    candidates: Sequence[Mapping[str, Any]],
    names: Iterable[str],
) -> dict[str, list[str]]:
    """``supersedes_event_ids`` / ``related_event_ids`` of the card (in entry form) stating
    ``text``, among the candidate entries."""
    changes = REPLACEMENT.search(text) is not None
    moves = RESCHEDULE.search(text) is not None
    corrects = CORRECTION_HINT.search(text) is not None
    cancels = event_type == "cancellation" or CANCELLATION.search(text) is not None
    cancels = cancels and NEGATED_CANCEL.search(text) is None
    if not (changes or moves or corrects or cancels or event_type == "change"):
        return {}
    ignored = tuple(names)
    new = statement(card, ignored, cue_clause(text))
    changes = changes or (moves and _moved(new))
    others = [statement(entry, ignored) for entry in candidates]
    if (changes or corrects) and not cancels:
        target = superseded(new, others, loose=changes)
        if target is not None:
            return {"supersedes_event_ids": [target]}
    stops = cancels or _STOP.search(text) is not None
    if stops and (target := cancelled(new, others)) is not None:
        return {"supersedes_event_ids": [target]}
    if not (cancels or event_type == "change"):
        return {}
    related = _best(new, [o for o in others if same_subject(new, o) >= MIN_CONTAINMENT])
    return {"related_event_ids": [related]} if related else {}


def cue_clause(text: str) -> str:
    """The clause that says what changed: "满月酒改到11月15日了，饭店那天被人包场了" is about the
    banquet, not the restaurant; "Gareth now works at Toyota, he left Rolls-Royce" about
    where Gareth works. The whole sentence when it has one clause or no cue."""
    clauses = [c for c in _CLAUSES.split(text) if c.strip()]
    if len(clauses) < 2:
        return text
    cues = (REPLACEMENT, RESCHEDULE, CANCELLATION, _STOP, _CANCEL_CUE)
    starts = [m.start() for cue in cues if (m := cue.search(text)) is not None]
    if not starts:
        return text
    first, position = min(starts), 0
    for clause in clauses:
        position = text.find(clause, position)
        if position <= first < position + len(clause):
            return clause
        position += len(clause)
    return text


def _moved(new: Statement) -> bool:
    """A move to another time ("moved the launch to May") or home ("moved to Lisbon")."""
    return new.start is not None or new.frame in {name for name, _ in STATE_FRAMES}


def cancelled(new: Statement, others: Sequence[Statement]) -> str | None:
    """The live candidate a cancellation or stop calls off: the same subject, by a
    compatible speaker, not already over when the cancellation was said. A short stop
    ("I don't drink coffee anymore": the thing and its verb) names its subject by one term
    when exactly one such candidate holds it ("I love my two coffees every morning")."""
    open_ = [
        old
        for old in others
        if old.live
        and old.id != new.id
        and _compatible(new.speaker, old.speaker)
        and not _over(old, new.mentioned_at)
        and not _times_differ(new, old)
    ]
    matching = [old for old in open_ if same_subject(new, old) >= MIN_CONTAINMENT]
    if matching:
        return _best(new, matching)
    named = _naming(new.terms)
    if not 0 < len(named) <= MIN_SHARED:
        return None
    holding = [old for old in open_ if named & _naming(old.terms)]
    return holding[0].id if len(holding) == 1 else None


def _over(old: Statement, said_at: str) -> bool:
    """Its day has passed when the cancellation is said (a guessed year proves nothing)."""
    if old.guessed:
        return False
    end, said = _moment(old.end), _moment(said_at)
    return end is not None and said is not None and end < said


def superseded(new: Statement, others: Sequence[Statement], loose: bool) -> str | None:
    """The live candidate ``new`` replaces. ``loose``: an explicit change, which may also
    replace a preference without shared terms; else ("actually") only a matching event
    stated with another time."""
    matching: list[Statement] = []
    for old in others:
        if not old.live or old.id == new.id or not _compatible(new.speaker, old.speaker):
            continue
        if _other_state(new, old):
            continue
        if same_subject(new, old) >= MIN_CONTAINMENT and (loose or _times_differ(new, old)):
            matching.append(old)
    if matching:
        return _best(new, matching)
    if not loose or new.frame is None:
        return None
    same_fact = [
        old
        for old in others
        if old.live
        and old.id != new.id
        and old.frame == new.frame
        and old.speaker == new.speaker
        and old.holder == new.holder
        and not old.compound  # a move replaces where one lived, not the painting beside it
    ]
    return _latest(same_fact)


def _other_state(new: Statement, old: Statement) -> bool:
    """Both are standing facts of different kinds: a move is not a change of job."""
    states = {name for name, _ in STATE_FRAMES}
    return new.frame in states and old.frame in states and new.frame != old.frame


def same_subject(new: Statement, old: Statement) -> float:
    """Containment of subject terms: shared / the smaller set, 0 below the shared minimum.
    Generic event nouns count only when a side has nothing else."""
    new_terms, old_terms = _naming(new.terms), _naming(old.terms)
    shared = len(new_terms & old_terms)
    smaller = min(len(new_terms), len(old_terms))
    if shared == 0 or shared < min(MIN_SHARED, smaller):
        return 0.0
    return shared / smaller


def _naming(terms: frozenset[str]) -> frozenset[str]:
    return (terms - _EVENT_NOUNS) or terms


def _best(new: Statement, candidates: Sequence[Statement]) -> str | None:
    """Highest containment; among equals the latest mentioned (later in the list on ties)."""
    if not candidates:
        return None
    ranked = sorted(enumerate(candidates), key=lambda p: (same_subject(new, p[1]), *_when(p)))
    return ranked[-1][1].id


def _latest(candidates: Sequence[Statement]) -> str | None:
    if not candidates:
        return None
    return max(enumerate(candidates), key=_when)[1].id


def _when(pair: tuple[int, Statement]) -> tuple[str, int]:
    return pair[1].mentioned_at, pair[0]


def _compatible(first: str, second: str) -> bool:
    """Two different named speakers speak of different things ("my job" is not yours)."""
    return first == second or first in _UNNAMED or second in _UNNAMED or not (first and second)


def _times_differ(new: Statement, old: Statement) -> bool:
    """Both are dated and their intervals do not overlap."""
    times = [_moment(value) for value in (new.start, new.end, old.start, old.end)]
    if any(moment is None for moment in times):
        return False
    new_start, new_end, old_start, old_end = times
    assert new_start and new_end and old_start and old_end  # checked above
    return new_end < old_start or old_end < new_start


def _moment(value: Any) -> datetime | None:
    try:
        return datetime.fromisoformat(str(value)) if value else None
    except ValueError:
        return None


def subject_terms(text: str, names: Sequence[str]) -> frozenset[str]:
    """Stemmed content terms without times, change and preference verbs, roles and names."""
    for name in names:
        text = text.replace(name, " ")
    text = _ZH_VERBS.sub(" ", _CANCEL_WORDS.sub(" ", without_times(text)))
    return frozenset(stem(term) for term in content_terms(text)) - _VERB_STEMS
