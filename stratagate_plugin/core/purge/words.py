"""The words a purge erases, and its plan: matching, tombstoning, hashing (pure).

A purge is given words (a literal text, an event's quotes and title, a message's content)
and erases them wherever they are stored, case-insensitively and whatever the whitespace
between them, also where a JSON encoder escaped them, and as the search index encodes a
word that is one token. What the purge keeps of the words is
their hash (``purge_hash``): enough for ``stratagate purge --check`` to name the receipt,
never enough to show them again.
"""

import hashlib
import json
import re
import unicodedata
from collections.abc import Iterable
from typing import Any

from ..errors import InvalidInput
from ..text.search_terms import fts_encode, tokenize
from .storage import TOMBSTONE, PlanItem, TextPurgePlan

__all__ = ["TOMBSTONE", "Needles", "PlanItem", "TextPurgePlan", "purge_hash"]
REDACTED = "[…]"
MIN_CHARACTERS = 3  # shorter words hit too much that is not them (and a Han pair is fine)
_HAN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_JSON = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), sort_keys=True)  # as stored


def normalized(text: str) -> str:
    """NFKC, case-folded, whitespace collapsed: what ``purge_hash`` hashes."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def purge_hash(text: str) -> str:
    return "sha256:" + hashlib.sha256(normalized(text).encode("utf-8")).hexdigest()


class Needles:
    """The words to erase, as one case-insensitive pattern over their stored forms."""

    def __init__(self, words: Iterable[str]) -> None:
        kept = [" ".join(word.split()) for word in words]
        self.words = tuple(dict.fromkeys(word for word in kept if word))
        if not self.words:
            raise InvalidInput("nothing to purge: give the words to erase")
        for word in self.words:
            if len(word) < MIN_CHARACTERS and len(_HAN.findall(word)) < 2:
                raise InvalidInput(
                    f"{word!r} is too short to purge safely: give at least "
                    f"{MIN_CHARACTERS} characters"
                )
        self.index_terms = index_terms(self.words)
        forms = sorted({f for word in self.words for f in stored_forms(word)}, key=len)
        self.pattern = re.compile(
            "|".join(_spaced(form) for form in reversed(forms)), re.IGNORECASE
        )
        self.byte_pattern = re.compile(
            b"|".join(
                [_spaced_bytes(form.encode("utf-8")) for form in reversed(forms)]
                + [re.escape(term.encode()) for term in self.index_terms]
            ),
            re.IGNORECASE,
        )

    def with_words(self, more: Iterable[str]) -> "Needles":
        """These needles and ``more`` (too short ones among ``more`` left out)."""
        extra = [w for w in more if len(w.strip()) >= MIN_CHARACTERS]
        return Needles([*self.words, *extra])

    def hashes(self) -> list[str]:
        return [purge_hash(word) for word in self.words]

    def holds(self, text: object) -> bool:
        return isinstance(text, str) and self.pattern.search(text) is not None

    def scrub(self, text: str) -> str:
        return self.pattern.sub(TOMBSTONE, text)

    def scrub_value(self, value: Any) -> Any:
        """A JSON value with the words tombstoned in every string (keys too)."""
        if isinstance(value, str):
            return self.scrub(value)
        if isinstance(value, list):
            return [self.scrub_value(item) for item in value]
        if isinstance(value, dict):
            return {self.scrub(str(k)): self.scrub_value(v) for k, v in value.items()}
        return value

    def scrub_cell(self, value: Any) -> Any:
        """A cell's text with the words tombstoned; a JSON cell keeps being valid JSON."""
        if not isinstance(value, str):
            return value
        if value[:1] in ("[", "{"):
            try:
                parsed = json.loads(value)
            except ValueError:
                return self.scrub(value)
            scrubbed = _JSON.encode(self.scrub_value(parsed))
            return scrubbed if not self.holds(scrubbed) else self.scrub(scrubbed)
        return self.scrub(value)

    def scrub_key(self, value: Any) -> Any:
        """A unique key's value as a tombstone made unique, so no constraint stops a purge."""
        if not isinstance(value, str):
            return value
        return f"{TOMBSTONE}:{hashlib.sha256(value.encode()).hexdigest()[:10]}"

    def forgets(self, quotes: list[str], stated: list[str]) -> bool:
        """An event is forgotten when every quote holds the words (a card without quotes:
        when its statement does); else it is edited."""
        return all(map(self.holds, quotes)) if quotes else any(map(self.holds, stated))

    def byte_hits(self, data: bytes) -> int:
        """Occurrences in raw bytes (a database page, a backup, a session file)."""
        return sum(1 for _ in self.byte_pattern.finditer(data))

    def excerpt(self, text: str, width: int = 90) -> str:
        """The text around the first hit, every hit shown as ``[…]``: a plan shows where
        the words are without showing them."""
        hit = self.pattern.search(text)
        start = max(0, hit.start() - width // 2) if hit else 0
        piece = self.pattern.sub(REDACTED, text[start : start + width + 60])
        piece = " ".join(piece.split())
        cut = piece[:width]
        return ("…" if start else "") + cut + ("…" if len(piece) > width else "")


def index_terms(words: Iterable[str]) -> list[str]:
    """The search index's term of each word that is one token (a password, a number): the
    index keeps terms hex-encoded (``fts_encode``), so a byte scan looks for that form too.
    A word of several tokens has no term of its own: each token may be anyone's word."""
    terms = []
    for word in words:
        tokens = tokenize(word)
        if len(tokens) == 1:
            terms.append(fts_encode(tokens[0]))
    return terms


def stored_forms(word: str) -> list[str]:
    """The word as typed, and as a JSON encoder (ASCII-only or not) writes it in a string."""
    return list(
        dict.fromkeys([word, json.dumps(word, ensure_ascii=False)[1:-1], json.dumps(word)[1:-1]])
    )


def _spaced(form: str) -> str:
    return r"\s+".join(re.escape(part) for part in form.split())


def _spaced_bytes(form: bytes) -> bytes:
    return rb"\s+".join(re.escape(part) for part in form.split())
