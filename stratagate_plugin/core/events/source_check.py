"""Source validation after extraction: a card cites the messages that state it, and a person
stated it. The same check runs on the offline model's cards and on a remote model's.

- A cited message that shares no content term with the card (title, summary, quotes) does
  not state it and is dropped. Terms are search terms without function words: stemmed
  words, and Han character pairs for Chinese; single Han characters (function characters
  aside) count only two at a time (猫 alone is too common; 搬 and 沪 together say more).
  A ``Name:`` label does not count: who spoke is not what was said.
- A message composed from memory (an answer built on adopted evidence) only repeats what
  was said before; it is never a source.
- The card must keep a source a person stated: a user message, or any message labelled with
  a named speaker (``Caroline: …``, as LoCoMo's second speaker is recorded). An unnamed
  assistant alone is a source only for what the agent itself committed to or did
  (``AGENT_COMMITMENTS``); anything else it says about the user is rejected.
"""

import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..llm.offline.text import split_speaker
from ..llm.tasks import EventCardDraft
from ..text.search_terms import query_tokens

AGENT_COMMITMENTS = frozenset({"decision", "plan", "task_completed", "release", "migration"})
log = logging.getLogger(__name__)


@dataclass
class SourceDrops:
    """What validation dropped, counted over one pass (shown in the job note and report)."""

    unrelated: int = 0  # cited messages sharing no content term with their card
    echoes: int = 0  # cited answers composed from memory
    cards: int = 0  # cards left without a person-stated source

    def add(self, other: "SourceDrops") -> None:
        self.unrelated += other.unrelated
        self.echoes += other.echoes
        self.cards += other.cards

    def __bool__(self) -> bool:
        return bool(self.unrelated or self.echoes or self.cards)

    def note(self) -> str:
        """``validation dropped 2 unrelated sources, 1 echo; rejected 1 card``, or ""."""
        if not self:
            return ""
        parts = [f"{self.unrelated} unrelated source{'s' * (self.unrelated != 1)}"]
        parts += [f"{self.echoes} echo{'es' * (self.echoes != 1)}"] if self.echoes else []
        rejected = f"; rejected {self.cards} card{'s' * (self.cards != 1)}" if self.cards else ""
        return f"validation dropped {', '.join(parts)}{rejected}"


HAN_CHAR = "h1:"


def content_terms(text: str) -> set[str]:
    """Search terms of ``text`` that carry content (no function words or characters)."""
    return set(query_tokens(text))


def shares_content(card: set[str], message: set[str]) -> bool:
    """A shared word or Han pair, or two shared Han characters."""
    shared = card & message
    chars = sum(1 for term in shared if term.startswith(HAN_CHAR))
    return len(shared) > chars or chars >= 2


def card_terms(draft: EventCardDraft) -> set[str]:
    return content_terms(" ".join([draft.title, draft.summary, *draft.quotes]))


def check_sources(
    drafts: Iterable[EventCardDraft], messages: Iterable[Mapping[str, Any]]
) -> tuple[list[EventCardDraft], SourceDrops]:
    """The cards with only the sources that state them; cards left without a person's
    statement are rejected. ``messages``: the block's (id, role, content,
    ``composed_from_memory``) as the extraction payload carries them."""
    by_id = {str(m.get("id")): m for m in messages}
    kept, drops = [], SourceDrops()
    for draft in drafts:
        checked = _checked(draft, by_id, drops)
        if checked is None:
            drops.cards += 1
            log.info("source check rejected card %r: no person-stated source", draft.title)
            continue
        kept.append(checked)
    return kept, drops


def _checked(
    draft: EventCardDraft, by_id: Mapping[str, Mapping[str, Any]], drops: SourceDrops
) -> EventCardDraft | None:
    wanted = card_terms(draft)
    sources = []
    for message_id in draft.source_message_ids:
        message = by_id.get(message_id)
        if message is None:
            continue
        if message.get("composed_from_memory"):
            drops.echoes += 1
            continue
        speaker, body = split_speaker(str(message.get("content") or ""))
        if not shares_content(wanted, content_terms(body)):
            drops.unrelated += 1
            continue
        sources.append((message_id, _stated_by_person(message, speaker)))
    event_type = str((draft.temporal or {}).get("event_type") or "")
    if not any(person for _, person in sources) and event_type not in AGENT_COMMITMENTS:
        return None
    if not sources:
        return None
    return draft.model_copy(update={"source_message_ids": [mid for mid, _ in sources]})


def _stated_by_person(message: Mapping[str, Any], speaker: str | None) -> bool:
    """The user, or a message labelled with a named speaker, whatever its role."""
    return message.get("role") == "user" or speaker is not None
