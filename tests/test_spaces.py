"""Memory spaces a user can see (issue #14): chat names its space, the memory commands
default to it and take ``--space``, and ``stratagate spaces`` lists them all."""

import json
from pathlib import Path
from typing import Any

import pytest

from stratagate_plugin.cli.common import pick_space
from stratagate_plugin.cli.main import main
from stratagate_plugin.core.errors import InvalidInput, NotFound
from stratagate_plugin.core.profile.spaces import SpaceSummary

AT = "2026-11-30T09:00:00+00:00"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def conversation(path: Path, *said: str, thread: str = "monday") -> Path:
    entries: list[dict[str, Any]] = []
    for text in said:
        entries.append({"thread": thread, "role": "user", "content": text, "at": AT})
        entries.append({"thread": thread, "role": "assistant", "content": "Noted.", "at": AT})
    path.write_text(json.dumps(entries), encoding="utf-8")
    return path


def folder(tmp_path: Path, name: str, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / name
    path.mkdir()
    monkeypatch.chdir(path)
    return path


def profile(tmp_path: Path, settings: str) -> None:
    path = tmp_path / "home" / "profiles" / "default.yml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        f"plugins: [stratagate-memory]\nsettings: {{stratagate-memory: {settings}}}\n",
        encoding="utf-8",
    )


def test_ingest_writes_to_the_space_chat_reads_in_the_same_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    studio = folder(tmp_path, "studio", monkeypatch)
    facts = [f"Note {i}: the kiln is fine." for i in range(6)]
    file = conversation(tmp_path / "c.json", "The spring sale moves to 14 March.", *facts)
    code, out, _ = run(capsys, "ingest", str(file))
    assert code == 0 and f"into sg:project:{studio}, sealed 2 blocks" in out  # 6 + 1 turns
    assert run(capsys, "process")[0] == 0  # the blocks' events made before the question,
    # not raced by chat's own worker (which answered from the raw turn when it lost)
    code, out, err = run(capsys, "chat", "--session", "tue", "--message", "When is the sale?")
    assert code == 0 and "- You said: The spring sale moves to 14 March. [14 March = " in out
    assert f"[memory space 'studio' (sg:project:{studio}): 14 messages in 1 session, " in err
    folder(tmp_path, "elsewhere", monkeypatch)
    code, out, err = run(capsys, "chat", "--message", "When is the sale?")
    assert out == "I can't confirm that from memory.\n"
    assert "'elsewhere'" in err and "empty; 1 other space holds memory" in err


def test_spaces_lists_names_counts_and_the_space_chat_uses_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    studio = folder(tmp_path, "studio", monkeypatch)
    file = conversation(tmp_path / "c.json", "The van is booked for Monday.")
    assert main(["ingest", str(file)]) == 0
    assert main(["ingest", str(file), "--space", "archive"]) == 0
    capsys.readouterr()
    code, out, _ = run(capsys, "spaces")
    assert code == 0 and f"* studio               sg:project:{studio}" in out
    assert "  archive              archive" in out
    assert "2 messages in 1 session, 1 block, 0 events" in out
    code, out, _ = run(capsys, "spaces", "--json")
    rows = {row["name"]: row for row in json.loads(out)}
    assert rows["studio"]["here"] and not rows["archive"]["here"]
    assert (rows["archive"]["messages"], rows["archive"]["blocks"]) == (2, 1)
    folder(tmp_path, "new", monkeypatch)
    code, out, _ = run(capsys, "spaces")
    assert f"* chat here would use sg:project:{tmp_path / 'new'} (empty)" in out


def test_blocks_and_events_default_to_chats_space_and_take_space_by_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    folder(tmp_path, "studio", monkeypatch)
    file = conversation(tmp_path / "c.json", "We decided to move the spring sale to 14 March.")
    assert main(["ingest", str(file), "--space", "sg:project:/home/mara/shop"]) == 0
    assert main(["process"]) == 0
    capsys.readouterr()
    assert run(capsys, "blocks") == (0, "(no blocks yet)\n", "")
    assert run(capsys, "events") == (0, "(no events yet)\n", "")
    code, out, _ = run(capsys, "blocks", "--space", "shop", "--json")
    assert [row["namespace"] for row in json.loads(out)] == ["sg:project:/home/mara/shop"]
    code, out, _ = run(capsys, "events", "--space", "shop")
    assert code == 0 and "Spring sale moved to 14 March" in out
    code, out, _ = run(capsys, "events", "--namespace", "sg:project:/home/mara/shop")
    assert code == 0 and "Spring sale moved" in out  # the option's old name still works


def test_a_reading_command_naming_no_space_is_one_error_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(capsys, "events", "--db", str(tmp_path / "m.db"), "--space", "nope")
    assert code == 2
    assert (
        err == "stratagate: error: no memory space called 'nope' (`stratagate spaces` lists them)\n"
    )


def test_in_session_mode_commands_ask_which_space(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    profile(tmp_path, "{namespace_mode: session}")
    code, _, err = run(capsys, "blocks", "--db", str(tmp_path / "m.db"))
    assert code == 2 and "namespace_mode: session" in err and "--space" in err
    code, out, _ = run(capsys, "spaces", "--db", str(tmp_path / "m.db"))
    assert code == 0 and out == "(no memory spaces yet)\n"


def test_commands_open_the_database_the_profile_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    folder(tmp_path, "studio", monkeypatch)
    profile(tmp_path, f"{{database: {tmp_path / 'own.db'}}}")
    assert main(["ingest", str(conversation(tmp_path / "c.json", "The van is booked."))]) == 0
    assert (tmp_path / "own.db").exists() and not (tmp_path / "home" / "memory.db").exists()


def summary(space: str) -> SpaceSummary:
    return SpaceSummary(space, 1, 2, 0, 1, 0, AT)


SPACES = [summary("sg:project:/a/shop"), summary("sg:project:/b/shop"), summary("sg:global:all")]


@pytest.mark.parametrize(
    ("named", "create", "expected"),
    [
        ("sg:project:/a/shop", False, "sg:project:/a/shop"),
        ("all", False, "sg:global:all"),
        ("brand-new", True, "brand-new"),
    ],
)
def test_a_space_is_named_by_its_namespace_or_its_display_name(
    named: str, create: bool, expected: str
) -> None:
    assert pick_space(named, SPACES, create=create) == expected


def test_an_ambiguous_or_unknown_space_name_is_refused() -> None:
    with pytest.raises(InvalidInput, match="sg:project:/a/shop, sg:project:/b/shop"):
        pick_space("shop", SPACES)
    with pytest.raises(NotFound, match="no memory space called 'nope'"):
        pick_space("nope", SPACES)
