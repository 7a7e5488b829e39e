"""What a question asks about, and whether a piece of evidence covers it.

A question shares words with many memories that do not answer it: "What is my dog
called?" shares "call" with "Please call me Sam". So the offline agent answers only from
evidence containing the question's *key terms*: its words without question and function
words, generic verbs (be, have, do, call, name, remember, tell …), words about the asker
or the agent (my, me, you) and relative time words. English words are compared stemmed;
a Chinese run between such pieces is one term, covered when the evidence holds at least
half of its character pairs (there is no dictionary to cut it into words).

A *head* term, what the question is about, is never missing: the thing after a
possessive, article or preposition ("my dog", "the Lisbon trip", "her brother", "at
home", 我的狗), a name, or a Chinese question's first run. The word right after "what",
"which" or "how" (什么, 哪个 …) names the answer's kind and may be missing when a head is
there ("What colour is my car?" is answered by "My car is red"); a question asking how
many, how old, 几 or 多少 needs a number in the evidence. Of the other terms (mostly the
question's verb) one may be missing when every head is there ("Where does Clara live?"
is answered by "Clara moved to Lisbon"), or when the question names three or more. So
"What did Maria give her brother for his birthday?" is answered by "Maria got her brother
a bike for his birthday", and "When is my dentist appointment?" by nothing that lacks
"dentist".
"""

import re
import unicodedata
from dataclasses import dataclass

from ..core.text.search_terms import content_tokens, tokenize

MIN_TERMS_FOR_A_GAP = 3
SPLIT_WORD_CHARS = 2
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
_PREPOSITION_TEXT = "at in on for to from with about of by near into onto after before"
_PREPOSITIONS = frozenset(_PREPOSITION_TEXT.split())
_GENERIC = frozenset(_GENERIC_EN.split())
_GENERIC_TOKENS = frozenset(tokenize(_GENERIC_EN))
_HAN_STOP_TEXT = """什么时候 为什么 怎么样 是不是 有没有 哪里 哪儿 哪个 哪些 哪天 什么 多少
    怎么 如何 何时 时候
    是否 还是 请问 记得 知道 告诉 说过 提到 名字 现在 还在 仍然 以前 之前 一下 我们 咱们 你们
    定在 安排 计划 可以 应该 去年 今年 明年 最近 吗 呢 吧 啊 么 哪 谁 几 我 你 的 了 是 在 有 和
    与 也 就 都 很 还 又 叫 去 做 说 个 打算 决定 准备 想要 一般 平时 通常 经常 一起 带 想 要"""
_ASKING = frozenset(["what", "which", "whose", "how"])
_KIND_FRAME = frozenset(["kind", "kinds", "type", "types", "sort", "sorts", "of"])
_HAN_ASKING = frozenset(["什么", "哪个", "哪些", "哪", "几", "多少"])
_QUANTITY = re.compile(
    r"\bhow (many|much|old|long|far|often)\b|几|多少|多大|多久|多长", re.IGNORECASE
)
_HAN_NUMERALS = frozenset("零一二两三四五六七八九十百千万半")
_HAN_STOPS = sorted(_HAN_STOP_TEXT.split(), key=len, reverse=True)
_HAN_STOP = re.compile("|".join(map(re.escape, _HAN_STOPS)))


@dataclass(frozen=True)
class KeyTerm:
    """One thing the question names: its words (for reading), tokens, whether it is the
    head (what the question is about) and whether it names the answer's kind ("what
    *instrument*", 什么*乐器*: the answer says "violin", not "instrument")."""

    words: tuple[str, ...]
    tokens: frozenset[str]
    head: bool = False
    kind: bool = False
    number: bool = False  # "how many", "how old", 几, 多少: the answer is a number

    def covered_by(self, have: set[str]) -> bool:
        if self.number:
            return any(t[2:].isdigit() or t[3:] in _HAN_NUMERALS for t in have)
        needed = max(1, (len(self.tokens) + 1) // 2)
        if len(self.tokens & have) >= needed:
            return True
        # a two-character Chinese word the evidence splits ("换车" / "把旧车换掉")
        word = "".join(self.words)
        chars = {token for token in tokenize(word) if token.startswith("h1:")}
        return len(word) == len(chars) == SPLIT_WORD_CHARS and chars <= have


def key_terms(question: str) -> list[KeyTerm]:
    """The question's key terms in order (empty when it names nothing)."""
    text = unicodedata.normalize("NFKC", question)
    number = _QUANTITY.search(text) is not None
    text = _QUANTITY.sub(" ", text)  # "how many": the number term stands for it
    content = set(content_tokens(text))
    terms: list[KeyTerm] = []
    run: list[KeyTerm] = []  # the words after a determiner: the thing asked about
    in_run = auxiliary = asking = False
    for match in _PIECE.finditer(text):
        word = (match.group("word") or "").lower()
        if match.group("han"):
            terms += _phrase(run, auxiliary) + _han_terms(match.group("han"), first=not terms)
            in_run = False
        elif match.group("mark") or word in _DETERMINERS or _qualifies(word, asking):
            terms += _phrase(run, auxiliary)
            in_run = True
        elif _generic(word) or not (tokens := frozenset(tokenize(word)) & content):
            terms += _phrase(run, auxiliary)
            in_run = False
            auxiliary = auxiliary or word in _AUXILIARIES
            asking = word in _ASKING or (asking and word in _KIND_FRAME)
            continue
        else:
            name = match.group("word")[:1].isupper() and match.start() > 0
            term = KeyTerm((word,), tokens, head=in_run or name, kind=asking)
            if in_run:
                run.append(term)
            else:
                terms.append(term)
        asking = False
    terms += _phrase(run, auxiliary)
    if number:
        terms.append(KeyTerm(("<number>",), frozenset(), number=True))
    return list({(term.tokens, term.number): term for term in terms}.values())


def _qualifies(word: str, asking: bool) -> bool:
    """A preposition starts a phrase that narrows the question ("the wifi password *at
    home*", "my flight *to Berlin*"): its words are heads too. Not "of" in "what kind of"."""
    return word in _PREPOSITIONS and not (asking and word in _KIND_FRAME)


def _generic(word: str) -> bool:
    """A question frame word in any form ("happening", "remembered", "names")."""
    return word in _GENERIC or set(tokenize(word)) <= _GENERIC_TOKENS


def _phrase(run: list[KeyTerm], auxiliary: bool) -> list[KeyTerm]:
    """A finished run of words after a determiner. After an auxiliary the run is the
    subject, then the question's verb and its object ("when does the spring sale start?",
    "where does our band hold rehearsals?"): only its first word is sure to be a head."""
    words = list(run)
    run.clear()
    if auxiliary and len(words) >= 2:
        words[1:] = [KeyTerm(word.words, word.tokens, head=False) for word in words[1:]]
    return words


def _han_terms(han: str, *, first: bool) -> list[KeyTerm]:
    """Chinese runs between stop pieces. A Chinese question names its topic first, so
    its first run is a head, as is the run right after 的 (one character alone is too
    common to be one: 开 of 开始); the run right after 什么, 哪个, 几 … names the answer's
    kind."""
    terms: list[KeyTerm] = []
    pieces = _HAN_STOP.split(han)
    stops = _HAN_STOP.findall(han)
    for i, piece in enumerate(pieces):
        if not piece:
            continue
        tokens = frozenset(t for t in tokenize(piece) if t.startswith("h2:")) or frozenset(
            tokenize(piece)
        )
        before = stops[i - 1] if i > 0 else ""
        kind = before in _HAN_ASKING
        head = len(piece) > 1 and not kind and (before == "的" or (first and not terms))
        terms.append(KeyTerm((piece,), tokens, head=head, kind=kind))
    return terms


def covers(terms: list[KeyTerm], evidence: str) -> bool:
    """Every head in the evidence and some other term, the answer's kind not needed when a
    head is there, and of the rest every one, or all but one when the question has several."""
    have = set(tokenize(evidence))
    if any(term.number and not term.covered_by(have) for term in terms):
        return False
    terms = [term for term in terms if not term.number]
    missing = [term for term in terms if not term.covered_by(have)]
    heads = any(term.head for term in terms)
    if len(missing) == len(terms) or any(term.head for term in missing):
        return False
    rest = [term for term in missing if not (term.kind and heads)]
    if not rest:
        return True
    return len(rest) == 1 and (heads or len(terms) >= MIN_TERMS_FOR_A_GAP)


def coverage(terms: list[KeyTerm], evidence: str) -> float:
    """The share of key terms the evidence covers (to rank what passes ``covers``)."""
    have = set(tokenize(evidence))
    return sum(term.covered_by(have) for term in terms) / max(1, len(terms))
