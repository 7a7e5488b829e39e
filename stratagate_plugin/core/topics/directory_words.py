"""The injected directory's words in English and Chinese, and which of the two a space gets.

The directory is read by the model on every turn, beside the user's own words: a space
whose memory is in Chinese gets a Chinese directory (spec §5.5: ``[StrataGate 记忆目录]``,
full-width separators, the 偏好与要求 … category labels). The profile's preferred answer
language decides when it names English or Chinese; otherwise the directory's own titles
do (more Han characters than Latin letters: Chinese). Nothing else injected picks a
language yet, so this is the rule for now.
"""

import re
from dataclasses import dataclass

from .categories import CATEGORY_LABELS, CATEGORY_LABELS_ZH
from .model import FALLBACK_DESCRIPTION, PENDING_TITLE, language_of

_CHINESE = re.compile(r"[\u4e00-\u9fff]|\b(zh|chinese|mandarin|cantonese)\b", re.IGNORECASE)
_ENGLISH = re.compile(r"\b(en|english)\b", re.IGNORECASE)


@dataclass(frozen=True)
class DirectoryWords:
    """Every text of the directory in one language."""

    header: str
    notice: str
    paging: str
    totals: str  # {total} entries, {categories} categories
    category_line: str  # {id}, {label}, {count}
    firsts: str
    entry_sep: str  # between an entry's id and its title
    description_sep: str  # between its title and its description
    labels: dict[str, str]
    fallback_description: str
    pending_title: str


EN = DirectoryWords(
    header="[StrataGate memory directory]",
    notice="Navigation only, not evidence: memory_expand_topic(id) opens an entry, "
    "memory_search_events finds the events to cite.",
    paging="Page with memory_list_topics(category, offset).",
    totals="{total} entries in {categories} categories:",
    category_line="- {id} ({label}): {count}",
    firsts="First entry of each category:",
    entry_sep=": ",
    description_sep="; ",
    labels=CATEGORY_LABELS,
    fallback_description=FALLBACK_DESCRIPTION,
    pending_title=PENDING_TITLE,
)
ZH = DirectoryWords(
    header="[StrataGate 记忆目录]",
    notice="仅供导航，不是证据：memory_expand_topic(id) 打开条目，"
    "memory_search_events 查找可引用的事件。",
    paging="用 memory_list_topics(category, offset) 翻页。",
    totals="共 {total} 个条目，{categories} 个类别：",
    category_line="- {id}（{label}）：{count}",
    firsts="每个类别的第一个条目：",
    entry_sep="：",
    description_sep="；",
    labels=CATEGORY_LABELS_ZH,
    fallback_description="尚未归入主题，查看事件获得详情。",
    pending_title="待更新记忆主题",
)
WORDS = {"en": EN, "zh": ZH}


def directory_language(preferred_language: str, titles: list[str]) -> str:
    """``zh`` or ``en``: the profile's preferred language when it names one of them, else
    the language of the directory's own titles."""
    if _CHINESE.search(preferred_language):
        return "zh"
    if _ENGLISH.search(preferred_language):
        return "en"
    return language_of(titles)
