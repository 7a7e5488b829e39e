"""Secret-looking tokens are redacted from derived views; L5 keeps the words as said.

A model summary or an event card is text the agent reads back into many later prompts
and that the web app shows; an API key the user pasted once must not spread there. The
raw messages stay verbatim (they are the evidence), so the user can still find it.

No pattern relies on ``\\b``: Han, kana, Cyrillic or Arabic letters are word characters, so
``密钥是sk-proj-…`` has no word boundary before the key. A key starts where the character
before it is not of the key's own alphabet (``[A-Za-z0-9_-]``), whatever script that is,
and the key's body is matched in ASCII only, so it stops where the next sentence begins.
"""

import re
from collections.abc import Callable, Iterator
from typing import Any

REDACTED = "[redacted secret]"
_START = r"(?<![A-Za-z0-9_-])"  # not inside a longer token (task-…, my_ghp_…)
_SHAPES = (  # (name, pattern): every shape the module documents; tests plant each
    ("openai", r"sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{16,}"),  # OpenAI, DeepSeek
    ("anthropic", r"sk-ant-[A-Za-z0-9_-]{16,}"),
    ("stripe", r"(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}"),
    ("github", r"(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{20,}"),
    ("github_pat", r"github_pat_[A-Za-z0-9_]{20,}"),
    ("gitlab", r"glpat-[A-Za-z0-9_-]{20,}"),
    ("huggingface", r"hf_[A-Za-z0-9]{30,}"),
    ("npm", r"npm_[A-Za-z0-9]{36,}"),
    ("groq", r"gsk_[A-Za-z0-9]{20,}"),
    ("xai", r"xai-[A-Za-z0-9]{20,}"),
    ("slack", r"xox[abeoprs]-(?=[A-Za-z0-9-]*[0-9])[A-Za-z0-9-]{10,}"),
    ("slack_webhook", r"https://hooks\.slack\.com/services/[A-Za-z0-9/_-]{20,}"),
    ("aws", r"(?:AKIA|ASIA)[0-9A-Z]{16}"),
    ("google", r"AIza[0-9A-Za-z_-]{35}"),
    ("google_oauth", r"ya29\.[A-Za-z0-9_-]{20,}"),
    ("sendgrid", r"SG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}"),
    ("jwt", r"eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}"),
)
_TOKENS = re.compile(  # the lookahead on first letters keeps the scan near \b's speed
    rf"(?=[AaeghnrSsxy]){_START}(?:{'|'.join(pattern for _, pattern in _SHAPES)})"
    r"|-----BEGIN [A-Z ]*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?"
    r"(?:-----END [A-Z ]*PRIVATE KEY(?: BLOCK)?-----|$)"
)
# Each token pattern begins with one of these: a text holding none of them where a key may
# begin (most pages of the web app, 100 KB and more) skips the token scan, which costs ~25 ms
# per 150 KB. (The Slack webhook's was missing: a webhook alone in a text stayed as said.)
_TOKEN_STARTS = (
    "sk-",
    "sk_",
    "rk_",
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "github_pat_",
    "glpat-",
    "hf_",
    "npm_",
    "gsk_",
    "xai-",
    "xox",
    "AKIA",
    "ASIA",
    "AIza",
    "ya29.",
    "SG.",
    "eyJ",
    "https://hooks.slack.com/services/",
    "-----BEGIN",
)
_TOKEN_LETTERS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
# A value ends at white space, a quote, a comma or semicolon, or where CJK text (Han, kana,
# Hangul, CJK and full-width punctuation) begins: "密码=hunter2hunter2，谢谢".
_VALUE = r"[^\s\"',;\u3000-\u30ff\u3400-\u9fff\uac00-\ud7af\uff00-\uffef]"
_LABEL = (  # unanchored on the left: aws_secret_access_key, DB_PASSWORD, client_secret
    r"(?:api[_-]?key|access[_-]?key|secret(?:[_-]?(?:access[_-]?)?key)?|private[_-]?key"
    r"|password|passwd|pwd|token)"
)
# As in English ("my password is …"), a password stated in prose (密码是…) is a memory the
# person asked for and stays; a labelled value ("密码：…", "password=…") is a credential.
_LABELLED = re.compile(  # the label stays, the value after it goes
    r"(?i)(?=[abpst密口令])("
    rf"(?<![A-Za-z])bearer\s+|{_LABEL}[\"']?\s*[:=]\s*[\"']?"
    r"|(?:密码|密钥|口令|令牌)\s*[:：=]\s*[\"']?"
    rf")(?!\[redacted)({_VALUE}{{8,}})"
)
# Every match of ``_LABELLED`` starts with one of these (lower-cased). A page is mostly
# markup whose a, b, p, s and t each start a try of ``_LABELLED`` (~30 ms per 80 KB), so
# the scan looks for these words first and tries the pattern only where one starts.
_LABEL_STARTS = (
    "bearer",
    "api",
    "access",
    "secret",
    "private",
    "passw",
    "pwd",
    "token",
    "密码",
    "密钥",
    "口令",
    "令牌",
)
# The letters ``(?i)`` matches to ASCII ones that ``str.lower`` does not lower to them (or
# lowers to two characters): a text holding one is scanned by the pattern alone.
_CASE_ODDITIES = ("\u0130", "\u0131", "\u017f", "\u212a")
# scheme://user:password@host: the password goes, the user and the host stay.
HIDDEN_PASSWORD = "***"  # how a database URL is shown (``store/units.shown_location``)
_URL_PASSWORD = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*://[^\s:/?#@]*:)([^\s/?#]+)(?=@)")


def redact_secrets(text: str) -> str:
    """``text`` with every secret-looking token replaced by ``[redacted secret]``."""
    if _token_may_start(text):
        text = _TOKENS.sub(REDACTED, text)
    if "://" in text:
        text = _URL_PASSWORD.sub(_url_password, text)
    return _redact_labelled(text)


def _token_may_start(text: str) -> bool:
    """Whether ``_TOKENS`` can match: a private key's armour, or a key's first letters
    where a key may begin (``_START``; the events page's ``task_completed`` holds ``sk_``
    inside a word, and a whole-page scan for nothing cost ~2 ms per 30 KB)."""
    if "-----BEGIN" in text:
        return True
    for start in _TOKEN_STARTS:
        at = text.find(start)
        while at >= 0:
            if at == 0 or text[at - 1] not in _TOKEN_LETTERS:
                return True
            at = text.find(start, at + 1)
    return False


def _redact_labelled(text: str) -> str:
    """``_LABELLED.sub`` keeping each label, tried only where a label word starts: the
    same leftmost, non-overlapping matches, so the same text."""
    if any(odd in text for odd in _CASE_ODDITIES):
        return _LABELLED.sub(_keep_label, text)
    kept: list[str] = []
    done = 0
    for start in _label_starts(text.lower()):
        found = None if start < done else _LABELLED.match(text, start)
        if found is not None:
            kept += (text[done:start], _keep_label(found))
            done = found.end()
    return "".join(kept) + text[done:] if kept else text


def _label_starts(lowered: str) -> list[int]:
    """Every place one of ``_LABEL_STARTS`` begins, in order."""
    starts: set[int] = set()
    for word in _LABEL_STARTS:
        at = lowered.find(word)
        while at >= 0:
            starts.add(at)
            at = lowered.find(word, at + 1)
    return sorted(starts)


def _keep_label(found: re.Match[str]) -> str:
    return found.group(1) + REDACTED


def _url_password(found: re.Match[str]) -> str:
    if found.group(2) in (REDACTED, HIDDEN_PASSWORD):  # hidden already (``***``: a database's)
        return found.group(0)
    return found.group(1) + REDACTED


def redact_value(value: Any) -> Any:
    """``redact_secrets`` over every string of a JSON-like value. A value's strings are
    checked together first: a JSON answer holds hundreds of short ids and names, and each
    on its own paid every start's scan; when none of them holds a start, none changes."""
    if not may_hold_secret("\n".join(_strings(value))):
        return _redacted(value, _unchanged)
    return _redacted(value, redact_secrets)


def may_hold_secret(text: str) -> bool:
    """False when ``redact_secrets`` cannot change ``text`` (no token start, no URL, no
    label start, no letter the labels' ``(?i)`` treats apart): what the function itself
    checks before each of its scans. Joined texts answer for each part: a start absent
    from the whole is absent from every part (no start holds a line break)."""
    if any(start in text for start in _TOKEN_STARTS) or "://" in text:
        return True
    if any(odd in text for odd in _CASE_ODDITIES):
        return True
    lowered = text.lower()
    return any(word in lowered for word in _LABEL_STARTS)


def _unchanged(text: str) -> str:
    return text


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _strings(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)


def _redacted(value: Any, redact: Callable[[str], str]) -> Any:
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, list | tuple):
        return [_redacted(item, redact) for item in value]
    if isinstance(value, dict):
        return {key: _redacted(item, redact) for key, item in value.items()}
    return value
