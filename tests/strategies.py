"""Hypothesis strategies for what an ingest file can hold, shared with a fault benchmark.

``ingest_documents()`` draws a whole parsed JSON document: a list of well-formed messages
with odd text (lone surrogates, NUL, line breaks) and times at the calendar's edge; the
same with some entries spoiled (a field of the wrong type, a stray key); LoCoMo-like
samples with parts missing; or any JSON value at all. The tests run it a couple of
hundred times; a benchmark can run it with ``settings(max_examples=10_000)``.
"""

from typing import Any

from hypothesis import strategies as st

ODD_TEXT = ["\ud800", "\udfff", "\x00", "\n", "\r", "\u2028", "é", "咖啡", "😀", "\ufffd", " "]
ROLES = ["user", "user", "assistant", "tool", "system"]
TIMES = [
    "2025-01-01T10:00:00+02:00",
    "2025-01-01T10:00:00Z",
    "2025-01-01",
    "9999-12-31T23:59:59+00:00",
    "9999-12-31T23:00:00-05:00",
    "0001-01-01T00:00:00+00:00",
    "0001-01-01T01:00:00+05:00",
]
BAD_TIMES = ["2025-13-01T00:00:00Z", "yesterday", "", "9999-12-31T23:59:59+24:00"]
FIELDS = ["thread", "role", "content", "at", "tool_calls", "stray key"]


def texts() -> st.SearchStrategy[str]:
    """Short text, often with a character that Unicode, JSON or SQLite finds hard."""
    odd = st.lists(st.sampled_from(ODD_TEXT) | st.characters(), max_size=6).map("".join)
    return st.text(max_size=8) | odd


def json_values() -> st.SearchStrategy[Any]:
    """Any JSON value, shallow: scalars of every type, small lists and objects."""
    scalars = st.none() | st.booleans() | st.integers() | st.floats() | texts()
    return st.recursive(
        scalars,
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(texts(), inner, max_size=3),
        max_leaves=6,
    )


def tool_calls() -> st.SearchStrategy[list[dict[str, Any]]]:
    call = st.fixed_dictionaries(
        {"name": texts()}, optional={"arguments": json_values(), "result": json_values()}
    )
    return st.lists(call, max_size=2)


def valid_messages() -> st.SearchStrategy[dict[str, Any]]:
    """An entry of the documented shape; only its text and time are unusual."""
    return st.fixed_dictionaries(
        {
            "thread": st.sampled_from(["s1", "s2", "s\ud8001"]),
            "role": st.sampled_from(ROLES),
            "content": texts(),
            "at": st.sampled_from(TIMES),
        },
        optional={"tool_calls": tool_calls()},
    )


def spoiled_messages() -> st.SearchStrategy[Any]:
    """A valid entry with one field replaced by a value of any type (or a stray key)."""
    value = st.sampled_from(BAD_TIMES) | texts() | json_values()
    return st.builds(_spoil, valid_messages(), st.sampled_from(FIELDS), value)


def _spoil(message: dict[str, Any], field: str, value: Any) -> dict[str, Any]:
    return {**message, field: value}


def locomo_samples() -> st.SearchStrategy[dict[str, Any]]:
    """A LoCoMo-like sample whose parts may be missing or of the wrong type."""
    line = st.fixed_dictionaries(
        {"speaker": st.sampled_from(["Ann", "Bo"]), "dia_id": texts(), "text": texts()}
    )
    sessions = st.lists(line, max_size=3) | json_values()
    conversation = st.fixed_dictionaries(
        {"speaker_a": st.just("Ann") | json_values(), "session_1": sessions},
        optional={"session_1_date_time": st.just("1:56 pm on 8 May, 2023") | texts()},
    )
    return st.fixed_dictionaries(
        {"conversation": conversation}, optional={"sample_id": texts() | json_values()}
    )


def ingest_documents() -> st.SearchStrategy[Any]:
    """A whole parsed ingest file."""
    return (
        st.lists(valid_messages(), max_size=8)
        | st.lists(valid_messages() | spoiled_messages(), max_size=8)
        | st.lists(locomo_samples(), min_size=1, max_size=2)
        | json_values()
    )
