"""A repeat reinforces (issue 23): when is a new card a restatement of a live event?

The test is ``memory_remember``'s duplicate gate (``remember.rules``): token containment
of at least 0.85 with two shared tokens, in both languages (Han pairs and characters). A
restatement must add nothing, so the new card's own tokens are the measure: "I'm allergic
to peanuts" restates "I'm allergic to peanuts and shellfish", never the other way round,
and a card that merely shares a topic, or says another number, is new. The same speaker
must say it ("Caroline said X" is not "Melanie said X"), with the same polarity, the same
temporal status and a time that does not contradict the old one ("on March 3rd" is not
"on March 10th").
"""

import re
from collections.abc import Iterable
from datetime import datetime
from functools import lru_cache
from typing import Any

from ..remember.rules import NEAR_DUPLICATE, event_tokens, token_containment
from ..text.search_terms import normalize, query_tokens, tokenize
from .cards import EventCard

_ATTRIBUTION = re.compile(r"^(?P<speaker>[^:：]{1,40}?)(?:\s+said|说)\s*[:：]\s*")
_ROLES = frozenset({"the user", "the assistant", "用户", "助手"})
_NEGATION = re.compile(r"\b(?:not|never|no|cannot)\b|n['’]t\b|[不没]")
# Words that frame a restatement without adding to it: "as I said", "don't forget", 别忘了.
_DISCOURSE = re.compile(
    r"\b(?:as|like) I (?:said|mentioned|told you)(?: before)?\b|\b(?:don['’]t|do not) forget"
    r"(?: that)?\b|\bjust a reminder(?: that)?\b|\bremember(?: that)?\b|\bagain\b|\bstill\b"
    r"|\bfor the record\b|\bby the way\b|\bjust so you know\b|\bas I mentioned\b"
    r"|\b(?:always|usually|normally|generally)\b"
    r"|别忘了|我说过|说过了|跟你说过的?|上次说过|再说一遍|提醒一下|还是|再次",
    re.IGNORECASE,
)
# A recurring fact ("every weekday", 每天) is dated by when it was said, not by its time.
_HABITUAL = re.compile(
    r"\b(?:every|each|always|usually|normally|often|daily|weekly|monthly|weekdays|weekends"
    r"|mornings|afternoons|evenings|nights|mondays|tuesdays|wednesdays|thursdays|fridays"
    r"|saturdays|sundays)\b"
    r"|每|经常|通常|总是|平时|一般",
    re.IGNORECASE,
)
_DATE_NOTE = re.compile(r"\[[^\[\]]*=[^\[\]]*\]")
_HAN_FUNCTION = frozenset("的了是我你他她它们都也就还在和与着过吗呢吧啊么这那个有")
MIN_HAN_SHARED = 4
MIN_REWORDED = 3
REWORDED = 0.6
# One frame, many words: "I'd rather have" is "I prefer", "we're planning to" is "we plan to".
_FRAME_WORDS = (
    (
        re.compile(
            r"\b(?:would|'d|’d) rather(?: have)?\b|\brather\b|\bprefer(?:s|red)?\b"
            r"|\b(?:like|likes|love|loves|enjoy|enjoys)\b",
            re.IGNORECASE,
        ),
        " prefer ",
    ),
    (
        re.compile(
            r"\b(?:the )?plan(?:s|ned|ning)?(?: is)?(?: to)?\b|\bgoing to\b"
            r"|\bintend(?:s|ed|ing)? to\b",
            re.IGNORECASE,
        ),
        " plan ",
    ),
    (re.compile(r"喜欢|偏好|爱"), "喜欢"),
    (re.compile(r"计划|打算|准备"), "计划"),
)
_HAN_NUMERALS = frozenset("零一二两三四五六七八九十百千万半")
_HAN_HOW_OFTEN = re.compile(r"一般|通常|总是|经常|平时|往往")


def restatement_of(card: EventCard, live: Iterable[EventCard]) -> EventCard | None:
    """The active event ``card`` restates (the most contained, then the oldest), or None."""
    found = [(coverage(card, old), old) for old in live if restates(card, old)]
    if not found:
        return None
    return max(found, key=lambda pair: (pair[0], -pair[1].created_at.timestamp()))[1]


def restates(new: EventCard, old: EventCard) -> bool:
    if old.status != "active" or old.id == new.id or old.namespace != new.namespace:
        return False
    if speaker(new.summary) != speaker(old.summary) or not _same_people(new, old):
        return False
    if _negated(new) != _negated(old):
        return False
    habit = _habitual(new) and _habitual(old)  # dated by when it was said, not by its time
    if not habit and not _same_status(new.temporal, old.temporal):
        return False
    if not habit and _times_differ(new.temporal, old.temporal):
        return False
    if _digits(new) - _digits(old) or (_han_chars(new) - _han_chars(old)) & _HAN_NUMERALS:
        return False  # another number is another fact: "2 kids" is not "3 kids", 一杯 not 两杯
    if _han_restates(new, old):
        return True
    new_tokens, old_tokens = _tokens(new), _tokens(old)
    if token_containment(new_tokens, old_tokens) < NEAR_DUPLICATE:
        return False
    if coverage(new, old, content=True) < NEAR_DUPLICATE:
        return False
    # Said in other words: every content word held, several of them, most words overall.
    shared = len(_tokens(new, True) & _tokens(old, True))
    reworded = shared >= MIN_REWORDED and coverage(new, old) >= REWORDED
    return coverage(new, old) >= NEAR_DUPLICATE or reworded


def _han_restates(new: EventCard, old: EventCard) -> bool:
    """Chinese said again in another order ("刘婷是我的主管，她要求…" / "我的主管刘婷要求…"):
    the new card's content characters all but held by the old one. Character pairs break
    when words move; characters do not."""
    new_chars, old_chars = _han_chars(new), _han_chars(old)
    shared = len(new_chars & old_chars)
    if shared < MIN_HAN_SHARED:
        return False
    return shared / len(new_chars) >= NEAR_DUPLICATE and shared / len(old_chars) >= 0.5


def _han_chars(card: EventCard) -> frozenset[str]:
    return _han_char_set(card.title, card.summary)


@lru_cache(maxsize=4096)
def _han_char_set(title: str, summary: str) -> frozenset[str]:
    """Content characters (the tokenizer's ``h1:``); how often ("一般", 通常) is no content
    of a habit said again."""
    said = _HAN_HOW_OFTEN.sub(" ", _said_text(title, summary))
    chars = (t[3:] for t in tokenize(said) if t.startswith("h1:"))
    return frozenset(c for c in chars if c not in _HAN_FUNCTION)


def _digits(card: EventCard) -> frozenset[str]:
    return frozenset(t for t in _tokens(card) if t[2:].isdigit())


def _habitual(card: EventCard) -> bool:
    return _HABITUAL.search(f"{card.title} {card.summary}") is not None


def coverage(new: EventCard, old: EventCard, content: bool = False) -> float:
    """The share of the new card's tokens the old card holds (1.0: it adds nothing);
    ``content``: function words left out, so "I'll keep …" shares no free words."""
    new_tokens, old_tokens = _tokens(new, content), _tokens(old, content)
    if not new_tokens:
        return 0.0
    return len(new_tokens & old_tokens) / len(new_tokens)


def _tokens(card: EventCard, content: bool = False) -> frozenset[str]:
    return _token_sets(card.title, card.summary)[content]


@lru_cache(maxsize=4096)
def _token_sets(title: str, summary: str) -> tuple[frozenset[str], frozenset[str]]:
    """All tokens, and content tokens, of the title and summary, the "X said:" attribution
    left out (the speakers are compared apart, and they would be two free shared tokens)."""
    said = _said_text(title, summary)
    return event_tokens("", said), frozenset(query_tokens(said))


def _said_text(title: str, summary: str) -> str:
    """The title and what was said, without the attribution, framing words ("as I said")
    or the date notes of the day it was said ("[7:40 = 2026-10-08 07:40]")."""
    said = _DISCOURSE.sub(" ", without_attribution(summary))
    text = f"{_DISCOURSE.sub(' ', title)} {_DATE_NOTE.sub(' ', said)}"
    for words, frame in _FRAME_WORDS:
        text = words.sub(frame, text)
    return text


def without_attribution(summary: str) -> str:
    """The summary without its "X said:" / "X说：" prefix (the speaker is read apart)."""
    return _ATTRIBUTION.sub("", summary.strip(), count=1)


def speaker(summary: str) -> str:
    """Who said it, from "Name said: …" / "Name说：…"; the user and the assistant as ""."""
    found = _ATTRIBUTION.match(summary.strip())
    name = normalize(found["speaker"]) if found else ""
    return "" if name in _ROLES else name


def _same_people(new: EventCard, old: EventCard) -> bool:
    """Named participants, when both cards name some, must overlap."""
    first, second = _people(new.temporal), _people(old.temporal)
    return not (first and second) or bool(first & second)


def _people(temporal: dict[str, Any]) -> set[str]:
    value = temporal.get("participants")
    return {normalize(p) for p in value if isinstance(p, str)} if isinstance(value, list) else set()


def _negated(card: EventCard) -> bool:
    said = _DISCOURSE.sub(" ", f"{card.title} {card.summary}")
    return _NEGATION.search(normalize(said)) is not None


def _same_status(new: dict[str, Any], old: dict[str, Any]) -> bool:
    first, second = new.get("status"), old.get("status")
    return not (first and second) or first == second


def _times_differ(new: dict[str, Any], old: dict[str, Any]) -> bool:
    """Both dated, and the intervals do not meet."""
    times = [_moment(t.get(key)) for t in (new, old) for key in ("happened_start", "happened_end")]
    new_start, new_end, old_start, old_end = times
    if new_start is None or old_start is None:
        return False
    return (new_end or new_start) < old_start or (old_end or old_start) < new_start


def _moment(value: Any) -> datetime | None:
    try:
        return datetime.fromisoformat(str(value)) if value else None
    except ValueError:
        return None
