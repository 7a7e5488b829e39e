"""A purge read as an attacker would: the raw bytes of every file afterwards (issue 25).

A secret is said in a chat, echoed by the agent in another session, sealed, derived into
events, a graph and topics, copied into a backup; ``stratagate purge --text`` then leaves
no occurrence of its UTF-8 bytes (any case) in ``memory.db``, its ``-wal`` and ``-shm``,
any backup or any session file, while every unrelated message said before and after is
still stored word for word and still found by ``stratagate search``.
"""

import io
import json
import sqlite3
from pathlib import Path

import pytest

from stratagate_plugin.cli.main import main
from stratagate_plugin.core.clock import utc_now
from stratagate_plugin.core.purge.words import Needles
from stratagate_plugin.core.store import health

pytestmark = pytest.mark.sqlite_only(
    reason="the raw bytes of the SQLite file, its WAL and its backups after a purge"
)

SCENARIOS = [
    pytest.param(
        "SUA12345",
        ["My mother lives in Lyon and visits every spring.", "I hate cilantro in my tacos."],
        "My licence plate is SUA12345, please remember it.",
        "What is my licence plate?",
        ["I started learning the cello last week.", "Ravi's cello teacher is Ms Oduya."],
        id="english",
    ),
    pytest.param(
        "沪A12345",
        ["我妈妈住在南京。", "我讨厌香菜。"],
        "记住：我的车牌号是沪A12345。",
        "我的车牌号是多少？",
        ["我上周开始学大提琴。", "我姐姐在上海工作。"],
        id="chinese",
    ),
]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def sealed_chat(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    session: str,
    lines: list[str],
) -> None:
    """An interactive chat of ``lines`` left with /exit, which seals its tail."""
    monkeypatch.setattr("sys.stdin", io.StringIO("".join(f"{x}\n" for x in [*lines, "/exit"])))
    assert run(capsys, "chat", "--session", session)[0] == 0


def hits(path: Path, secret: str) -> int:
    data = path.read_bytes().lower()
    return data.count(secret.lower().encode("utf-8"))


def every_file(home: Path) -> list[Path]:
    db = home / "memory.db"
    files = [db, Path(f"{db}-wal"), Path(f"{db}-shm")]
    files += sorted((home / "backups").glob("*.db")) + sorted((home / "sessions").glob("*"))
    return [f for f in files if f.exists()]


def stored_contents(db: Path) -> list[str]:
    with sqlite3.connect(db) as conn:
        return [row[0] for row in conn.execute("SELECT content FROM messages ORDER BY pk")]


def world(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    before: list[str],
    secret_line: str,
    question: str,
    after: list[str],
) -> Path:
    """The secret said, sealed, derived (events, graph, topics), echoed in another session,
    and copied into a backup."""
    monkeypatch.chdir(tmp_path)
    sealed_chat(capsys, monkeypatch, "a", [*before, secret_line, *after])
    assert run(capsys, "process")[0] == 0
    code, _, _ = run(capsys, "chat", "--session", "b", "--message", question)
    assert code == 0
    home = tmp_path / "home"
    with sqlite3.connect(home / "memory.db") as conn:
        later = utc_now().replace(year=utc_now().year + 1)  # a day's copy made after it
        assert health.backup(conn, home / "memory.db", later) is not None
    return home


@pytest.mark.parametrize(("secret", "before", "secret_line", "question", "after"), SCENARIOS)
def test_a_purged_text_leaves_no_byte_in_any_file_and_nothing_else_is_lost(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    secret: str,
    before: list[str],
    secret_line: str,
    question: str,
    after: list[str],
) -> None:
    home = world(tmp_path, capsys, monkeypatch, before, secret_line, question, after)
    db = home / "memory.db"
    planted = {f.name: hits(f, secret) for f in every_file(home)}
    assert planted["memory.db"] and planted["b.jsonl"] and planted["a.jsonl"], planted
    assert any(n for name, n in planted.items() if name.startswith("memory.2")), planted
    with sqlite3.connect(db) as conn:  # the copies the purge must reach are really there
        # (a licence plate states no graph attribute since issue 26, so no graph fact
        # holds it: test_purge_plan's test_a_purged_place_leaves_the_graph_too checks the graph)
        for table, column in [("events", "title"), ("topics", "overview_json")]:
            found = conn.execute(
                f"SELECT count(*) FROM {table} WHERE {column} LIKE ?", (f"%{secret}%",)
            ).fetchone()[0]
            assert found, (table, column)
    kept = [m for m in stored_contents(db) if secret.lower() not in m.lower()]
    terms = Needles([secret]).index_terms  # the search index's hex form of a one-token secret
    assert all(hits(db, term) for term in terms)

    code, out, err = run(capsys, "purge", "--text", secret, "--yes")
    assert code == 0, err
    assert secret not in out + err and "receipt act_" in out

    left = {str(f): hits(f, secret) for f in every_file(home)}
    left.update({f"{f} {t}": hits(f, t) for f in every_file(home) for t in terms})
    assert not any(left.values()), left
    assert [m for m in stored_contents(db) if "[purged]" not in m] == kept
    for line in [*before, *after]:
        assert line in stored_contents(db)
        code, out, _ = run(capsys, "search", line, "--json", "-n", "20")
        assert line in [hit["text"] for hit in json.loads(out)], line
    code, out, _ = run(capsys, "purge", "--check", "--text", secret)
    assert code == 0 and out.rstrip().endswith(
        "gone: no row, file, backup or session holds the words"
    )
    code, out, _ = run(capsys, "chat", "--session", "c", "--message", question)
    assert secret.lower() not in out.lower()


def test_a_text_found_nowhere_says_so_and_changes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    english = SCENARIOS[0].values
    home = world(tmp_path, capsys, monkeypatch, *english[1:])  # type: ignore[arg-type]
    before = {f: f.read_bytes() for f in every_file(home) if not f.name.endswith(("-wal", "-shm"))}
    code, out, _ = run(capsys, "purge", "--text", "hunter2-never-said", "--yes")
    assert code == 1 and "occur nowhere" in out and "nothing was changed" in out
    for path, data in before.items():
        if path.name == "memory.db":
            with sqlite3.connect(path) as conn:  # the same rows (a checkpoint may move pages)
                assert conn.execute("SELECT count(*) FROM memory_actions").fetchone()[0] == 0
        else:
            assert path.read_bytes() == data, path
