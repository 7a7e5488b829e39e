"""``stratagate ingest``: re-running a corrected file records only what is new, and bad input
ends as one line on stderr (exit 2) naming the file, never a traceback."""

import asyncio
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from stratagate_plugin.cli.main import main
from stratagate_plugin.core.blocks.service import BlocksService
from stratagate_plugin.core.memory import StrataGate
from stratagate_plugin.core.records import Message

AT = "2025-01-01T10:00:00+00:00"


def entry(role: str, content: Any, thread: str = "s1", at: Any = AT, **extra: Any) -> Any:
    return {"thread": thread, "role": role, "content": content, "at": at, **extra}


def conversation(*pairs: tuple[str, str], thread: str = "s1") -> list[Any]:
    return [e for q, a in pairs for e in (entry("user", q, thread), entry("assistant", a, thread))]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def ingest(capsys: pytest.CaptureFixture[str], file: Path, entries: Any, *more: str) -> str:
    """Write ``entries`` to ``file``, ingest it into the database beside it (space
    ``default``); stdout + stderr."""
    file.write_text(json.dumps(entries), encoding="utf-8")
    db = str(file.with_suffix(".db"))
    code, out, err = run(capsys, "ingest", str(file), "--db", db, "--space", "default", *more)
    assert code == 0, err
    return out + err


def stored(db: Path, space: str = "default") -> list[Message]:
    """Every message of the namespace through the façade: sealed blocks, then open tails.

    The tests are synchronous because ``main`` runs its own event loop.
    """
    return asyncio.run(_stored(db, space))


async def _stored(db: Path, space: str) -> list[Message]:
    async with await StrataGate.open(db) as memory:
        blocks = await memory.blocks.views(space)
        found = [m for view in blocks for m in await memory.blocks.messages(view.block.id)]
        for thread in sorted({view.block.thread_id for view in blocks} | {"s1", "s2", "s\ufffd1"}):
            found += await memory.blocks.open_tail(space, thread)
    return found


PAIRS = [(f"question {i}", f"answer {i}") for i in range(6)]


def test_reingest_after_editing_one_message_records_one_new_turn(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    file = tmp_path / "chat.json"
    assert "recorded 6 turns" in ingest(capsys, file, conversation(*PAIRS))
    edited = conversation(*PAIRS)
    edited[5]["content"] = "answer 2, corrected"
    assert "recorded 1 turns (5 already present)" in ingest(capsys, file, edited)
    contents = [m.content for m in stored(file.with_suffix(".db"))]
    assert len(contents) == 14 and len(set(contents)) == 13  # only the new turn was added
    assert contents.count("question 3") == 1 and "answer 2, corrected" in contents


def test_reingest_after_turns_were_added_and_removed_elsewhere(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    file = tmp_path / "chat.json"
    ingest(capsys, file, conversation(*PAIRS))
    changed = conversation(("a new first question", "new"), *PAIRS[:2], *PAIRS[3:])
    assert "recorded 1 turns (5 already present)" in ingest(capsys, file, changed)
    contents = [m.content for m in stored(file.with_suffix(".db"))]
    assert sorted(set(contents)) == sorted(contents)


def test_identical_turns_are_each_recorded_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    file = tmp_path / "chat.json"
    assert "recorded 3 turns" in ingest(
        capsys, file, conversation(("ok", "fine"), ("ok", "fine"), ("ok", "fine"))
    )
    again = conversation(("hello", "hi"), ("ok", "fine"), ("ok", "fine"), ("ok", "fine"))
    assert "recorded 1 turns (3 already present)" in ingest(capsys, file, again)
    contents = [m.content for m in stored(file.with_suffix(".db"))]
    assert contents.count("ok") == 3 and contents.count("hello") == 1


def test_the_same_turn_in_two_threads_is_recorded_in_both(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    file = tmp_path / "chat.json"
    assert "recorded 1 turns" in ingest(capsys, file, conversation(("ok", "fine")))
    both = conversation(("ok", "fine"), thread="s2") + conversation(("ok", "fine"))
    assert "recorded 1 turns (1 already present)" in ingest(capsys, file, both)
    assert [m.thread_id for m in stored(file.with_suffix(".db"))] == ["s1"] * 2 + ["s2"] * 2


def test_a_changed_time_alone_is_not_a_new_turn(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    file = tmp_path / "chat.json"
    ingest(capsys, file, conversation(*PAIRS[:2]))
    moved = [{**e, "at": "2025-01-01T12:00:00+00:00"} for e in conversation(*PAIRS[:2])]
    output = ingest(capsys, file, moved)
    assert "recorded 0 turns (2 already present)" in output
    assert f"warning: {file}: 2 turns were recorded before with another time" in output
    assert len(stored(file.with_suffix(".db"))) == 4


def test_a_database_error_midway_says_how_many_turns_were_recorded(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    file, db = tmp_path / "chat.json", str(tmp_path / "chat.db")
    file.write_text(json.dumps(conversation(*PAIRS)), encoding="utf-8")
    real, calls = BlocksService.record_turn, []

    async def failing(self: BlocksService, *args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        if len(calls) == 4:
            raise sqlite3.OperationalError("disk I/O error")
        return await real(self, *args, **kwargs)

    monkeypatch.setattr(BlocksService, "record_turn", failing)
    code, _out, err = run(capsys, "ingest", str(file), "--db", db)
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err
    assert "chat.json" in err and "disk I/O error" in err
    assert "3 turns recorded before the error" in err and "recorded turns are skipped" in err
    monkeypatch.setattr(BlocksService, "record_turn", real)
    code, out, _ = run(capsys, "ingest", str(file), "--db", db)
    assert code == 0 and "recorded 3 turns (3 already present)" in out


def test_an_invalid_entry_midway_is_found_before_anything_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    file, db = tmp_path / "chat.json", tmp_path / "chat.db"
    entries = conversation(*PAIRS)
    entries[7]["role"] = "robot"
    file.write_text(json.dumps(entries), encoding="utf-8")
    code, _out, err = run(capsys, "ingest", str(file), "--db", str(db))
    assert code == 2 and err.count("\n") == 1
    assert "chat.json: message 7: role:" in err and "nothing was recorded" in err
    assert not db.exists()


def write_bytes(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


ONE = '[{"thread": "t", "role": "user", "content": "hi", "at": %s}]'


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("[" * 100_000 + "]" * 100_000, "nested deeper than"),
        ("", "is empty"),
        ("[]", "no messages"),
        ('{"thread": "t"}', "must hold a JSON list"),
        ("[1, 2]", "message 0: must be a JSON object"),
        (ONE % "5", "message 0: at: must be an ISO-8601 string"),
        (ONE % "null", "message 0: at: must be an ISO-8601 string"),
        (ONE % '"yesterday"', "message 0: at: "),
        (
            ONE.replace('"hi"', "5") % f'"{AT}"',
            "message 0: content: Input should be a valid string",
        ),
        (ONE.replace('"hi"', "[1]") % f'"{AT}"', "message 0: content: Input should be a valid"),
        (ONE.replace('"hi"', "null") % f'"{AT}"', "message 0: content: Input should be a valid"),
        (ONE.replace('"user"', '"robot"') % f'"{AT}"', "message 0: role: Input should be"),
        (ONE.replace('"t"', '" "') % f'"{AT}"', "message 0: thread: must be a non-empty string"),
        ("[" + "1" * 5000 + "]", "is not valid JSON"),
    ],
)
def test_bad_ingest_files_name_the_file_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, message: str
) -> None:
    file = tmp_path / "bad.json"
    file.write_text(content, encoding="utf-8")
    code, _out, err = run(capsys, "ingest", str(file), "--db", str(tmp_path / "m.db"))
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith(f"stratagate: error: {file}") and message in err


@pytest.mark.parametrize("name", ["a-directory", "missing.json"])
def test_an_unreadable_ingest_file_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    (tmp_path / "a-directory").mkdir()
    code, _out, err = run(capsys, "ingest", str(tmp_path / name), "--db", str(tmp_path / "m.db"))
    assert code == 2 and err.count("\n") == 1
    assert err.startswith(f"stratagate: error: cannot read {tmp_path / name}: ")


def test_invalid_utf8_is_replaced_with_a_warning_naming_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    body = (ONE % f'"{AT}"').replace("hi", "caf\xe9 \xff").encode("latin-1")
    file = write_bytes(tmp_path / "latin.json", body)
    code, out, err = run(capsys, "ingest", str(file), "--db", str(tmp_path / "m.db"))
    assert code == 0 and "recorded 1 turns" in out
    warning, progress = err.splitlines()
    assert warning == f"stratagate: warning: {file}: 2 bytes of invalid UTF-8 replaced with U+FFFD"
    assert progress.startswith("ingest: 1/1 turns (100%)")


def test_lone_surrogate_escapes_are_stored_as_replacement_characters(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    file = tmp_path / "chat.json"
    out = ingest(capsys, file, [entry("user", "a\ud800b", thread="s\udfff1")])
    assert "recorded 1 turns" in out
    [message] = stored(file.with_suffix(".db"))
    assert (message.thread_id, message.content) == ("s\ufffd1", "a\ufffdb")


@pytest.mark.parametrize(
    ("at", "stored_at"),
    [
        ("9999-12-31T23:59:59+00:00", "9999-12-31T23:59:59+00:00"),
        ("0001-01-01T00:00:00+00:00", "0001-01-01T00:00:00+00:00"),
        ("9999-12-31T23:00:00-05:00", "9999-12-31T23:59:59.999999+00:00"),
        ("0001-01-01T01:00:00+05:00", "0001-01-01T00:00:00+00:00"),
    ],
)
def test_times_at_the_calendar_edge_are_stored(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], at: str, stored_at: str
) -> None:
    file = tmp_path / "edge.json"
    entries = [
        entry("user", "Yesterday I met Anna in Paris. Tomorrow I will meet Bo in Rome.", at=at)
    ] * 3
    output = ingest(capsys, file, entries, "--block-turns", "3")
    assert "recorded 3 turns" in output and "sealed 1 blocks" in output
    clamped = (
        f"stratagate: warning: {file}: 3 times lie outside the years 1-9999 in UTC "
        "(first: message 0) and were stored as the nearest time in range\n"
    )
    assert (clamped in output) == (stored_at[:19] != at[:19])
    code, out, err = run(capsys, "process", "--db", str(file.with_suffix(".db")))
    assert code == 0 and " 0 failed" in out, err
    messages = stored(file.with_suffix(".db"))
    assert {m.created_at.isoformat() for m in messages} == {stored_at}
