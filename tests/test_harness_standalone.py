"""The harness stands alone (it imports nothing of core, ``test_import_layers``): its own
endpoint settings, home, times and text rules, each held alike with the engine's here, so
a profile, a session file and a folded turn read the same on both sides."""

from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from stratagate_plugin.core import clock
from stratagate_plugin.core.blocks.transcript import image_marker as engine_image_marker
from stratagate_plugin.core.llm.endpoint import HttpModelConfig
from stratagate_plugin.core.records import ToolTrace as EngineToolTrace
from stratagate_plugin.core.store.db import stratagate_home
from stratagate_plugin.core.text.clean import valid_json_value
from stratagate_plugin.core.text.clean import valid_text as engine_valid_text
from stratagate_plugin.harness import clock as harness_clock
from stratagate_plugin.harness.endpoint import ChatEndpoint
from stratagate_plugin.harness.home import harness_home
from stratagate_plugin.harness.text import image_marker, valid_json, valid_text
from stratagate_plugin.harness.types import ToolTrace

TEXTS = [
    "plain",
    "caf\u00e9 \u5496\u5561",
    "lone \ud800 surrogate",
    "a nul \x00 here",
    "  many\n\tspaces  ",
    "x" * 400,
]


def accepted(schema: dict[str, Any]) -> tuple[Any, ...]:
    return schema["properties"], schema["required"], schema.get("additionalProperties")


def test_the_chat_endpoint_takes_the_settings_the_engine_client_takes() -> None:
    assert accepted(ChatEndpoint.model_json_schema()) == accepted(
        HttpModelConfig.model_json_schema()
    )
    pasted = {"base_url": " http://h/v1/chat/completions/ ", "model": "m", "timeout_s": 5}
    assert ChatEndpoint(**pasted).model_dump() == HttpModelConfig(**pasted).model_dump()


def test_the_home_is_the_engine_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    assert harness_home() == stratagate_home() == tmp_path / "home"
    monkeypatch.delenv("STRATAGATE_HOME")
    assert harness_home() == stratagate_home() == Path.home() / ".stratagate"


@pytest.mark.parametrize("text", TEXTS)
def test_text_rules_are_the_engine_rules(text: str) -> None:
    assert valid_text(text) == engine_valid_text(text)
    assert image_marker(text) == engine_image_marker(text)
    value = {text: [text, 1, None, {"k": text}]}
    assert valid_json(value) == valid_json_value(value)


def test_a_tool_trace_reads_the_same_on_both_sides() -> None:
    trace = ToolTrace(name="read\ud800", arguments={"path\ud800": "a"}, result=["ok\udfff"])
    assert EngineToolTrace(**trace.model_dump()) == EngineToolTrace(
        name="read\ud800", arguments={"path\ud800": "a"}, result=["ok\udfff"]
    )
    assert trace.model_dump() == EngineToolTrace(**trace.model_dump()).model_dump()


@pytest.mark.parametrize(
    "moment",
    [
        datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC),
        datetime(2026, 1, 2, 3, 4, 5, 6, tzinfo=timezone(timedelta(hours=8))),
        datetime(2026, 1, 2, 3, 4, 5),
    ],
)
def test_times_are_written_and_read_as_the_engine_does(moment: datetime) -> None:
    written = harness_clock.iso(moment)
    assert written == clock.iso(moment)
    assert harness_clock.parse_iso(written) == clock.parse_iso(written)
    assert harness_clock.parse_iso(written.replace("+00:00", "Z")) == clock.parse_iso(written)
