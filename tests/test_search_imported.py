"""``stratagate search`` on an imported memory shows that memory's own words (its span of
the imported file, at most 240 characters) and names the import, never the whole file it
came from nor every other memory of it (issue 27)."""

import json
from pathlib import Path

import pytest

from stratagate_plugin.cli.main import main

MEM0_SAMPLE = Path(__file__).parent / "samples" / "import" / "mem0-get-all.json"
LONG = (
    "Plays tennis on Saturday mornings at the club by the river with her sister, "
    + "and keeps a diary of every match: the score, the weather, what went well, "
    + "what she would change next time, which racket she used and how the knee felt "
    + "afterwards, because her physiotherapist asked her to note it for the spring"
)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def imported(capsys: pytest.CaptureFixture[str], file: Path, db: Path) -> None:
    code, _, err = run(capsys, "import", str(file), "--commit", "--db", str(db), "--space", "me")
    assert code == 0, err


def test_a_hit_on_an_imported_memory_shows_its_own_words(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "m.db"
    imported(capsys, MEM0_SAMPLE, db)
    code, out, err = run(capsys, "search", "vegetarian", "--db", str(db), "--space", "me")
    assert code == 0, err
    assert "Is vegetarian and avoids dairy" in out
    assert "imported from mem0" in out
    for other in ('"results"', '"hash"', "3c90c3cc", "Works as a backend engineer", "Name is Dana"):
        assert other not in out, other  # the file's text and its other memories
    code, out, _ = run(capsys, "search", "vegetarian", "--db", str(db), "--space", "me", "--json")
    [row] = json.loads(out)
    assert row["text"] == "Is vegetarian and avoids dairy"
    assert row["source"]["kind"] == "import" and row["source"]["system"] == "mem0"
    assert [event["title"] for event in row["events"]] == ["Is vegetarian and avoids dairy"]
    assert row["other_events"] == 3


def test_a_long_imported_memory_is_cut_at_240_characters(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    memories = [
        {"id": "m1", "memory": LONG, "created_at": "2025-01-02"},
        {"id": "m2", "memory": "Drinks green tea every afternoon", "created_at": "2025-01-03"},
    ]
    file = tmp_path / "mem0.json"
    file.write_text(json.dumps({"results": memories}), encoding="utf-8")
    db = tmp_path / "m.db"
    imported(capsys, file, db)
    code, out, err = run(capsys, "search", "tennis", "--db", str(db), "--space", "me")
    assert code == 0, err
    [shown] = [line.strip() for line in out.splitlines() if line.strip().startswith("Plays")]
    assert 200 < len(shown) <= 240 and shown.endswith("…")
    assert LONG.startswith(shown[:-1].rstrip())
    assert "green tea" not in out and '"memory"' not in out
