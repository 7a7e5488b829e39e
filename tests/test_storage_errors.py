"""A database file that cannot be used is one line naming the file and what to do, exit 2;
``stratagate doctor`` finds damage, rebuilds indexes from the stored rows or restores a
backup."""

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from stratagate_plugin.cli.main import main
from stratagate_plugin.core.errors import StorageError, StrataGateError
from stratagate_plugin.core.store import Database, db

pytestmark = pytest.mark.sqlite_only(
    reason="SQLite database files that cannot be used (unreadable, read-only, damaged), "
    "their backups, and SQLite's busy wait"
)

# What lets root write a file whose mode says read-only, and change that mode.
ROOT_OVERRIDES = "-dac_override,-dac_read_search,-fowner"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def messages_file(folder: Path, turns: int = 30) -> Path:
    entries = []
    for i in range(turns):
        at = f"2026-02-01T10:{i % 60:02d}:00+00:00"
        entries.append({"thread": f"t{i % 3}", "role": "user", "content": f"fact {i}", "at": at})
        entries.append({"thread": f"t{i % 3}", "role": "assistant", "content": "ok", "at": at})
    path = folder / "messages.json"
    path.write_text(json.dumps(entries))
    return path


def damaged_files(folder: Path) -> dict[str, Path]:
    good = folder / "good.db"
    assert main(["ingest", str(messages_file(folder)), "--db", str(good)]) == 0
    garbage = folder / "garbage.db"
    garbage.write_bytes(b"this is not sqlite at all\n" * 10)
    truncated = folder / "truncated.db"
    truncated.write_bytes(good.read_bytes()[:5000])
    directory = folder / "directory.db"
    directory.mkdir()
    return {"garbage": garbage, "truncated": truncated, "directory": directory}


@pytest.mark.parametrize("command", [["blocks"], ["events"], ["process"]])
def test_unusable_files_are_one_line_naming_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: list[str]
) -> None:
    files = damaged_files(tmp_path)
    capsys.readouterr()
    for kind, path in files.items():
        code, _, err = run(capsys, *command, "--db", str(path))
        assert code == 2, kind
        assert err.count("\n") == 1 and str(path) in err and "Traceback" not in err, err
    code, _, err = run(
        capsys, "ingest", str(messages_file(tmp_path)), "--db", str(files["garbage"])
    )
    assert code == 2 and "is not a StrataGate database" in err and "doctor" in err


def test_a_missing_directory_that_cannot_be_made(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    code, _, err = run(capsys, "blocks", "--db", str(blocker / "sub" / "m.db"))
    assert code == 2 and "cannot create" in err and "Traceback" not in err


def _as_unprivileged() -> list[str]:
    """The command prefix that makes root obey file modes. It stays root (uid 0 owns the
    checkout, so the child imports the package wherever the clone sits, even in a mode-700
    folder) but loses the capabilities that let root write a read-only file."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")  # util-linux, in every Debian
    if setpriv is None:
        pytest.skip("root without setpriv cannot drop capabilities here")
    return [setpriv, f"--bounding-set={ROOT_OVERRIDES}", f"--inh-caps={ROOT_OVERRIDES}"]


def test_a_server_url_is_not_opened_as_a_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``Database`` is SQLite's: given a server's URL it would make a file (a folder named
    ``postgresql:``) in the current one. It refuses, without the password."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(StrataGateError) as refused:
        Database("postgresql://mara:secret@db.example.org/memory")
    message = str(refused.value)
    assert "\n" not in message and "secret" not in message
    assert "StrataGate.open" in message and "postgresql://mara:***@db.example.org" in message
    assert list(tmp_path.iterdir()) == []


def test_a_read_only_database_can_be_read_and_a_write_is_one_line(tmp_path: Path) -> None:
    path, file = tmp_path / "memory.db", messages_file(tmp_path)
    assert main(["ingest", str(file), "--db", str(path)]) == 0
    path.chmod(0o444)
    file.chmod(0o444)
    prefix = _as_unprivileged()
    env = {**os.environ, "STRATAGATE_HOME": str(tmp_path)}
    command = [*prefix, sys.executable, "-m", "stratagate_plugin.cli.main"]

    def stratagate(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*command, *argv, "--db", str(path)],
            capture_output=True,
            text=True,
            timeout=60,  # a hang (a worker thread left open) fails here instead of forever
            env=env,
        )

    listing = stratagate("events")
    assert listing.returncode == 0 and "Traceback" not in listing.stderr, listing.stderr
    changed = file.with_name("more.json")
    changed.write_text(file.read_text().replace("fact 1", "fact one"))
    changed.chmod(0o444)
    writing = stratagate("ingest", str(changed))
    assert writing.returncode == 2, writing.stderr
    assert "read-only" in writing.stderr and str(path) in writing.stderr
    assert "Traceback" not in writing.stderr and writing.stderr.count("\n") == 1


async def test_a_failed_open_leaves_no_worker_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(db, "BUSY_TIMEOUT_MS", 50)
    path = tmp_path / "locked.db"
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("PRAGMA journal_mode = WAL")
    holder.execute("BEGIN EXCLUSIVE")
    before = sqlite_workers()
    try:
        with pytest.raises(StorageError, match="locked"):
            await Database(path).open()
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    for _ in range(200):  # the closed connection's thread exits just after close returns
        if sqlite_workers() <= before:
            break
        time.sleep(0.01)
    assert sqlite_workers() <= before  # a hang would keep it alive for good


def sqlite_workers() -> int:
    return sum("_connection_worker_thread" in t.name for t in threading.enumerate())


def corrupt_an_index(path: Path) -> None:
    """Overwrite the cell pointers of the messages table's (non-empty) unique index."""
    raw = sqlite3.connect(path)
    raw.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    size = raw.execute("PRAGMA page_size").fetchone()[0]
    (root,) = raw.execute(
        "SELECT rootpage FROM sqlite_master WHERE name = 'sqlite_autoindex_messages_1'"
    ).fetchone()
    raw.close()
    with path.open("r+b") as file:
        file.seek((root - 1) * size + 8)
        file.write(b"\xff" * 64)


def test_doctor_finds_a_damaged_index_and_rebuilds_it_from_the_rows(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, file = tmp_path / "m.db", messages_file(tmp_path)
    code, out, _ = run(capsys, "ingest", str(file), "--db", str(path), "--block-turns", "4")
    code, out, _ = run(capsys, "blocks", "--db", str(path), "--json")
    blocks = json.loads(out)
    assert len(blocks) == 9  # three threads of ten turns: 4 + 4 + the tail sealed at the end
    code, out, _ = run(capsys, "doctor", "--db", str(path))
    assert code == 0 and "ok (integrity_check)" in out
    corrupt_an_index(path)
    code, out, _ = run(capsys, "doctor", "--db", str(path))
    assert code == 1 and "problem" in out and "--rebuild-indexes" in out and "--restore" in out
    code, out, _ = run(capsys, "doctor", "--db", str(path), "--rebuild-indexes")
    assert code == 0 and "damaged file is kept as" in out and "ok (integrity_check)" in out
    code, out, _ = run(capsys, "ingest", str(file), "--db", str(path))
    assert code == 0 and "recorded 0 turns (30 already present)" in out
    code, out, _ = run(capsys, "blocks", "--db", str(path), "--json")
    assert json.loads(out) == blocks


def test_doctor_restores_the_newest_backup(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, file = tmp_path / "m.db", messages_file(tmp_path)
    assert main(["ingest", str(file), "--db", str(path)]) == 0  # the first open backs it up
    backups = list((tmp_path / "backups").glob("m.*.db"))
    assert len(backups) == 1
    path.write_bytes(b"ruined" * 1000)
    code, _, err = run(capsys, "doctor", "--db", str(path))
    assert code == 1 or "not a database" in err
    code, out, _ = run(capsys, "doctor", "--db", str(path), "--restore")
    assert code == 0 and f"from {backups[0]}" in out and "ok (integrity_check)" in out
    code, out, _ = run(capsys, "blocks", "--db", str(path), "--json")
    assert code == 0 and json.loads(out) is not None


def test_doctor_without_a_backup_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "m.db"
    path.write_bytes(b"x" * 100)
    code, _, err = run(capsys, "doctor", "--db", str(path), "--restore")
    assert code == 2 and "no backup of" in err


def test_the_daily_check_warns_about_a_damaged_file_and_keeps_the_good_backups(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    path, file = tmp_path / "m.db", messages_file(tmp_path)
    run(capsys, "ingest", str(file), "--db", str(path))
    [good] = (tmp_path / "backups").glob("m.*.db")
    good.touch()
    os.utime(good, (good.stat().st_atime, good.stat().st_mtime - 2 * 86400))  # a day old
    corrupt_an_index(path)
    code, _, _ = run(capsys, "blocks", "--db", str(path))
    assert code == 0
    assert "failed its daily integrity check" in caplog.text and "stratagate doctor" in caplog.text
    assert list((tmp_path / "backups").glob("m.*.db")) == [good]


def test_a_command_waits_out_another_processs_long_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """7 parallel ingests of a 5 MB message each hold the lock for seconds; a command run
    by hand waits for them (a chat turn's shorter wait is covered by deferred turns)."""
    monkeypatch.setattr(db, "BUSY_TIMEOUT_MS", 200)  # what the engine waits by default
    path, file = tmp_path / "m.db", messages_file(tmp_path)
    assert main(["blocks", "--db", str(path)]) == 0
    holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN IMMEDIATE")
    release = threading.Timer(1.0, holder.execute, ("ROLLBACK",))  # a long write elsewhere
    release.start()
    try:
        code = main(["ingest", str(file), "--db", str(path)])
    finally:
        release.join()
        holder.close()
    assert code == 0, capsys.readouterr().err
