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

from pydantic import BaseModel, ConfigDict, Field

from ..clock import UtcDatetime
from ..errors import InvalidInput
from ..text.search_terms import fts_encode, tokenize

TOMBSTONE = "[purged]"
REDACTED = "[…]"
MIN_CHARACTERS = 3  # shorter words hit too much that is not them (and a Han pair is fine)
_HAN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")


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


class PlanItem(BaseModel):
    """One row the purge changes: its id, when it was written, a redacted excerpt."""

    model_config = ConfigDict(frozen=True)

    kind: str
    id: str
    namespace: str = ""
    at: UtcDatetime | None = None
    excerpt: str = ""
    outcome: str = ""  # events: "forgotten" or "edited"; blocks: "re-derived"


class TextPurgePlan(BaseModel):
    """What a purge of some words erases: rows by kind, other stored copies by column,
    and the files (backups, sessions) holding them. Nothing in it repeats the words."""

    model_config = ConfigDict(frozen=True)

    hashes: list[str]
    messages: list[PlanItem] = Field(default_factory=list)
    blocks: list[PlanItem] = Field(default_factory=list)
    events: list[PlanItem] = Field(default_factory=list)
    cells: dict[str, int] = Field(default_factory=dict)  # "table.column": rows holding them
    files: dict[str, int] = Field(default_factory=dict)  # backup or session path: hits

    @property
    def empty(self) -> bool:
        return not (self.messages or self.blocks or self.events or self.cells or self.files)

    def forgotten_events(self) -> list[str]:
        return [item.id for item in self.events if item.outcome == "forgotten"]

    def namespaces(self) -> list[str]:
        found = [item.namespace for item in (*self.messages, *self.events) if item.namespace]
        return list(dict.fromkeys(found))
