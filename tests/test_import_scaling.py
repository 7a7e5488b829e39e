"""CLI import analysis grows linearly with the items, a commit of a previewed file reuses
the preview's job, and a run killed mid-analysis leaves a job shown ``abandoned`` that
the next import of the same file resumes (issue 24)."""

import json
import os
import re
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from stratagate_plugin.cli.main import main
from stratagate_plugin.core.importer import decider
from stratagate_plugin.core.store import import_rows

ROOT = Path(__file__).resolve().parents[1]
SPACE = "scale"
WAIT_S = 120.0  # generous: conditions are waited on, never timed


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def listing(path: Path, items: int) -> Path:
    lines = [
        f"- Saved memory {i}: likes kiln glaze {i * 7} in topic {i % 37}" for i in range(items)
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def jobs(db: Path) -> list[tuple[str, str, int, int]]:
    with sqlite3.connect(db) as conn:
        return conn.execute(
            "SELECT id, status, processed, total FROM import_jobs ORDER BY created_at"
        ).fetchall()


def decisions(db: Path, job_id: str) -> list[tuple[int, str]]:
    with sqlite3.connect(db) as conn:
        return conn.execute(
            "SELECT idx, decision_json FROM import_items WHERE job_id = ? AND decision_json "
            "IS NOT NULL ORDER BY idx",
            (job_id,),
        ).fetchall()


@pytest.mark.parametrize("items", [60, 240])
def test_analysis_reads_each_item_a_bounded_number_of_times(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, items: int
) -> None:
    """Work counted, not timed: item rows read and texts fingerprinted per item stay
    constant as the job grows (before, each item re-read the whole job: quadratic)."""
    read, fingerprinted = [0], [0]
    item_rows, fingerprint = import_rows.item_rows, decider.fingerprint

    def counted_rows(raw: sqlite3.Connection, job_id: str) -> list[Any]:
        found = item_rows(raw, job_id)
        read[0] += len(found)
        return found

    def counted_fingerprint(title: str, summary: str) -> str:
        fingerprinted[0] += 1
        return fingerprint(title, summary)

    monkeypatch.setattr(import_rows, "item_rows", counted_rows)
    monkeypatch.setattr(decider, "fingerprint", counted_fingerprint)
    db = tmp_path / "m.db"
    code, out, err = run(
        capsys, "import", str(listing(tmp_path / "l.txt", items)), "--db", str(db), "--space", SPACE
    )
    assert code == 0 and f"ready, {items} items" in out, err
    assert read[0] <= 6 * items
    assert fingerprinted[0] <= 4 * items


def test_a_commit_of_a_previewed_file_reuses_its_job(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    db, facts = tmp_path / "m.db", listing(tmp_path / "l.txt", 30)
    code, out, _ = run(capsys, "import", str(facts), "--db", str(db), "--space", SPACE)
    assert code == 0 and "ready, 30 items" in out
    [(job_id, _, _, _)] = jobs(db)
    analysed = decisions(db, job_id)
    assert len(analysed) == 30

    code, out, err = run(capsys, "import", str(facts), "--db", str(db), "--space", SPACE)
    assert code == 0 and f"reusing the analysis of import {job_id}" in err
    code, out, err = run(
        capsys, "import", str(facts), "--commit", "--db", str(db), "--space", SPACE
    )
    assert code == 0 and "30 events written" in out, err
    assert f"reusing the analysis of import {job_id}" in err
    assert "import: " not in err  # no progress line: nothing was analysed again
    assert jobs(db) == [(job_id, "committed", 30, 30)]
    assert decisions(db, job_id) == analysed


def test_another_format_or_space_gets_a_job_of_its_own(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    db, facts = tmp_path / "m.db", listing(tmp_path / "l.txt", 5)
    assert run(capsys, "import", str(facts), "--db", str(db), "--space", SPACE)[0] == 0
    assert run(capsys, "import", str(facts), "--db", str(db), "--space", "other")[0] == 0
    code, _, err = run(capsys, "import", str(facts), "--db", str(db), "--space", SPACE,
                       "--format", "mem0")  # fmt: skip
    assert len(jobs(db)) == 3 - (code != 0) and "reusing" not in err


def dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_a_job_left_processing_by_a_dead_process_is_abandoned_and_resumed(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    db, facts = tmp_path / "m.db", listing(tmp_path / "l.txt", 20)
    code, out, _ = run(capsys, "import", str(facts), "--db", str(db), "--space", SPACE)
    [(job_id, _, _, _)] = jobs(db)
    first = decisions(db, job_id)[:5]
    owner = f"{socket.gethostname()}:{dead_pid()}:killed"
    with sqlite3.connect(db) as conn:  # as a run killed after five decisions leaves it
        conn.execute(
            "UPDATE import_items SET decision_json = NULL WHERE job_id = ? AND idx >= 5", (job_id,)
        )
        conn.execute(
            "UPDATE import_jobs SET status = 'processing', processed = 5, "
            "payload = json_set(payload, '$.owner', ?) WHERE id = ?",
            (owner, job_id),
        )
    code, out, _ = run(capsys, "imports", "--db", str(db), "--space", SPACE)
    assert code == 0 and re.search(rf"{job_id}\s+abandoned\s+5/20", out), out
    code, out, _ = run(capsys, "imports", "--db", str(db), "--space", SPACE, "--json")
    assert [job["abandoned"] for job in json.loads(out)["jobs"]] == [True]

    code, out, err = run(capsys, "import", str(facts), "--db", str(db), "--space", SPACE)
    assert code == 0 and f"resuming the abandoned import {job_id}" in err
    assert f"import {job_id} into {SPACE}: ready, 20 items" in out
    assert jobs(db) == [(job_id, "ready", 20, 20)]
    assert decisions(db, job_id)[:5] == first


def test_a_killed_cli_import_is_abandoned_then_committed_by_the_next_run(tmp_path: Path) -> None:
    db, facts = tmp_path / "m.db", listing(tmp_path / "l.txt", 2000)
    env = {**os.environ, "STRATAGATE_HOME": str(tmp_path / "home")}
    command = [sys.executable, "-m", "stratagate_plugin.cli.main", "import", str(facts),
               "--db", str(db), "--space", SPACE]  # fmt: skip
    child = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)  # fmt: skip
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline and child.poll() is None:
        if db.exists() and any(row[2] > 0 for row in _quiet_jobs(db)):
            break
        time.sleep(0.05)
    child.send_signal(signal.SIGKILL)
    child.wait()
    [(job_id, status, processed, total)] = jobs(db)
    if status != "processing":
        pytest.skip("the analysis finished before the kill")
    assert 0 < processed < total == 2000
    shown = subprocess.run([*command[:3], "imports", "--db", str(db), "--space", SPACE], cwd=ROOT,
                           env=env, capture_output=True, text=True, timeout=WAIT_S)  # fmt: skip
    assert re.search(rf"{job_id}\s+abandoned\s+{processed}/2000", shown.stdout), shown.stdout
    done = subprocess.run([*command, "--commit"], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=WAIT_S * 3)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert f"resuming the abandoned import {job_id}" in done.stderr
    assert "2000 events written" in done.stdout
    assert jobs(db) == [(job_id, "committed", 2000, 2000)]


def _quiet_jobs(db: Path) -> list[tuple[str, str, int, int]]:
    try:
        return jobs(db)
    except sqlite3.OperationalError:  # the child is still creating the schema
        return []
