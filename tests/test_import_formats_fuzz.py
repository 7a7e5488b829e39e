"""Hypothesis over every importer's parser: 2,000 inputs each, and only ``InvalidInput``.

Inputs are arbitrary text, arbitrary JSON values (as a document and as JSON lines), the
samples cut and spliced as text, and the samples with one value swapped for any JSON
value (a wrong type in any field). Whatever a parser returns must still be v2-shaped.
"""

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stratagate_plugin.core.errors import InvalidInput
from stratagate_plugin.core.importer.formats import FORMAT_NAMES, convert, detect_format, recover
from tests.strategies import json_values, texts

SAMPLES = {
    path.name: path.read_text("utf-8")
    for path in (Path(__file__).parent / "samples" / "import").iterdir()
}
FUZZ = settings(
    max_examples=2000,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def _splice(text: str, edits: list[tuple[float, int, str]]) -> str:
    """Each edit cuts ``length`` characters at a relative position and puts ``insert`` there."""
    for where, length, insert in edits:
        at = int(where * len(text))
        text = text[:at] + insert + text[at + length :]
    return text


def _replace(value: Any, path: list[int], new: Any) -> Any:
    """``value`` with the child reached by ``path`` (indices taken modulo) set to ``new``."""
    if not path or not isinstance(value, dict | list) or not value:
        return new
    if isinstance(value, list):
        index = path[0] % len(value)
        return [_replace(v, path[1:], new) if i == index else v for i, v in enumerate(value)]
    key = sorted(value)[path[0] % len(value)]
    return {k: _replace(v, path[1:], new) if k == key else v for k, v in value.items()}


def _swap_value(text: str, path: list[int], new: Any) -> str:
    """A sample with one JSON value swapped: the document's, or one line's of JSON lines."""
    try:
        return json.dumps(_replace(json.loads(text), path, new))
    except ValueError:
        pass
    lines = text.splitlines()
    if not lines:
        return text
    index = path[0] % len(lines) if path else 0
    try:
        lines[index] = json.dumps(_replace(json.loads(lines[index]), path[1:], new))
    except ValueError:
        lines[index] = json.dumps(new)
    return "\n".join(lines)


samples = st.sampled_from(sorted(SAMPLES)).map(SAMPLES.__getitem__)
edits = st.lists(st.tuples(st.floats(0, 1), st.integers(0, 40), texts()), min_size=1, max_size=4)
inputs = st.one_of(
    st.text(max_size=200),
    texts(),
    json_values().map(json.dumps),
    st.lists(json_values(), max_size=4).map(lambda rows: "\n".join(json.dumps(r) for r in rows)),
    st.builds(_splice, samples, edits),
    st.builds(_swap_value, samples, st.lists(st.integers(0, 50), max_size=5), json_values()),
)


def holds_none(value: Any) -> bool:
    if isinstance(value, dict):
        return any(holds_none(v) for v in value.values())
    if isinstance(value, list):
        return any(holds_none(v) for v in value)
    return value is None


def assert_well_formed(document: dict[str, Any]) -> None:
    json.dumps(document, ensure_ascii=False).encode("utf-8")  # no lone surrogate survived
    assert not holds_none(document)
    assert document["schemaVersion"] == "stratagate.external-memory.v2"
    for item in document["candidates"]:
        assert item["summary"].strip() and item["title"].strip()
        assert item["tags"][0] == item["category"]


@pytest.mark.parametrize("fmt", [name for name in FORMAT_NAMES if name != "v2"])
@FUZZ
@given(text=inputs)
def test_convert_raises_only_invalid_input(fmt: str, text: str) -> None:
    try:
        document = convert(text, fmt)
    except InvalidInput as error:
        assert str(error) and "\n" not in str(error)
        return
    assert_well_formed(document)


@FUZZ
@given(text=inputs)
def test_recover_raises_only_invalid_input(text: str) -> None:
    try:
        document = recover(text)
    except InvalidInput:
        return
    assert_well_formed(document)
    assert document["coverage"] == "limited"


@FUZZ
@given(text=inputs)
def test_detect_format_names_a_format_that_converts_or_says_why(text: str) -> None:
    fmt = detect_format(text)
    assert fmt in FORMAT_NAMES
    if fmt == "v2":
        return
    try:
        assert_well_formed(convert(text, fmt))
    except InvalidInput as error:
        assert "\n" not in str(error)
