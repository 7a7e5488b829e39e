"""Import and ingest read a bounded number of bytes: ``/dev/zero`` and a FIFO with no writer
are refused in one line (exit 2) instead of growing memory or waiting forever; a stream
comes through stdin (``-``), capped the same way (issue 24)."""

import io
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from stratagate_plugin.core.errors import InvalidInput
from stratagate_plugin.core.importer.external_format import MAX_BYTES

ROOT = Path(__file__).resolve().parents[1]
LIMIT_S = 120  # a generous bound: the refusals are immediate, the bug was "never"
pytestmark = pytest.mark.skipif(not Path("/dev/zero").exists(), reason="needs /dev/zero")


def cli(tmp_path: Path, *argv: str, stdin: Path | None = None) -> subprocess.CompletedProcess[str]:
    """``stratagate ARGV`` in a child, so a read that never ends fails the test, not the run."""
    env = {**os.environ, "STRATAGATE_HOME": str(tmp_path / "home")}
    command = [sys.executable, "-m", "stratagate_plugin.cli.main", *argv]
    with (stdin or Path(os.devnull)).open("rb") as source:
        return subprocess.run(command, cwd=ROOT, env=env, stdin=source, capture_output=True,
                              text=True, timeout=LIMIT_S)  # fmt: skip


def job_count(tmp_path: Path) -> int:
    database = tmp_path / "m.db"
    if not database.exists():
        return 0
    with sqlite3.connect(database) as conn:
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}
        return conn.execute("SELECT count(*) FROM import_jobs").fetchone()[0] if (
            "import_jobs" in tables) else 0  # fmt: skip


def one_error(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    return done.stderr


@pytest.mark.parametrize("command", ["import", "ingest"])
def test_dev_zero_is_refused_as_not_a_regular_file(tmp_path: Path, command: str) -> None:
    done = cli(tmp_path, command, "/dev/zero", "--db", str(tmp_path / "m.db"))
    assert "cannot read /dev/zero: not a regular file" in one_error(done)
    assert job_count(tmp_path) == 0


@pytest.mark.parametrize("command", ["import", "ingest"])
def test_a_fifo_without_a_writer_is_refused_not_waited_on(tmp_path: Path, command: str) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    done = cli(tmp_path, command, str(fifo), "--db", str(tmp_path / "m.db"))
    assert f"cannot read {fifo}: not a regular file" in one_error(done)


def test_import_from_stdin_is_read_and_capped(tmp_path: Path) -> None:
    listing = tmp_path / "list.txt"
    listing.write_text("- likes kiln glaze\n- fires at cone 6\n", encoding="utf-8")
    read = cli(tmp_path, "import", "-", "--db", str(tmp_path / "m.db"), stdin=listing)
    assert read.returncode == 0, read.stderr
    assert "2 items" in read.stdout and "likes kiln glaze" in read.stdout
    endless = cli(tmp_path, "import", "-", "--db", str(tmp_path / "m.db"), stdin=Path("/dev/zero"))
    assert "stdin is larger than 4 MB" in one_error(endless)
    assert job_count(tmp_path) == 1  # the first import's job only


def test_ingest_from_stdin_of_dev_zero_stops_at_its_cap(tmp_path: Path) -> None:
    done = cli(tmp_path, "ingest", "-", "--db", str(tmp_path / "m.db"), stdin=Path("/dev/zero"))
    assert "stdin is larger than 64 MB" in one_error(done)


def test_the_read_stops_one_byte_past_the_cap(tmp_path: Path) -> None:
    from stratagate_plugin.core.importer.input_file import read_capped

    big = tmp_path / "big.json"
    big.write_bytes(b" " * (MAX_BYTES + 10))
    with pytest.raises(InvalidInput, match="is larger than 4 MB"):
        read_capped(big, MAX_BYTES)
    stream = io.BytesIO(b"x" * 5000)
    with pytest.raises(InvalidInput, match="stdin is larger than 1,000 bytes"):
        read_capped("-", 1000, stream)
    assert stream.tell() == 1001


def test_ingest_reads_a_message_list_from_stdin(tmp_path: Path) -> None:
    messages = tmp_path / "messages.json"
    turn = {"thread": "t", "role": "user", "content": "the kiln fires at 1240 C"}
    messages.write_text(json.dumps([{**turn, "at": "2025-01-01T10:00:00Z"}]), encoding="utf-8")
    done = cli(tmp_path, "ingest", "-", "--db", str(tmp_path / "m.db"), stdin=messages)
    assert done.returncode == 0 and "recorded 1 turns" in done.stdout, done.stderr
    broken = tmp_path / "broken.json"
    broken.write_text("not json", encoding="utf-8")
    refused = cli(tmp_path, "ingest", "-", "--db", str(tmp_path / "m.db"), stdin=broken)
    assert one_error(refused).startswith("stratagate: error: stdin is not valid JSON")
