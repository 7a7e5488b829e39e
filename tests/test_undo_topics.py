"""Undoing an import takes its events out of topic chapters in the same transaction: the
topics page, ``stratagate topics`` and the agent's directory name none of them before the
next ``process`` (issue 24: a chapter listed 40 of 40 deleted events until then)."""

import json
import re
import sqlite3
from pathlib import Path

import pytest
from topic_data import EN_TURNS, conversation

from stratagate_plugin.cli.main import main
from stratagate_plugin.core.memory import StrataGate

SPACE = "undo-space"
TOPICS = [("kiln glaze", "glaze"), ("garden roses", "roses"), ("bike repairs", "bike")]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def forty_memories(path: Path) -> Path:
    lines = [
        f"- The user likes {name} number {i}; {word} {i} matters to them"
        for i in range(40)
        for name, word in [TOPICS[i % len(TOPICS)]]
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def committed(capsys: pytest.CaptureFixture[str], db: str, tmp_path: Path) -> str:
    listing = forty_memories(tmp_path / "memories.txt")
    code, out, err = run(capsys, "import", str(listing), "--commit", "--db", db, "--space", SPACE)
    assert code == 0, err
    batch = re.search(r"committed batch (\S+): 40 events written", out)
    assert batch is not None, out
    return batch.group(1)


def chapter_event_ids(capsys: pytest.CaptureFixture[str], db: str) -> set[str]:
    code, out, err = run(capsys, "topics", "--db", db, "--space", SPACE, "--json")
    assert code == 0, err
    return set(re.findall(r"evt_[A-Za-z0-9_]+", out))


def test_undo_leaves_no_chapter_listing_the_batch(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    db = str(tmp_path / "m.db")
    batch = committed(capsys, db, tmp_path)
    assert run(capsys, "process", "--db", db)[0] == 0
    events = sqlite3.connect(db).execute("SELECT id FROM events").fetchall()
    imported = {row[0] for row in events}
    assert len(imported) == 40 and chapter_event_ids(capsys, db) == imported
    code, before, _ = run(capsys, "directory", "--db", db, "--space", SPACE)
    chapters = set(re.findall(r"topic_[A-Za-z0-9]+", before))
    assert code == 0 and chapters

    code, out, err = run(capsys, "import", "--undo", batch, "--db", db)
    assert code == 0 and "40 events removed" in out, err

    assert chapter_event_ids(capsys, db) == set()
    code, out, _ = run(capsys, "topics", "--db", db, "--space", SPACE, "--json")
    assert json.loads(out)["chapters"] == []
    code, after, _ = run(capsys, "directory", "--db", db, "--space", SPACE)
    assert code == 0 and not chapters & set(re.findall(r"topic_[A-Za-z0-9]+", after))
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT count(*) FROM topic_members").fetchone()[0] == 0
        assert conn.execute("SELECT count(*) FROM topics").fetchone()[0] == 0


async def test_a_chapter_shared_with_other_events_keeps_them_and_is_rebuilt(
    tmp_path: Path,
) -> None:
    async with await StrataGate.open(tmp_path / "m.db") as memory:
        await conversation(memory, SPACE, EN_TURNS)
        kept = {card.id for card in await memory.events.cards(SPACE)}
        held = await memory.topics.catalog(SPACE)
        assert kept and held["topics"]
        job = await memory.imports.preview(
            SPACE, "- Caroline likes kiln glaze\n- Melanie rides bikes"
        )
        job = await memory.imports.advance(job.id)
        batch = await memory.imports.commit(job.id, take_proposals=True)
        await memory.derivation.process_pending()
        undone = await memory.imports.undo(batch.id)
        gone = set(undone.removed_event_ids)
        assert gone
        with sqlite3.connect(tmp_path / "m.db") as conn:
            members = {row[0] for row in conn.execute("SELECT event_id FROM topic_members")}
        assert not members & gone and members <= kept
        book = json.dumps(await memory.topics.catalog(SPACE))
        assert not any(event_id in book for event_id in gone)
        await memory.derivation.process_pending()
        rebuilt = await memory.topics.catalog(SPACE)
        assert rebuilt["topics"] and not any(e in json.dumps(rebuilt) for e in gone)
