"""What a question asks about, and whether a piece of evidence covers it.

A question shares words with many memories that do not answer it: "What is my dog
called?" shares "call" with "Please call me Sam". So the offline agent answers only from
evidence containing the question's *key terms*: its words without question and function
words, generic verbs (be, have, do, call, name, remember, tell …), words about the asker
or the agent (my, me, you) and relative time words. English words are compared stemmed;
a Chinese run between such pieces is one term, covered when the evidence holds at least
half of its character pairs (there is no dictionary to cut it into words).

A term may be missing only when the question has several (three or more), only one, and
never a *head* term: the thing after a possessive or article ("my dog", "the Lisbon trip",
"her brother", 我的狗) or a name. So "What did Maria give her brother for his birthday?"
is answered by "Maria got her brother a bike for his birthday", and "When is my dentist
appointment?" by nothing that lacks "dentist".
"""

import re
import unicodedata
from dataclasses import dataclass

from ..core.text.search_terms import content_tokens, tokenize

MIN_TERMS_FOR_A_GAP = 3
_HAN = r"\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_PIECE = re.compile(rf"(?P<han>[{_HAN}]+)|(?P<word>[^\W_]+)|(?P<mark>'s\b|’s\b)")
_GENERIC_EN = """be am is are was were been being have has had do does did done doing get got
gotten go went gone make made call called calls calling name names named remember remembers
remembered recall recalls know knows knew tell told say said think thought happen happened
happens mention mentioned ask asked please still again ever currently now anymore exactly
actually really anything something thing things stuff last next this ago today yesterday
tomorrow recently lately soon plan s t d ll re ve m you your yours i me my mine myself we us
our ours ourselves would could should"""
_AUXILIARY_TEXT = "do does did will would can could should shall may might must"
_DETERMINER_TEXT = "my your his her our their the a an this that these those"
_AUXILIARIES = frozenset(_AUXILIARY_TEXT.split())
_DETERMINERS = frozenset(_DETERMINER_TEXT.split())
_GENERIC = frozenset(_GENERIC_EN.split())
_GENERIC_TOKENS = frozenset(tokenize(_GENERIC_EN))
_HAN_STOP_TEXT = """什么时候 为什么 怎么样 是不是 有没有 哪里 哪儿 哪个 哪些 哪天 什么 多少
    怎么 如何 何时 时候
    是否 还是 请问 记得 知道 告诉 说过 提到 名字 现在 还在 仍然 以前 之前 一下 我们 咱们 你们
    定在 安排 计划 可以 应该 去年 今年 明年 最近 吗 呢 吧 啊 么 哪 谁 几 我 你 的 了 是 在 有 和
    与 也 就 都 很 还 又 叫 去 做 说 个"""
_HAN_STOPS = sorted(_HAN_STOP_TEXT.split(), key=len, reverse=True)
_HAN_STOP = re.compile("|".join(map(re.escape, _HAN_STOPS)))


@dataclass(frozen=True)
class KeyTerm:
    """One thing the question names: its words (for reading), tokens, and whether it is
    the head (what the question is about)."""

    words: tuple[str, ...]
    tokens: frozenset[str]
    head: bool = False

    def covered_by(self, have: set[str]) -> bool:
        needed = max(1, (len(self.tokens) + 1) // 2)
        return len(self.tokens & have) >= needed


def key_terms(question: str) -> list[KeyTerm]:
    """The question's key terms in order (empty when it names nothing)."""
    text = unicodedata.normalize("NFKC", question)
    content = set(content_tokens(text))
    terms: list[KeyTerm] = []
    run: list[KeyTerm] = []  # the words after a determiner: the thing asked about
    in_run = auxiliary = False
    for match in _PIECE.finditer(text):
        word = (match.group("word") or "").lower()
        if match.group("han"):
            terms += _phrase(run, auxiliary) + _han_terms(match.group("han"))
            in_run = False
        elif match.group("mark") or word in _DETERMINERS:
            terms += _phrase(run, auxiliary)
            in_run = True
        elif _generic(word) or not (tokens := frozenset(tokenize(word)) & content):
            terms += _phrase(run, auxiliary)
            in_run = False
            auxiliary = auxiliary or word in _AUXILIARIES
        else:
            name = match.group("word")[:1].isupper() and match.start() > 0
            term = KeyTerm((word,), tokens, head=in_run or name)
            if in_run:
                run.append(term)
            else:
                terms.append(term)
    terms += _phrase(run, auxiliary)
    return list({term.tokens: term for term in terms}.values())


def _generic(word: str) -> bool:
    """A question frame word in any form ("happening", "remembered", "names")."""
    return word in _GENERIC or set(tokenize(word)) <= _GENERIC_TOKENS


def _phrase(run: list[KeyTerm], auxiliary: bool) -> list[KeyTerm]:
    """A finished run of words after a determiner. After an auxiliary ("when does the
    spring sale start?") the last of two or more is the question's verb, not its head."""
    words = list(run)
    run.clear()
    if auxiliary and len(words) >= 2:
        last = words[-1]
        words[-1] = KeyTerm(last.words, last.tokens, head=False)
    return words


def _han_terms(han: str) -> list[KeyTerm]:
    """Chinese runs between stop pieces; the run right after 的 is a head."""
    terms = []
    pieces = _HAN_STOP.split(han)
    stops = _HAN_STOP.findall(han)
    for i, piece in enumerate(pieces):
        if not piece:
            continue
        tokens = frozenset(t for t in tokenize(piece) if t.startswith("h2:")) or frozenset(
            tokenize(piece)
        )
        head = i > 0 and stops[i - 1] == "的"
        terms.append(KeyTerm((piece,), tokens, head=head))
    return terms


def covers(terms: list[KeyTerm], evidence: str) -> bool:
    """Every key term in the evidence, or all but one of several when every head is."""
    if not terms:
        return False
    have = set(tokenize(evidence))
    missing = [term for term in terms if not term.covered_by(have)]
    if not missing:
        return True
    return (
        len(terms) >= MIN_TERMS_FOR_A_GAP
        and len(missing) == 1
        and not missing[0].head
        and any(term.head for term in terms)
    )


def coverage(terms: list[KeyTerm], evidence: str) -> float:
    """The share of key terms the evidence covers (to rank what passes ``covers``)."""
    have = set(tokenize(evidence))
    return sum(term.covered_by(have) for term in terms) / max(1, len(terms))
