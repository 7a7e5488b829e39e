"""The offline recovery reader of §11.4: candidates from text that was meant to be v2 JSON.

When strict parsing fails and no model is configured, what the other AI wrote is read by
fixed rules, never guessed at: broken JSON (cut off, a missing comma, a stray comment)
still carries its ``"title": "…"`` and ``"summary": "…"`` pairs, and each pair is one
candidate; text with no such pairs is read as a plain list (``lines.py``). Confidence is
0.5 and the coverage ``limited``: the import forces the user to confirm every item.
"""

import json
import re
from typing import Any

from ...errors import InvalidInput
from ...text.clean import valid_text
from .candidates import Draft, Skipped, document
from .classify import CATEGORY_ORDER
from .json_text import unfenced
from .lines import read_drafts

CONFIDENCE = 0.5
_PAIR = re.compile(r'"(title|summary|category)"\s*:\s*"((?:[^"\\\n]|\\.)*)"')


def recover(text: str) -> dict[str, Any]:
    """What can be read from ``text`` → a v2 document; nothing readable is an error."""
    skipped = Skipped()
    body = unfenced(text)
    drafts = _pair_drafts(body) or read_drafts(body, skipped)
    if not drafts:
        raise InvalidInput("nothing to recover: no title/summary pairs, lines or bullets")
    result = document("recovered", drafts, skipped, confidence=CONFIDENCE)
    result["coverage"] = "limited"
    result["coverageNote"] = (
        "Recovered offline from text that is not valid v2 JSON; " + (result["coverageNote"])
    )
    return result


def _pair_drafts(text: str) -> list[Draft]:
    """One draft per summary, with the title and category written just before it."""
    drafts: list[Draft] = []
    title = category = ""
    for match in _PAIR.finditer(text):
        key, value = match.group(1), _unescape(match.group(2))
        if key == "title":
            title = value
        elif key == "category":
            category = value if value in CATEGORY_ORDER else ""
        elif value.strip():
            drafts.append(Draft(summary=value, title=title, category=category))
            title = category = ""
    return drafts


def _unescape(raw: str) -> str:
    """A JSON string's content; an escape that JSON would refuse is kept as written."""
    try:
        value = json.loads(f'"{raw}"')
    except ValueError:
        return raw
    return valid_text(value) if isinstance(value, str) else raw
