"""What a scenario expects of memory's state and of the agent's answer, each check a small
value with ``failure(events, said) -> reason | None``.

Events are found by the messages they cite (``said``: each user text → the ids of the
messages with that text), never by the wording the engine chose, so a check holds for any
model that phrases its cards differently. Content terms are the search tokenizer's stemmed
words and Han bigrams (``core/text/search_terms.py``), as the source-precision benchmark
counts them.
"""

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from stratagate_plugin.core.llm.offline.text import HAN_FUNCTION
from stratagate_plugin.core.text.search_terms import query_tokens

from .world import Event

Said = Mapping[str, list[str]]  # user text → ids of the messages that said it
CANT_CONFIRM = re.compile(r"can't confirm|cannot confirm|无法确认|不能确认|没法确认|无法从记忆")
CARD_WORDS = frozenset({"w:user"})  # "The user said: …" is the card's frame, not content
NOT_CONTENT = set(HAN_FUNCTION + "用户说")  # a bigram with one of these spans no content word


def content_terms(text: str) -> set[str]:
    """Stemmed content words (not bare numbers: dates are written many ways) and Han
    bigrams free of function characters ("我的", "和素" join no content words)."""
    return {token for token in query_tokens(text) if _is_content(token)} - CARD_WORDS


def _is_content(token: str) -> bool:
    kind, _, body = token.partition(":")
    if kind == "w":
        return len(body) > 1 and not body.isdigit()
    return kind == "h2" and not set(body) & NOT_CONTENT


def shares_content(message: str, card_text: str) -> bool:
    return bool(content_terms(message) & content_terms(card_text))


def citing(events: Sequence[Event], said: Said, text: str) -> list[Event]:
    ids = set(said.get(text, []))
    return [e for e in events if ids & {source_id for source_id, _, _ in e.sources}]


def short(text: str, limit: int = 48) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass(frozen=True)
class CitesOnly:
    """Every active card about ``about`` cites exactly the message(s) saying ``text``."""

    text: str
    about: tuple[str, ...]

    def failure(self, events: Sequence[Event], said: Said) -> str | None:
        cards = [e for e in events if e.status == "active" and e.says(*self.about)]
        if not cards:
            return f"no active event says {self.about}"
        wanted = set(said.get(self.text, []))
        for card in cards:
            cited = {source_id for source_id, _, _ in card.sources}
            if cited != wanted:
                others = [short(c) for i, _, c in card.sources if i not in wanted]
                return f"event {short(card.text)!r} cites {others or 'not'} {short(self.text)!r}"
        return None


@dataclass(frozen=True)
class Precise:
    """Every cited user message of every active card shares a content term with it, and no
    active card rests on assistant messages alone."""

    def failure(self, events: Sequence[Event], said: Said) -> str | None:
        for card in (e for e in events if e.status == "active"):
            for content in card.user_sources:
                if not shares_content(content, card.text):
                    return f"event {short(card.text)!r} cites unrelated {short(content)!r}"
        return NoAgentOnly().failure(events, said)


@dataclass(frozen=True)
class NoAgentOnly:
    """No active card whose sources are all the agent's messages."""

    def failure(self, events: Sequence[Event], said: Said) -> str | None:
        for card in (e for e in events if e.status == "active"):
            if card.sources and not card.user_sources:
                return f"event {short(card.text)!r} is sourced only by agent messages"
        return None


@dataclass(frozen=True)
class Reinforced:
    """The texts (one fact said again) are one active card citing all of them and no other
    user message, mentioned at least once per saying."""

    texts: tuple[str, ...]

    def failure(self, events: Sequence[Event], said: Said) -> str | None:
        ids = {i for text in self.texts for i in said.get(text, [])}
        cards = [e for e in events if e.status == "active" and ids & {s for s, _, _ in e.sources}]
        if len(cards) != 1:
            return f"{len(cards)} active events for one fact said {len(ids)} times"
        [card] = cards
        missing = ids - {s for s, _, _ in card.sources}
        if missing:
            return f"event {short(card.text)!r} lacks {len(missing)} of the sayings as sources"
        others = [c for i, role, c in card.sources if role == "user" and i not in ids]
        if others:
            return f"event {short(card.text)!r} also cites {short(others[0])!r}"
        if card.mention_count < len(ids):
            return f"mention count {card.mention_count} < {len(ids)}"
        return None


@dataclass(frozen=True)
class Replaced:
    """The card of ``old`` is history (superseded), the card of ``new`` is active."""

    old: str
    new: str

    def failure(self, events: Sequence[Event], said: Said) -> str | None:
        olds, news = citing(events, said, self.old), citing(events, said, self.new)
        if not olds:
            return f"no event cites {short(self.old)!r}"
        if not any(e.status == "active" for e in news):
            return f"no active event cites {short(self.new)!r}"
        still = [e for e in olds if e.status == "active" and e not in news]
        if still:
            return f"{short(still[0].text)!r} is still active beside the change"
        return None


@dataclass(frozen=True)
class Standing:
    """The cards of ``text`` are still active (an unrelated fact is not replaced)."""

    text: str

    def failure(self, events: Sequence[Event], said: Said) -> str | None:
        cards = citing(events, said, self.text)
        if not cards:
            return f"no event cites {short(self.text)!r}"
        gone = [e for e in cards if e.status != "active"]
        return f"{short(gone[0].text)!r} was superseded" if gone else None


@dataclass(frozen=True)
class Kept:
    """One active card still says every one of ``terms`` (a merge lost no detail)."""

    terms: tuple[str, ...]

    def failure(self, events: Sequence[Event], said: Said) -> str | None:
        if any(e.status == "active" and e.says(*self.terms) for e in events):
            return None
        return f"no active event still says all of {self.terms}"


@dataclass(frozen=True)
class ActiveCount:
    """Exactly ``count`` active cards say all of ``about``."""

    about: tuple[str, ...]
    count: int = 1

    def failure(self, events: Sequence[Event], said: Said) -> str | None:
        found = sum(e.status == "active" and e.says(*self.about) for e in events)
        return None if found == self.count else f"{found} active events say {self.about}"


def lost_detail(
    before: Sequence[Event], after: Sequence[Event], said: Said, text: str
) -> str | None:
    """A local event of ``text`` whose content terms no active event holds after an import."""
    locals_ = [e for e in citing(before, said, text) if e.status == "active"]
    if not locals_:
        return f"no active event of {short(text)!r} before the import"
    active = [content_terms(e.text) for e in after if e.status == "active"]
    for card in locals_:
        terms = content_terms(card.text)
        if not any(terms <= held for held in active):
            best = max(active, key=lambda held: len(terms & held), default=set())
            lost = sorted(term.split(":", 1)[1] for term in terms - best)
            return f"the import lost {lost} of {short(card.text)!r}"
    return None


Check = CitesOnly | Precise | NoAgentOnly | Reinforced | Replaced | Standing | Kept | ActiveCount


def states(text: str, term: str) -> bool:
    """``text`` holds ``term``, or one of its ``|``-separated wordings ("called off|cancel")."""
    lowered = text.lower()
    return any(wording.lower() in lowered for wording in term.split("|"))


@dataclass(frozen=True)
class Answer:
    """The answer to ``question`` asked in a new session: it states every ``has`` and its
    first line from memory states every ``first`` (the current value first), or, with
    ``abstain``, it says it can't confirm. A term may list wordings: "cancel|called off"."""

    question: str
    has: tuple[str, ...] = ()
    first: tuple[str, ...] = ()
    abstain: bool = False

    def failure(self, answer: str) -> str | None:
        abstained = bool(CANT_CONFIRM.search(answer))
        if self.abstain:
            return None if abstained else f"answered {short(answer, 80)!r} instead of abstaining"
        if abstained:
            return "said it can't confirm"
        missing = [term for term in self.has if not states(answer, term)]
        if missing:
            return f"answer {short(answer, 80)!r} lacks {missing}"
        lines = [line for line in answer.splitlines() if line.startswith("- ")]
        head = lines[0] if lines else answer
        if not all(states(head, term) for term in self.first):
            return f"first line {short(head, 80)!r} does not state {list(self.first)}"
        return None
