"""Event titles and speaker attributions of the offline model (spec §3.3 "Titles").

A title states the fact, not who typed it: the concrete object first, then its one main
change ("Spring sale moved to 14 March", "订单已取消"); otherwise the first-person subject
becomes the speaker ("Caroline went to a support group"). Relative time words ("last week")
are dropped, since the temporal fields and the summary carry the resolved date.
"""

import re
from datetime import UTC, datetime

from ...text.temporal.resolve import find_time_expressions
from .lexicon import DISCOURSE
from .text import Sentence, clip, content_terms, word_set

_HAN = re.compile(r"[\u4e00-\u9fff]")
_CLAUSE_BREAK = re.compile(
    r" [-–—] |; |, and |, but |[,，]但|[;；]|，|——|,(?=[\u4e00-\u9fff])"
    r"|, (?=(?:I|we|We|it|which|so)\b)"
)
_FIRST_PERSON = {"my": "their", "me": "them", "myself": "themselves", "mine": "theirs"}
_FIRST_PERSON |= {"our": "their", "us": "them", "ourselves": "themselves", "i": "they"}
_FIRST_PERSON |= {"i've": "they've", "i'm": "they're", "i'd": "they'd", "i'll": "they'll"}
_PRONOUN = re.compile(r"(?<![\w'-])(?:" + "|".join(_FIRST_PERSON) + r")(?![\w'-])", re.IGNORECASE)
_REMINDER = re.compile(
    r"^(?:remind me|remember|note|fyi|记住|change of plans?|update|for the record|by the way"
    r"|just so you know|as I (?:said|mentioned)|like I said|计划有变|跟你说过的?|说一下)"
    r"\s*[:：,，]\s*|^(?:please )?(?:remember|note|make a note) that\s+",
    re.IGNORECASE,
)
_LATIN = re.compile(r"[A-Za-z]")
_EPOCH = datetime(2000, 1, 1, tzinfo=UTC)
_SUBJECT = re.compile(
    r"^(?P<subject>i|we)(?P<aux>'m|'re|'ve|'d|'ll|\s+am|\s+are|\s+have|\s+had|\s+will)?\s+"
    r"(?P<adverbs>(?:(?:just|finally|also|recently|actually|already|really|officially|now"
    r"|still|mostly|mainly|usually|never|always|often|rarely|sometimes)\s+)*)(?P<frame>(?:decided|agreed|chose|plan(?:ned)?|going|intend|hope"
    r"|want(?:ed)?|need(?:ed)?|would like)\s+to\s+)?",
    re.IGNORECASE,
)
_CHANGES = (
    ("mov(?:e|ed|ing)", "moved", False),
    ("chang(?:e|ed|ing)", "changed", False),
    ("switch(?:ed|ing)?", "switched", False),
    ("reschedul(?:e|ed|ing)", "rescheduled", False),
    ("postpon(?:e|ed|ing)", "postponed", False),
    ("push(?:ed|ing)?(?: back)?", "pushed back", False),
    ("delay(?:ed|ing)?", "delayed", False),
    ("replac(?:e|ed|ing)", "replaced", False),
    ("cancel(?:l?ed|l?ing)?", "cancelled", True),
    ("call(?:ed|ing)? off", "called off", True),
    ("scrap(?:ped|ping)?", "scrapped", True),
)
_CHANGE = re.compile(
    r"^(?P<verb>" + "|".join(pattern for pattern, _, _ in _CHANGES) + r")\s+(?P<object>.+)$",
    re.IGNORECASE,
)
_TARGET = re.compile(
    r"\s+(?=(?:to|until|till|into|from|with|by|in|out|back|on|at)\b)", re.IGNORECASE
)
# "this"/"that" before a verb is the subject ("This is Luna, my cat"), not a determiner
_DETERMINER = re.compile(
    r"^(?:the|a|an|my|our|your|(?:this|that)(?!\s+(?:is|was|are|were|'s|has|had|will|would)\b))"
    r"\s+",
    re.IGNORECASE,
)
_DANGLING = re.compile(r"(?:\s+(?:to|until|on|in|at|for|by|from|of|and|the))+$", re.IGNORECASE)
_FRAMES = {"decided": "decided", "agreed": "agreed", "chose": "chose", "hope": "hopes"}
_FRAMES |= {"want": "wants", "wanted": "wanted", "need": "needs", "needed": "needed"}
_AUX = {"'m": "is", "am": "is", "'re": "is", "are": "is", "'ve": "has", "have": "has"}
_AUX |= {"'d": "would", "'ll": "will", "will": "will", "had": "had"}
_UNCHANGED = word_set(
    """went got had took made ran bought met saw lost found left came spent did gave began
    wrote read built became felt kept thought told sold sent brought caught taught flew
    drove rode swam sang won knew heard held stood sat paid put set quit ate drank grew drew
    threw can could should would might must may used was were chose fell forgot hung lay led
    meant rose shot shut slept spoke stole struck swore wore woke"""
)
_ZH_SUBJECT = re.compile(r"^(?P<subject>我们|我)(?P<adverbs>(?:已经|刚刚|刚|终于|也|还|都|就)*)")
_ZH_OBJECT_FIRST = re.compile(
    r"^(?:决定|打算|准备)?把(?P<object>.+?)(?P<rest>(?:改|换|推迟|提前|取消|挪|移|定).*)$"
)
_ZH_CANCELLED = re.compile(r"^(?:决定|打算)?取消了?(?P<object>.+)$")


def is_chinese(text: str) -> bool:
    """More Han characters than Latin letters."""
    return len(_HAN.findall(text)) > len(_LATIN.findall(text))


def speaker_label(sentence: Sentence) -> str:
    """The named speaker ("Caroline: …"), else the user / the assistant (用户 / 助手)."""
    if sentence.speaker:
        return sentence.speaker
    if is_chinese(sentence.text):
        return "用户" if sentence.role == "user" else "助手"
    return "The user" if sentence.role == "user" else "The assistant"


def attributed(sentence: Sentence, note: str = "") -> str:
    """``Caroline said: I went …`` / ``用户说：…`` — the sentence with its speaker named."""
    if is_chinese(sentence.text):
        return f"{speaker_label(sentence)}说：{sentence.text}{note}"
    return f"{speaker_label(sentence)} said: {sentence.text}{note}"


def bare(text: str) -> str:
    """The sentence without leading greetings and discourse markers."""
    return DISCOURSE.sub("", text).lstrip(" ,!.-—")


def headline(sentence: Sentence) -> str:
    """A concise statement of the sentence's fact, ≤ 90 characters."""
    clause = _without_relative_times(main_clause(sentence.text))
    label = speaker_label(sentence)
    title = _zh_headline(clause, label) if is_chinese(clause) else _en_headline(clause, label)
    if len(content_terms(title)) < 2 and len(title) < 4:
        title = main_clause(sentence.text)
    return clip(title[:1].upper() + title[1:], 90)


def main_clause(text: str) -> str:
    """The first clause of the sentence with two content terms, greetings cut off."""
    stripped = bare(text)
    clause = _REMINDER.sub("", stripped if len(stripped.split()) > 2 or is_chinese(text) else text)
    pieces = [piece for piece in _CLAUSE_BREAK.split(clause) if piece]
    head = next((piece for piece in pieces if _is_statement(piece)), clause)
    return head.strip().rstrip(" .!。！")


def _is_statement(piece: str) -> bool:
    """Two content terms, and more than a vocative or interjection ("卡罗琳", "好啦")."""
    return len(content_terms(piece)) >= 2 and (not is_chinese(piece) or len(piece) >= 5)


def _without_relative_times(clause: str) -> str:
    """Cuts a relative expression ("last week", 上周五) at either end; explicit dates stay."""
    for found in reversed(find_time_expressions(clause, _EPOCH)):
        end = found.position + len(found.original_text)
        at_edge = not clause[: found.position].strip(" ,，的") or not clause[end:].strip(" .,")
        if found.basis == "relative" and at_edge:
            clause = clause[: found.position] + " " + clause[end:]
    clause = re.sub(r"\s+([,，.;])", r"\1", " ".join(clause.split())).strip(" ,，")
    return _DANGLING.sub("", clause.lstrip("的，, "))


def _en_headline(clause: str, label: str) -> str:
    subject = _SUBJECT.match(clause)
    if subject is not None:
        clause = clause[: subject.end()] + _third_person_pronouns(clause[subject.end() :])
    rest = clause[subject.end() :] if subject else clause
    change = _CHANGE.match(rest)
    if change and not _TARGET.match(" " + change["object"]):
        return _object_first(change["verb"], change["object"])
    if subject is None:
        return _DETERMINER.sub("", clause)
    if subject["frame"]:
        return f"{label} {_frame(subject['frame'])} to {subject['adverbs']}{rest}"
    if subject["aux"]:
        auxiliary = _AUX.get(subject["aux"].strip().lower(), subject["aux"].strip())
        return f"{label} {auxiliary} {subject['adverbs']}{rest}"
    return f"{label} {subject['adverbs']}{third_person(rest)}"


def _third_person_pronouns(text: str) -> str:
    """ "my journey" → "their journey" once the subject is a name or "the user"."""
    return _PRONOUN.sub(lambda found: _FIRST_PERSON[found.group(0).lower()], text)


def _object_first(verb: str, tail: str) -> str:
    """ "move the spring sale to 14 March" → "Spring sale moved to 14 March"."""
    participle, at_end = next(
        (p, end) for pattern, p, end in _CHANGES if re.fullmatch(pattern, verb, re.IGNORECASE)
    )
    parts = [tail] if at_end else _TARGET.split(tail, maxsplit=1)
    thing = _DETERMINER.sub("", parts[0])
    if at_end or len(parts) == 1:
        return f"{thing} {participle}"
    return f"{thing} {participle} {parts[1]}"


def _frame(frame: str) -> str:
    word = frame.split()[0].lower()
    return _FRAMES.get(word, "plans")


_CONTRACTED = {"don't": "doesn't", "haven't": "hasn't", "aren't": "isn't"}


def third_person(predicate: str) -> str:
    """ "love pottery" → "loves pottery"; past tenses and modals stay as they are."""
    first, _, rest = predicate.partition(" ")
    lower = first.lower().replace("’", "'")
    if lower in _CONTRACTED:
        return f"{_CONTRACTED[lower]} {rest}".strip()
    if not lower.isalpha() or lower in _UNCHANGED or lower.endswith("ed"):
        return predicate
    if lower in ("have", "do", "go"):
        verb = {"have": "has", "do": "does", "go": "goes"}[lower]
    elif re.search(r"(?:s|sh|ch|x|z|o)$", lower):
        verb = lower + "es"
    elif re.search(r"[^aeiou]y$", lower):
        verb = lower[:-1] + "ies"
    else:
        verb = lower + "s"
    return f"{verb} {rest}".strip()


def _zh_headline(clause: str, label: str) -> str:
    subject = _ZH_SUBJECT.match(clause)
    rest = clause[subject.end() :] if subject else clause
    reordered = _ZH_OBJECT_FIRST.match(rest)
    if reordered:
        return reordered["object"] + reordered["rest"]
    cancelled = _ZH_CANCELLED.match(rest)
    if cancelled:
        return f"{cancelled['object']}已取消"
    return f"{label}{subject['adverbs']}{rest}" if subject else clause
