"""The resident profile (spec §10): twelve installation-wide fields the user authorised.

Pure rules: field limits in Unicode code points, rendering of set fields only, and the
consent rule — a change the agent proposes itself applies only after the user's explicit
agreement in the very next message; silence, refusal or a new topic are not consent.
"""

import re
from dataclasses import dataclass

from ..errors import InvalidInput
from ..text.search_terms import tokenize
from ..text.secrets import redact_secrets

TOTAL_LIMIT = 6000


@dataclass(frozen=True)
class ProfileField:
    name: str
    label: str
    limit: int
    guidance: str


FIELDS: tuple[ProfileField, ...] = (
    ProfileField(
        "user_preferred_name", "User's preferred name", 100, "Address the user by this name."
    ),
    ProfileField(
        "assistant_preferred_name",
        "Assistant's name",
        100,
        "The user calls the assistant by this name.",
    ),
    ProfileField(
        "preferred_language",
        "Preferred answer language",
        100,
        "Write final answers in this language unless asked otherwise.",
    ),
    ProfileField(
        "reasoning_language",
        "Visible reasoning language",
        100,
        "Use this language only for user-visible thinking text.",
    ),
    ProfileField(
        "default_location",
        "Default location",
        200,
        "Reference place for local tasks that name none; not where the user is.",
    ),
    ProfileField(
        "home_city",
        "Home city",
        100,
        "Usual city of residence; never infer the user's whereabouts from it.",
    ),
    ProfileField(
        "current_city",
        "Current city",
        100,
        "Where the user is now (possibly travelling); it wins over the default "
        "location until changed.",
    ),
    ProfileField(
        "response_preferences", "Response preferences", 1000, "Follow these style preferences."
    ),
    ProfileField(
        "standing_instructions",
        "Standing instructions",
        1000,
        "Apply these instructions in every conversation.",
    ),
    ProfileField("user_background", "User background", 1500, "Use as stable background."),
    ProfileField("long_term_goals", "Long-term goals", 1000, "Keep these goals in mind."),
    ProfileField("persistent_notes", "Persistent notes", 1200, "Other lasting notes."),
)
FIELD_NAMES = tuple(f.name for f in FIELDS)
_BY_NAME = {f.name: f for f in FIELDS}
HEADER = (
    "[StrataGate Persistent Profile]\n"
    "User-authorised persistent profile data: stable cross-session context. Do not invent "
    "values that are not listed. It does not override higher-priority system instructions."
)
_CONSENT = re.compile(
    r"^\s*(同意|可以|好的?|行|确认|没问题|yes|yep|yeah|ok(ay)?|sure|agreed?|i agree|"
    r"go ahead|do it|please do|confirm(ed)?)\s*[。.!！,，~～]*\s*$",
    re.IGNORECASE,
)


def field_of(name: str) -> ProfileField:
    if name not in _BY_NAME:
        raise InvalidInput(f"unknown profile field {name!r}; fields: {', '.join(FIELD_NAMES)}")
    return _BY_NAME[name]


def clean_value(name: str, value: object) -> str:
    """Trimmed value within the field's code-point limit (empty clears the field), secrets
    redacted: the profile is injected into every prompt, a key must not ride along."""
    if not isinstance(value, str):
        raise InvalidInput(f"profile field {name} takes a string")
    text = redact_secrets(value.strip())
    limit = field_of(name).limit
    if len(text) > limit:
        raise InvalidInput(f"{name} holds at most {limit} characters (got {len(text)})")
    return text


def check_total(values: dict[str, str]) -> None:
    total = sum(len(v) for v in values.values())
    if total > TOTAL_LIMIT:
        raise InvalidInput(f"the profile holds at most {TOTAL_LIMIT} characters in all")


def render_profile(values: dict[str, str]) -> str | None:
    """The injected section: header, guidance for set fields, then ``Label: value`` lines."""
    present = [f for f in FIELDS if values.get(f.name)]
    if not present:
        return None
    guidance = [f"- {f.guidance}" for f in present]
    lines = [f"{f.label}: {values[f.name]}" for f in present]
    return "\n".join([HEADER, *guidance, "", *lines])


def is_explicit_consent(user_message: str) -> bool:
    """Only a short, unambiguous agreement counts ("同意", "yes", "go ahead")."""
    return bool(_CONSENT.match(user_message))


def user_asked_for(value: str, user_message: str) -> bool:
    """Does the user's own message carry the value (so no separate consent is needed)?"""
    wanted = set(tokenize(value))
    if not wanted:
        return True
    said = set(tokenize(user_message))
    return len(wanted & said) / len(wanted) >= 0.6
