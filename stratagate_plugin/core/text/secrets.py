"""Secret-looking tokens are redacted from derived views; L5 keeps the words as said.

A model summary or an event card is text the agent reads back into many later prompts
and that the web app shows; an API key the user pasted once must not spread there. The
raw messages stay verbatim (they are the evidence), so the user can still find it.
"""

import re
from typing import Any

REDACTED = "[redacted secret]"
_TOKENS = re.compile(
    "|".join(
        (
            r"\bsk-(?:proj-|ant-)?[A-Za-z0-9_-]{16,}",  # OpenAI, Anthropic, DeepSeek keys
            r"\b(?:ghp|gho|ghu|ghs|ghr|github_pat)_[A-Za-z0-9_]{20,}",  # GitHub tokens
            r"\bxox[abposr]-[A-Za-z0-9-]{10,}",  # Slack tokens
            r"\bAKIA[0-9A-Z]{16}\b",  # AWS access key ids
            r"\bAIza[0-9A-Za-z_-]{35}\b",  # Google API keys
            r"\beyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}",  # JWTs
            r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)",
        )
    )
)
# Each token pattern starts with one of these: a text holding none of them (most pages of
# the web app, 100 KB and more) skips the token scan, which costs ~25 ms per 150 KB.
_TOKEN_STARTS = (
    "sk-",
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "github_pat_",
    "xox",
    "AKIA",
    "AIza",
    "eyJ",
    "-----BEGIN",
)
_LABELLED = re.compile(  # the label stays, the value after it goes
    r"(?i)(\b(?:bearer\s+|(?:api[_-]?key|secret|password|passwd|token)[\"']?\s*[:=]\s*[\"']?))"
    r"(?!\[redacted)([^\s\"',;]{8,})"
)


def redact_secrets(text: str) -> str:
    """``text`` with every secret-looking token replaced by ``[redacted secret]``."""
    if any(start in text for start in _TOKEN_STARTS):
        text = _TOKENS.sub(REDACTED, text)
    return _LABELLED.sub(lambda found: found.group(1) + REDACTED, text)


def redact_value(value: Any) -> Any:
    """``redact_secrets`` over every string of a JSON-like value."""
    if isinstance(value, str):
        return redact_secrets(value)
    if isinstance(value, list | tuple):
        return [redact_value(item) for item in value]
    if isinstance(value, dict):
        return {key: redact_value(item) for key, item in value.items()}
    return value
