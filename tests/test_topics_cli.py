"""``stratagate topics`` (the book, ``--json``, ``--retry``) and ``stratagate directory``
(the text exactly as injected, its token estimate on stderr)."""

import asyncio
import json
import sqlite3
from pathlib import Path

import pytest
from topic_data import EN_TURNS, add_events, conversation, new_space

from stratagate_plugin.cli.main import main
from stratagate_plugin.core.memory import StrataGate


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def db(tmp_path: Path) -> str:
    path = tmp_path / "m.db"

    async def build() -> None:
        async with await StrataGate.open(path) as memory:
            await conversation(memory, "talk", EN_TURNS)

    asyncio.run(build())
    return str(path)


def test_topics_prints_chapters_sections_and_events(
    capsys: pytest.CaptureFixture[str], db: str
) -> None:
    code, out, err = run(capsys, "topics", "--db", db, "--space", "talk")
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert lines[0].startswith("1. Caroline  [other, 3 events]  topic_")
    assert any(line.startswith("   1.1 ") and "evt_" in line for line in lines)
    assert any(line.startswith("2. Melanie  [") for line in lines)
    code, out, _ = run(capsys, "topics", "--db", db, "--space", "talk", "--json")
    book = json.loads(out)
    assert [c["title"] for c in book["chapters"]] == ["Caroline", "Melanie"]
    assert book["pending"] == [] and book["fallbackEntries"] == 0
    code, out, _ = run(capsys, "topics", "--db", db, "--space", "talk", "--retry")
    assert code == 0 and out.strip() == "(no failed topic batches)"


def test_directory_prints_the_injected_text_and_its_estimate(
    capsys: pytest.CaptureFixture[str], db: str
) -> None:
    code, out, err = run(capsys, "directory", "--db", db, "--space", "talk")
    assert code == 0
    expected = asyncio.run(_directory(db, "talk"))
    assert out == expected + "\n" and "Caroline" in out
    assert err.strip().startswith("(") and err.strip().endswith("estimated tokens of 400)")
    assert int(err.strip()[1:].split()[0]) <= 400


async def _directory(db: str, space: str) -> str:
    async with await StrataGate.open(db) as memory:
        return await memory.topics.directory(space)


def test_failed_batches_are_listed_and_retried(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "m.db"

    async def build() -> None:
        async with await StrataGate.open(path) as memory:
            await new_space(memory, "s")
            await add_events(memory, "s", 2)
            await memory.topics.process()  # queue + run; then mark the job exhausted

    asyncio.run(build())
    with sqlite3.connect(path) as conn:
        conn.execute("DELETE FROM topic_members")
        conn.execute("DELETE FROM topics")
        conn.execute(
            "UPDATE jobs SET status = 'failed', attempts = 3, next_retry_at = NULL, "
            "last_error = 'InvalidProjection: bad' WHERE kind = 'topic_projection'"
        )
        [batch] = conn.execute("SELECT id FROM topic_batches").fetchone()
        conn.executemany(
            "INSERT INTO topic_queue(event_id, namespace, batch_id, position) "
            "VALUES (?, 's', ?, ?)",
            [("evt_s_0000", batch, 0), ("evt_s_0001", batch, 1)],
        )
    _, out, _ = run(capsys, "topics", "--db", str(path), "--space", "s")
    assert "(no topics yet)" in out and "2 events in no topic yet" in out
    assert "failed batch job_" in out and "evt_s_0000 evt_s_0001 — InvalidProjection: bad" in out
    _, out, _ = run(capsys, "topics", "--db", str(path), "--space", "s", "--retry")
    assert out.startswith("1 topic batch(es) queued again")
    assert run(capsys, "process", "--db", str(path))[0] == 0
    _, out, _ = run(capsys, "topics", "--db", str(path), "--space", "s", "--json")
    book = json.loads(out)
    assert book["pending"] == [] and len(book["chapters"]) == 2
