"""Search tokens (spec §6.1): NFKC, lower case, word segments, overlapping Han bigrams.

Han text is indexed as overlapping character pairs (a lone Han character as itself),
plus every character on its own, so Chinese works without a dictionary and a name
spelled two ways still shares characters. Other runs of letters/digits are one word
each, lightly stemmed so "painting", "painted" and "paints" meet, after ``word_forms``
joins irregular forms and a few synonyms ("went"/"go", "kids"/"children", "three"/"3"); a
hyphenated word also gives its joined form ("de-stress" meets "destress"). Question-frame
words ("say", "kind", "describe") are query stopwords. Measurements:
docs/retrieval-experiments.md.
"""

import re
import unicodedata
from functools import lru_cache

from .word_forms import base_form

TOKENIZER_VERSION = 4
_HAN = r"\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002fa1f"
_SEGMENT = re.compile(rf"([{_HAN}]+)|((?:(?![{_HAN}])\w)+)")
_HYPHENATED = re.compile(r"\b[a-z]+(?:-[a-z]+)+\b")
_VOWEL = re.compile(r"[aeiouy]")
_FUNCTION_WORD_TEXT = """a an the and or but if of to in on at by for with from about into over
after before is are was were be been being am do does did doing done have has had having i me my we
our you your he him his she her it its they them their what which who whom whose when where why
how that this these those there here can could would should will shall may might must not no so
than too very just also any some all as up out then"""
_FRAME_WORD_TEXT = """say says said saying mention mentions mentioned mentioning describe
describes described describing kind kinds type types sort sorts"""
_FUNCTION_WORDS = frozenset(_FUNCTION_WORD_TEXT.split())
_HAN_STOP_CHARS = "的了吗呢是在我你他她它们这那有和与也就都很还又吧啊么个一不"
_HAN_STOP_PAIRS = ["什么", "哪些", "哪个", "哪里", "何时", "时候", "为什么", "怎么", "如何", "多少"]


def normalize(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).lower().split())


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """A light English suffix stripper (plural, -ing, -ed, -ly, final e) after ``base_form``.

    A stem that would be a function word ("note" → "not", "theme" → "them", "outing" →
    "out") is not used: such a word only loses a plural "s".
    """
    word = base_form(word)
    if not word.isascii() or not word.isalpha() or len(word) <= 3:
        return word
    stemmed = _strip_suffixes(word)
    if stemmed in _FUNCTION_WORDS and word not in _FUNCTION_WORDS:
        return _strip_plural(word)
    return stemmed


def _strip_plural(word: str) -> str:
    return word[:-1] if word.endswith("s") and not word.endswith(("ss", "us", "is")) else word


def _strip_suffixes(word: str) -> str:
    for suffix, replacement in (("ies", "y"), ("sses", "ss"), ("ied", "y")):
        if word.endswith(suffix) and len(word) > len(suffix) + 2:
            return word[: -len(suffix)] + replacement
    word = _strip_verb_suffix(_strip_plural(word))
    if word.endswith("e") and len(word) > 3:
        word = word[:-1]
    if word.endswith("ly") and len(word) > 5:
        word = word[:-2]
    return word


def _strip_verb_suffix(word: str) -> str:
    for suffix in ("ing", "ed"):
        stem_part = word[: -len(suffix)]
        if word.endswith(suffix) and len(stem_part) >= 3 and _VOWEL.search(stem_part):
            doubled = len(stem_part) > 3 and stem_part[-1] == stem_part[-2]
            return stem_part[:-1] if doubled and stem_part[-1] not in "lsz" else stem_part
    return word


def tokenize(text: str, skip: frozenset[str] = frozenset()) -> list[str]:
    """Tokens in order: stemmed ``w:`` words; Han runs give ``h2:`` pairs, then ``h1:`` chars.

    Words in ``skip`` (compared as written, before stemming) give no token.
    """
    tokens: list[str] = []
    text = normalize(text)
    for han, word in _SEGMENT.findall(text):
        if word:
            if word not in skip:
                tokens.append("w:" + stem(word))
        else:
            tokens.extend("h2:" + han[i : i + 2] for i in range(len(han) - 1))
            tokens.extend("h1:" + char for char in han)
    if "-" in text:
        tokens.extend("w:" + stem(w.replace("-", "")) for w in _HYPHENATED.findall(text))
    return tokens


_STOP_WORDS = _FUNCTION_WORDS | frozenset(_FRAME_WORD_TEXT.split())
_HAN_STOP = frozenset(
    [f"h1:{char}" for char in _HAN_STOP_CHARS]
    + [token for pair in _HAN_STOP_PAIRS for token in tokenize(pair) if token.startswith("h2:")]
)


def query_tokens(text: str) -> list[str]:
    """A query's tokens without function words (all of them when nothing else is left).

    English function words are matched as written, so a word that merely stems like one
    ("note" like "not", "theme" like "them", "outing" like "out") stays a search term.
    """
    return content_tokens(text) or tokenize(text)


def content_tokens(text: str) -> list[str]:
    """A text's tokens without function words (none when nothing else is left)."""
    return [token for token in tokenize(text, _STOP_WORDS) if token not in _HAN_STOP]


def fts_encode(token: str) -> str:
    """A token as one FTS5 ``unicode61`` term (hex keeps punctuation and case intact)."""
    return "t" + token.encode("utf-8").hex()


def fts_document(text: str) -> str:
    return " ".join(fts_encode(token) for token in tokenize(text))


def fts_match_any(tokens: list[str]) -> str:
    """An FTS5 MATCH expression: any of the tokens."""
    return " OR ".join(dict.fromkeys(fts_encode(token) for token in tokens))


def fts_match_all(tokens: list[str]) -> str:
    """An FTS5 MATCH expression: every one of the tokens."""
    return " AND ".join(dict.fromkeys(fts_encode(token) for token in tokens))
