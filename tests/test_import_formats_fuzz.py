"""Hypothesis over every importer's parser: 2,000 inputs each, and only ``InvalidInput``.

Inputs are arbitrary text, arbitrary JSON values (as a document and as JSON lines), the
samples cut and spliced as text, and the samples with one value swapped for any JSON
value (a wrong type in any field). Whatever a parser returns must still be v2-shaped.
"""

import functools
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stratagate_plugin.core.errors import InvalidInput
from stratagate_plugin.core.importer.formats import FORMAT_NAMES, convert, detect_format, recover
from tests.strategies import ODD_TEXT

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


def _splice(text: str, edits: list[tuple[int, int, str]]) -> str:
    """Each edit cuts ``length`` characters at ``where`` (modulo the length) and puts
    ``insert`` there."""
    for where, length, insert in edits:
        at = where % (len(text) + 1)
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


# Cheap to draw on purpose: 2,000 draws of tests.strategies' richer text and JSON take
# longer than the parsers do; these snippets hold what breaks parsers (odd Unicode, JSON
# punctuation, a fence, a bullet, a heading, an unreadable number).
SNIPPETS = [*ODD_TEXT, "{", "}", "[", "]", '"', ",", ":", "- ", "## ", "```", "1e999", "\\u"]
snippets = st.sampled_from(SNIPPETS)
short_text = st.text(max_size=12) | snippets
scalars = st.none() | st.booleans() | st.integers() | st.floats() | short_text
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(short_text, inner, max_size=3),
    max_leaves=8,
)
samples = st.sampled_from(sorted(SAMPLES)).map(SAMPLES.__getitem__)
edits = st.lists(
    st.tuples(st.integers(0, 10**5), st.integers(0, 40), short_text), min_size=1, max_size=4
)
inputs = st.one_of(
    st.text(max_size=200),
    st.lists(short_text, max_size=12).map("".join),
    values.map(json.dumps),
    st.lists(values, max_size=4).map(lambda rows: "\n".join(json.dumps(r) for r in rows)),
    st.builds(_splice, samples, edits),
    st.builds(_swap_value, samples, st.lists(st.integers(0, 50), max_size=5), values),
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


PARSERS: dict[str, Callable[[str], dict[str, Any]]] = {
    **{fmt: functools.partial(convert, fmt=fmt) for fmt in FORMAT_NAMES if fmt != "v2"},
    "recover": recover,
}


@FUZZ
@given(text=inputs)
def test_every_parser_raises_only_invalid_input(text: str) -> None:
    """Each input goes to every parser (drawing 2,000 inputs costs more than parsing them,
    so they are drawn once): 2,000 cases for each converter, recovery and detection."""
    assert detect_format(text) in FORMAT_NAMES
    for name, parse in PARSERS.items():
        try:
            document = parse(text)
        except InvalidInput as error:
            assert str(error) and "\n" not in str(error), name
            continue
        assert_well_formed(document)
        assert name != "recover" or document["coverage"] == "limited"
