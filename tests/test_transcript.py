"""L5/L4/L3 rules of spec §2.2–2.5 on English and Chinese transcripts."""

import json

import pytest

from stratagate_plugin.core.blocks.transcript import (
    IMAGE_DESCRIPTION_CHARS,
    REPEATED_PASTE_MARKER,
    image_marker,
    is_filler,
    layer_texts,
    render_condensed,
    render_raw,
    render_readable,
    summarize_result,
    summarize_tool_json,
)
from stratagate_plugin.core.records import MessageIn, ToolTrace
from stratagate_plugin.core.text.token_budget import estimate_tokens

PASTE = "The quarterly report shows revenue grew by eleven percent while costs stayed flat overall."
CODE = "```python\ndef total(items):\n    return sum(i.price for i in items)\n```"


def msg(role: str, content: str, *tools: ToolTrace) -> MessageIn:
    return MessageIn(role=role, content=content, tool_calls=tools)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("tokens_of", "expected"),
    [("", 0), ("abcd", 1), ("abcde", 2), ("你好", 2), ("ab你好cd", 4), ("a b", 1)],
)
def test_estimate_tokens_counts_ascii_runs_and_code_points(tokens_of: str, expected: int) -> None:
    assert estimate_tokens(tokens_of) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ({"error": "boom " * 50}, "failed: " + ("boom " * 50).strip()[:140]),
        ({"summary": "3 rows"}, "3 rows"),
        ({"message": "done\n\nnow"}, "done now"),
        ({"rows": [1, 2], "arguments": [1], "cols": []}, "rows: 2, cols: 0"),
        ({"ok": True}, "completed"),
        ({"ok": False}, "not completed"),
        ({"x": 1}, "structured result returned"),
        (42, "42"),
        (True, "true"),
        ('{"summary": "nested"}', "nested"),
        ("x" * 200, "x" * 160),
    ],
)
def test_summarize_result_follows_the_shape_rules(value: object, expected: str) -> None:
    assert summarize_result(value) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            '{"name": "grep", "arguments": {"q": "x"}, "result": {"ok": true}}',
            "Tool call: grep (completed)",
        ),
        ('```json\n{"tool": "search", "content": "found 3"}\n```', "Tool call: search (found 3)"),
        (
            '{"tool_calls": [{"function": {"name": "a"}}, {"function": {"name": "b"}}]}',
            "Tool call: a, b",
        ),
        (
            '{"tool_calls": [{"name": "run", "arguments": "{bad',
            "Tool call: run (raw arguments omitted)",
        ),
        ('"arguments": oops', "Tool call (raw arguments omitted)"),
        ('{"just": "data"}', None),
        ("plain words", None),
    ],
)
def test_summarize_tool_json_recognises_tool_records(text: str, expected: str | None) -> None:
    assert summarize_tool_json(text) == expected


def test_raw_keeps_system_messages_and_raw_tool_json() -> None:
    trace = ToolTrace(name="read", arguments={"path": "a.txt"}, result="hello")
    raw = render_raw([msg("system", "be nice"), msg("assistant", "reading", trace)])
    assert raw.startswith("system: be nice\n\nassistant: reading\nTool call (raw): ")
    assert json.loads(raw.split("Tool call (raw): ")[1]) == trace.model_dump()


def test_readable_drops_system_labels_roles_and_hides_arguments() -> None:
    trace = ToolTrace(name="read", arguments={"secret_arg": 1}, result={"summary": "12 lines"})
    text = render_readable(
        [
            msg("system", "sys prompt"),
            msg("user", "  open the file  "),
            msg("assistant", "done", trace),
            msg("tool", '{"name": "read", "arguments": {}, "result": "ok"}'),
            msg("tool", "free text output"),
        ]
    )
    assert text == (
        "User: open the file\n\nAssistant: done\nTool call: read (12 lines)"
        "\n\nTool: Tool call: read (ok)\n\nTool: free text output"
    )
    assert "secret_arg" not in text and "sys prompt" not in text


@pytest.mark.parametrize(
    "piece", ["ok", "OK.", "Thanks!", "thank you", "好的。", "嗯嗯", "收到！", "就这样", "Sure~"]
)
def test_filler_whitelist_matches_after_trailing_punctuation(piece: str) -> None:
    assert is_filler(piece)


@pytest.mark.parametrize("piece", ["ok thanks", "好的方案", "yes please do it", "sure thing"])
def test_non_fillers_are_kept(piece: str) -> None:
    assert not is_filler(piece)


def test_condensed_removes_standalone_fillers_only() -> None:
    text = render_condensed(
        [
            msg("user", "好的。我们明天发布。"),
            msg("assistant", "Thanks!"),
            msg("user", "ok\nPlease ship the build.\nthanks"),
            msg("user", "Thanks, that fixed it."),
        ]
    )
    assert text == (
        "User: 我们明天发布。\n\nUser: Please ship the build.\n\nUser: Thanks, that fixed it."
    )


def test_condensed_dedups_repeated_long_pastes_and_code_block_wide() -> None:
    messages = [
        msg("user", f"Here it is:\n\n{PASTE}"),
        msg("assistant", f"{CODE}\n\nUse this."),
        msg("user", PASTE),
        msg("user", f"again\n\n{CODE}"),
        msg("user", "short repeat"),
        msg("user", "short repeat"),
    ]
    text = render_condensed(messages)
    assert text.count(PASTE) == 1
    assert text.count("def total") == 1
    assert text.count(REPEATED_PASTE_MARKER) == 2
    assert text.count("short repeat") == 2


def test_condensed_reduces_tool_records_to_summaries() -> None:
    trace = ToolTrace(name="run_code", arguments={"code": "x" * 500}, result={"ok": True})
    tool_json = json.dumps(
        {"name": "grep", "arguments": {"pattern": "y" * 300}, "result": "2 hits"}
    )
    text = render_condensed([msg("assistant", "running", trace), msg("tool", tool_json)])
    assert (
        text
        == "Assistant: running\n\nTool call: run_code (completed)\n\nTool: Tool call: grep (2 hits)"
    )


def test_layer_guard_keeps_l3_le_l4_le_l5_in_tokens() -> None:
    transcripts = [
        [msg("user", "好的"), msg("assistant", "嗯")],
        [msg("user", PASTE), msg("user", PASTE), msg("assistant", CODE), msg("user", CODE)],
        [msg("system", "s"), msg("tool", '{"name": "n", "arguments": {}, "result": "r"}')],
        [msg("user", "a"), msg("assistant", "", ToolTrace(name="t", arguments=None, result=None))],
    ]
    for messages in transcripts:
        raw, readable, condensed = layer_texts(messages)
        assert estimate_tokens(condensed) <= estimate_tokens(readable) <= estimate_tokens(raw)


def test_layer_guard_falls_back_to_raw_when_readable_is_longer() -> None:
    # A tool record whose summary line is longer than the tiny raw JSON it replaces.
    messages = [msg("tool", '{"tool":"t","content":{}}')]
    raw, readable, condensed = layer_texts(messages)
    assert readable == raw and condensed == raw


def test_image_marker_shows_a_description_on_one_bounded_line() -> None:
    assert image_marker() == "[image]" == image_marker(" \n ")
    assert image_marker("a photo of\n a sunset") == "[image: a photo of a sunset]"
    long = image_marker("word " * 200)
    assert long.startswith("[image: word") and long.endswith("word]")
    assert len(long) <= len("[image: ]") + IMAGE_DESCRIPTION_CHARS
