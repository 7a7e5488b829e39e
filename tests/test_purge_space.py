"""``stratagate spaces delete NAME``: a whole space erased from the file, its backups and its
session files, after a plan; another space untouched (issue 25)."""

import io
import json
import sqlite3
from pathlib import Path

import pytest

from stratagate_plugin.cli.main import main
from stratagate_plugin.core.clock import utc_now
from stratagate_plugin.core.store import health

GONE = [
    "My mother lives in Montpellier and visits every spring.",
    "My licence plate is QX7734ZR, please remember it.",
]
KEPT = ["The spring sale moved to 14 March.", "Ravi plays the cello on Sundays."]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def chat_in(
    folder: Path, session: str, lines: list[str], capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    folder.mkdir(parents=True, exist_ok=True)
    monkeypatch.chdir(folder)
    monkeypatch.setattr("sys.stdin", io.StringIO("".join(f"{x}\n" for x in [*lines, "/exit"])))
    assert run(capsys, "chat", "--session", session)[0] == 0
    assert run(capsys, "process")[0] == 0


def hits(home: Path, words: str) -> dict[str, int]:
    files = [
        *home.glob("memory.db*"),
        *(home / "backups").glob("*"),
        *(home / "sessions").glob("*"),
    ]
    return {f.name: f.read_bytes().count(words.encode()) for f in files}


@pytest.mark.sqlite_only(
    reason="every copy is the SQLite file's bytes and its backups' (health.backup of the file)"
)
def test_deleting_a_space_erases_every_copy_of_it_and_keeps_the_other(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    chat_in(tmp_path / "private", "p1", GONE, capsys, monkeypatch)
    chat_in(tmp_path / "work", "w1", KEPT, capsys, monkeypatch)
    home = tmp_path / "home"
    with sqlite3.connect(home / "memory.db") as conn:
        later = utc_now().replace(year=utc_now().year + 1)
        assert health.backup(conn, home / "memory.db", later) is not None
    assert any(hits(home, "QX7734ZR").values())

    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    code, out, err = run(capsys, "spaces", "delete", "private")
    assert code == 2 and "pass --yes" in err and "messages 4" in out and "p1.jsonl" in out
    assert "events 2" in out and "graph_nodes" in out and "topics" in out, out
    assert any(hits(home, "QX7734ZR").values())  # nothing changed yet

    code, out, err = run(capsys, "spaces", "delete", "private", "--yes")
    assert code == 0 and "\ndeleted memory space sg:project:" in out, err
    for words in ("QX7734ZR", "Montpellier"):
        assert not any(hits(home, words).values()), hits(home, words)
    assert (
        not (home / "sessions" / "p1.jsonl").exists() and (home / "sessions" / "w1.jsonl").exists()
    )
    _, listed, _ = run(capsys, "spaces", "--json")
    assert [space["name"] for space in json.loads(listed)] == ["work"]
    with sqlite3.connect(home / "memory.db") as conn:
        stored = [row[0] for row in conn.execute("SELECT content FROM messages")]
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    for line in KEPT:
        assert line in stored
        _, found, _ = run(capsys, "search", line, "--json")
        assert line in [hit["text"] for hit in json.loads(found)]


def test_deleting_a_space_that_does_not_exist_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    chat_in(tmp_path / "work", "w1", KEPT, capsys, monkeypatch)
    code, out, err = run(capsys, "spaces", "delete", "nowhere", "--yes")
    assert code == 2 and out == "" and err.count("\n") == 1 and "no memory space" in err
