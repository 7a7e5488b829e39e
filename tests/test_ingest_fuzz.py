"""Whatever an ingest file holds, the parser raises only the project's one-line input errors
and ``stratagate ingest`` ends in success or one ``stratagate: error:`` line (exit 2)."""

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import ingest_documents

from stratagate_plugin.cli.main import main
from stratagate_plugin.core.errors import StrataGateError
from stratagate_plugin.core.importer.message_list import group_turns, parse_message_list


def is_one_line(text: str) -> bool:
    return bool(text) and len(text.splitlines()) == 1


@settings(max_examples=200, deadline=None)
@given(ingest_documents())
def test_the_message_list_parser_raises_only_one_line_input_errors(document: Any) -> None:
    try:
        group_turns(parse_message_list(document))
    except (StrataGateError, ValueError) as error:
        assert is_one_line(str(error)), repr(str(error))


@settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(document=ingest_documents(), escaped=st.booleans())
def test_ingest_of_any_json_ends_in_success_or_one_error_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], document: Any, escaped: bool
) -> None:
    """``escaped=False`` writes lone surrogates as raw (invalid UTF-8) bytes, not ``\\ud800``."""
    file = tmp_path / "any.json"
    file.write_bytes(json.dumps(document, ensure_ascii=escaped).encode("utf-8", "surrogatepass"))
    code = main(["ingest", str(file), "--db", str(tmp_path / "m.db")])
    _out, err = capsys.readouterr()
    lines = err.splitlines()
    assert code in (0, 2) and "Traceback" not in err
    if code == 0:  # a final progress line (none for a file without turns), warnings around it
        progress = [line for line in lines if line.startswith("ingest: ")]
        lines = [line for line in lines if line not in progress]
        assert len(progress) <= 1
    assert all(line.startswith("stratagate: warning: ") for line in lines[: len(lines) - code // 2])
    if code == 2:
        assert lines[-1].startswith(f"stratagate: error: {file}") or lines[-1].startswith(
            f"stratagate: error: cannot read {file}"
        )


def test_a_nul_in_an_ingested_message_is_stored_as_a_replacement_character(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], db_path: Path, plain: sqlite3.Connection
) -> None:
    """PostgreSQL's text cannot hold U+0000: the one text rule replaces it on both backends."""
    file = tmp_path / "nul.json"
    turn = [
        {
            "thread": "t",
            "at": "2026-01-01T09:00:00Z",
            "role": "user",
            "content": "gate\u0000code 4471",
        },
        {"thread": "t", "at": "2026-01-01T09:00:00Z", "role": "assistant", "content": "ok"},
    ]
    file.write_text(json.dumps(turn))
    assert main(["ingest", str(file), "--db", str(db_path)]) == 0, capsys.readouterr().err
    rows = plain.execute("SELECT content FROM messages ORDER BY position")
    assert [row[0] for row in rows] == ["gate\ufffdcode 4471", "ok"]
