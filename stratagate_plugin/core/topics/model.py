"""What a topic is (spec §5.1): a chapter with sections and overview paragraphs citing events.

A chapter is a long-lived area (a project, a relationship, a life area); a section is a
lasting category inside it; an overview paragraph says what 1–12 of its events tell
together. Membership (``member_ids``, in the order events joined) is kept apart from the
overview's evidence. Visible events no chapter holds are shown as fallback entries.
"""

import hashlib
import re
import unicodedata
from typing import Literal

from pydantic import BaseModel, Field

from ..clock import UtcDatetime
from ..llm.tasks import TopicParagraph, TopicSection

PROJECTOR_VERSION = 2  # 2: chapters ≤ 40 events, named by what they hold (issue 26)
FALLBACK_PREFIX = "fallback:"
TopicStatus = Literal["ready", "pending"]
DEFAULT_SECTION_TITLES = {
    "en": {
        "history": "How it developed",
        "decision": "Key decisions",
        "change": "Important changes",
        "open-question": "Open questions",
        "scope": "Scope",
    },
    "zh": {
        "history": "发展脉络",
        "decision": "关键设计决策",
        "change": "重要变化",
        "open-question": "尚未解决的问题",
        "scope": "主题范围",
    },
}
PENDING_TITLE = "Topic pending update (待更新记忆主题)"
FALLBACK_DESCRIPTION = "Not in a topic yet; expand the event for details."
_SPACES = re.compile(r"\s+")


class Topic(BaseModel):
    """A stored chapter. ``keywords`` (participants and member tags) rank it as a candidate."""

    id: str
    namespace: str
    title: str
    description: str = ""
    category: str = "other"
    status: TopicStatus = "ready"
    member_ids: list[str] = Field(default_factory=list)
    sections: list[TopicSection] = Field(default_factory=list)
    overview: list[TopicParagraph] = Field(default_factory=list)
    keywords: list[str] = Field(default_factory=list)
    has_agent: bool = False
    created_at: UtcDatetime
    updated_at: UtcDatetime


def label_key(title: str) -> str:
    """A chapter label as compared for uniqueness: NFKC, whitespace collapsed, lower case."""
    return _SPACES.sub(" ", unicodedata.normalize("NFKC", title)).strip().lower()


def section_key(title: str) -> str:
    """``section:`` + SHA-256 of the normalised title (ties in section order)."""
    return "section:" + hashlib.sha256(label_key(title).encode("utf-8")).hexdigest()


def is_fallback(entry_id: str) -> bool:
    return entry_id.startswith(FALLBACK_PREFIX)


def fallback_id(event_id: str) -> str:
    return FALLBACK_PREFIX + event_id


def language_of(texts: list[str]) -> str:
    """``zh`` when Han characters outnumber Latin letters in ``texts``, else ``en``."""
    han = latin = 0
    for text in texts:
        for char in text:
            if "\u4e00" <= char <= "\u9fff":
                han += 1
            elif char.isascii() and char.isalpha():
                latin += 1
    return "zh" if han > latin else "en"
