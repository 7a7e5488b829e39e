"""Whether a word stands as a noun in the chapter's own sentences (syntactic frames).

A chapter is named by things (pottery, the shelter, 收容所), not by how it felt ("so
special", 太棒) or what someone did ("to help", 我喜欢). Each time the word occurs in an
event's title or summary, the word before it votes: a determiner, possessive, quantifier
or preposition (the, my, some, at; 的, 个, 在) for a noun; a degree adverb, copula,
auxiliary, subject pronoun or infinitive "to" (so, is, can, I, to; 很, 会, 我) against, as
does an aspect or complement particle after a Han word (记住了, 玩得).
Only closed classes of function words decide; a word seen in neither frame is not judged.
"""

import re
from collections.abc import Iterable

from ..llm.offline.text import word_set

_NOUN_BEFORE_EN = word_set(
    """a an the my your his her its our their this that these those some any many few several
    every each no of in at on for with about from into onto by near around new old first
    favorite favourite"""
)
_OTHER_BEFORE_EN = word_set(
    """so very really too quite pretty super such is was are were be been being am feel felt
    feels seem seems seemed i you we they he she it i'm you're we're they're it's that's to
    can could will would should must may might don't didn't doesn't won't can't just also
    always never not"""
)
_NOUN_BEFORE_ZH = frozenset(
    "的个些在到和与跟了这那每张本件位场家所座部首次种份段"
)  # measure words too
_OTHER_BEFORE_ZH = frozenset("很太真最更非会要想能我你他她都也就还又再得")
_DEGREE_ZH = frozenset("很太真最更非")
_AFTER_OTHER_ZH = frozenset("了着过得")  # aspect and complement particles follow a verb
_EN_WORD = re.compile(r"[a-z][a-z0-9'+#-]*")


def noun_votes(surface: str, texts: Iterable[str]) -> int:
    """Noun frames less other frames over every occurrence of ``surface`` in ``texts``."""
    if _is_han(surface):
        return _han_votes(surface, texts)
    word, votes = surface.lower(), 0
    for text in texts:
        words = _EN_WORD.findall(text.lower())
        for i, found in enumerate(words[1:], 1):
            if found == word:
                votes += _vote(words[i - 1], _NOUN_BEFORE_EN, _OTHER_BEFORE_EN)
    return votes


def _han_votes(surface: str, texts: Iterable[str]) -> int:
    if surface[0] in _DEGREE_ZH:  # 太棒, 很好: a degree adverb and what it grades
        return -1
    votes = 0
    for text in texts:
        start = text.find(surface, 1)
        while start > 0:
            votes += _vote(text[start - 1], _NOUN_BEFORE_ZH, _OTHER_BEFORE_ZH)
            after = text[start + len(surface) : start + len(surface) + 1]
            votes -= 1 if after and after in _AFTER_OTHER_ZH else 0
            start = text.find(surface, start + 1)
    return votes


def _vote(before: str, noun: frozenset[str], other: frozenset[str]) -> int:
    return 1 if before in noun else -1 if before in other else 0


def _is_han(text: str) -> bool:
    return all("\u4e00" <= char <= "\u9fff" for char in text)
