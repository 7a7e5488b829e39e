"""Search tokens (spec §6.1): NFKC, lower case, word segments, overlapping Han bigrams.

Han text is indexed as overlapping character pairs (a lone Han character as itself), so
Chinese works without a dictionary. Every other run of letters/digits is one word.
"""

import re
import unicodedata

TOKENIZER_VERSION = 1
_HAN = r"\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002fa1f"
_SEGMENT = re.compile(rf"([{_HAN}]+)|((?:(?![{_HAN}])\w)+)")


def normalize(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).lower().split())


def tokenize(text: str) -> list[str]:
    """Tokens in text order; Han runs give ``h2:`` bigrams (``h1:`` for a lone character)."""
    tokens: list[str] = []
    for han, word in _SEGMENT.findall(normalize(text)):
        if word:
            tokens.append("w:" + word)
        elif len(han) == 1:
            tokens.append("h1:" + han)
        else:
            tokens.extend("h2:" + han[i : i + 2] for i in range(len(han) - 1))
    return tokens


def fts_encode(token: str) -> str:
    """A token as one FTS5 ``unicode61`` term (hex keeps punctuation and case intact)."""
    return "t" + token.encode("utf-8").hex()


def fts_document(text: str) -> str:
    return " ".join(fts_encode(token) for token in tokenize(text))


def fts_match_any(tokens: list[str]) -> str:
    """An FTS5 MATCH expression: any of the tokens."""
    return " OR ".join(dict.fromkeys(fts_encode(token) for token in tokens))
