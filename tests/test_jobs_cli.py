"""``stratagate process`` says when failed jobs remain; ``stratagate jobs`` shows, retries them."""

import json
import sqlite3
import sys
from pathlib import Path

import pytest
from test_cli import run, write_messages

DEAD = (
    "UPDATE jobs SET status = 'failed', attempts = 3, next_retry_at = NULL, "
    "last_error = 'ModelRateLimited: 429 slow down\nretry-after: 30' WHERE id = ?"
)


@pytest.fixture
def db(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> str:
    """Two blocks, derived by the offline model: four finished jobs."""
    path = str(tmp_path / "m.db")
    messages = write_messages(tmp_path / "msgs.json", 7)
    assert run(capsys, "ingest", str(messages), "--db", path, "--block-turns", "3")[0] == 0
    assert run(capsys, "process", "--db", path)[0] == 0
    return path


def kill_jobs(db: str, count: int) -> list[str]:
    """The first ``count`` jobs failed with no attempt left, as three rate limits leave them."""
    conn = sqlite3.connect(db)
    ids = [row[0] for row in conn.execute("SELECT id FROM jobs ORDER BY created_at, id")]
    for job_id in ids[:count]:
        conn.execute(DEAD, (job_id,))
    conn.commit()
    conn.close()
    return ids[:count]


def test_process_reports_failed_jobs_left_by_earlier_runs(
    db: str, capsys: pytest.CaptureFixture[str]
) -> None:
    kill_jobs(db, 2)
    code, out, err = run(capsys, "process", "--db", db)
    assert code == 1 and out.startswith("ran 0 jobs: 0 succeeded, 0 skipped, 0 failed")
    assert err.strip() == (
        "2 jobs failed and will not be retried: run 'stratagate jobs --failed' to see why, "
        "'stratagate jobs retry --all' to retry"
    )


def test_process_names_failed_jobs_that_will_be_retried_later(
    db: str, capsys: pytest.CaptureFixture[str]
) -> None:
    kill_jobs(db, 1)
    conn = sqlite3.connect(db)
    conn.execute("UPDATE jobs SET attempts = 1, next_retry_at = '2999-01-01T10:00:00+00:00'")
    conn.commit()
    conn.close()
    code, _out, err = run(capsys, "process", "--db", db)
    assert code == 1
    assert err.strip() == (
        "1 job failed and can be retried from 2999-01-01 10:00:00 UTC: "
        "run 'stratagate process' again"
    )


def test_process_progress_counts_the_due_jobs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = str(tmp_path / "m.db")
    messages = write_messages(tmp_path / "msgs.json", 7)
    run(capsys, "ingest", str(messages), "--db", path, "--block-turns", "3")
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    code, out, err = run(capsys, "process", "--db", path)
    assert code == 0 and "ran 6 jobs" in out  # 3 blocks: ingest seals the tail at the end
    assert err.endswith("\033[K\n") and "\rprocess: 6/6 jobs (100%), " in err


def test_jobs_lists_every_job_or_the_failed_ones(
    db: str, capsys: pytest.CaptureFixture[str]
) -> None:
    [dead] = kill_jobs(db, 1)
    code, out, _ = run(capsys, "jobs", "--db", db)
    lines = out.splitlines()
    assert code == 0 and lines[0].split() == [
        "job",
        "kind",
        "block",
        "status",
        "tries",
        "next",
        "retry",
        "UTC",
        "error",
    ]
    assert len(lines) == 7 and [line.startswith(dead) for line in lines[1:]].count(True) == 1
    code, out, _ = run(capsys, "jobs", "--failed", "--db", db)
    [row] = out.splitlines()[1:]
    assert row.startswith(dead) and row.split()[3:] == [
        "failed",
        "3",
        "never",
        *["ModelRateLimited:", "429", "slow", "down"],  # the error's first line only
    ]
    code, out, _ = run(capsys, "jobs", "--failed", "--json", "--db", db)
    [job] = json.loads(out)
    assert (job["id"], job["status"], job["attempts"], job["kind"]) == (
        dead,
        "failed",
        3,
        "block_summary",
    )


def test_jobs_retry_one_then_all_and_process_runs_them(
    db: str, capsys: pytest.CaptureFixture[str]
) -> None:
    first, second, third = kill_jobs(db, 3)
    code, out, _ = run(capsys, "jobs", "--db", db, "retry", first)
    assert code == 0 and out.strip() == f"{first} queued again; run 'stratagate process' to run it"
    code, out, _ = run(capsys, "jobs", "retry", "--all", "--db", db)
    assert code == 0 and out.startswith("2 jobs queued again")
    conn = sqlite3.connect(db)
    states = conn.execute(
        "SELECT status, attempts FROM jobs WHERE id IN (?, ?, ?)", (first, second, third)
    )
    assert set(states) == {("pending", 0)}
    code, out, err = run(capsys, "process", "--db", db)
    assert code == 0 and out.startswith("ran 3 jobs") and "0 failed" in out
    assert err.startswith("process: 3/3 jobs (100%)") and err.count("\n") == 1
    assert run(capsys, "jobs", "--failed", "--db", db)[1].strip() == "(no failed jobs)"
    assert run(capsys, "jobs", "retry", "--all", "--db", db)[1].strip() == "(no failed jobs)"
    conn.close()


def test_jobs_retry_refuses_unknown_and_unfailed_jobs_in_one_line(
    db: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _out, err = run(capsys, "jobs", "retry", "job_nope", "--db", db)
    assert (code, err) == (2, "stratagate: error: no job with id 'job_nope'\n")
    succeeded = json.loads(run(capsys, "jobs", "--json", "--db", db)[1])[0]["id"]
    code, _out, err = run(capsys, "jobs", "retry", succeeded, "--db", db)
    assert code == 2 and err == (
        f"stratagate: error: job {succeeded} is succeeded; only failed jobs can be retried\n"
    )
    with pytest.raises(SystemExit) as exit_:
        run(capsys, "jobs", "retry", "--db", db)
    assert exit_.value.code == 2
