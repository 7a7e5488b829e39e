"""A MERGE never loses a detail: the merged text contains every local event it replaces.

A MERGE writes a new card and supersedes its targets, so whatever a target said and the
new text does not is no longer active. "Prefers window seats on flights" merged over "I
prefer window seats and vegetarian meals" would drop the vegetarian meals. So the merged
text is the proposed one (the model's merged candidate, else the imported summary) with
every target it does not contain added whole, and the imported summary too when a
proposal dropped it: nothing of either side is lost, in any language.

*Contains* means every content word (stemmed) and every content Han character of the
other text is in it, leaving out the speaker frame ("The user said:", 用户说：) and the
resolved-date notes extraction appends ("[to March = 2027-03]"). Pure functions.
"""

import re
from collections.abc import Sequence

from ..text.search_terms import content_tokens

_FRAME = re.compile(r"^\s*(the user said:|用户说[：:])\s*", re.IGNORECASE)
_DATE_NOTE = re.compile(r"\s*\[[^\]]*=[^\]]*\]")
_ENDS_SENTENCE = re.compile(r"[.!?。！？…]$")
_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


def details(text: str) -> frozenset[str]:
    """What a text says, as tokens: content words and Han characters (no pairs, which
    break where a rewording cuts a phrase), without its frame and date notes."""
    bare = _DATE_NOTE.sub("", _FRAME.sub("", text))
    return frozenset(t for t in content_tokens(bare) if not t.startswith("h2:"))


def contains(text: str, other: str) -> bool:
    """Every detail of ``other`` is in ``text``."""
    return details(other) <= details(text)


def merged_text(summary: str, targets: Sequence[str], proposed: str | None = None) -> str:
    """The text a MERGE writes: ``proposed`` (else ``summary``) with each target it does not
    contain put first (and the text left out when those say it all), and ``summary`` after
    it if the proposal dropped some of it."""
    text = (proposed or "").strip() or summary.strip()
    missing = [t.strip() for t in dict.fromkeys(targets) if t.strip() and not contains(text, t)]
    parts = [*missing, text]
    if missing and contains(" ".join(missing), text):
        parts = missing
    if not contains(" ".join(parts), summary):
        parts.append(summary.strip())
    return _joined(parts)


def loses(summary: str, targets: Sequence[str]) -> bool:
    """Would a MERGE writing ``summary`` drop something one of ``targets`` says?"""
    return any(not contains(summary, target) for target in targets)


def _joined(parts: Sequence[str]) -> str:
    """Sentences one after another: a Chinese one ends in 。 (and needs no space after),
    others in a full stop."""
    if len(parts) == 1:
        return parts[0]
    text = ""
    for part in parts:
        if text and text[-1] not in "。！？":
            text += " "
        text += part if _ENDS_SENTENCE.search(part) else part + _stop(part)
    return text


def _stop(part: str) -> str:
    return "。" if _HAN.search(part[-1]) else "."
