"""The progress line of long commands: rate and ETA from an injected clock, where it is
written (stderr only, redrawn on a terminal, logged elsewhere), and each command's last line."""

import io
import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from stratagate_plugin.cli.main import main
from stratagate_plugin.cli.progress import Progress, progress_line


@pytest.mark.parametrize(
    ("done", "total", "elapsed", "final", "line"),
    [
        (0, 500, 0.0, False, "ingest: 0/500 turns (0%), ETA --:--"),
        (120, 500, 3.2, False, "ingest: 120/500 turns (24%), 37.5/s, ETA 0:10"),
        (500, 500, 12.1, True, "ingest: 500/500 turns (100%), 41.3/s, took 0:12"),
        (1, 10_000, 2.0, False, "ingest: 1/10000 turns (0%), 0.50/s, ETA 5:33:18"),
        (1000, 3000, 2.0, False, "ingest: 1000/3000 turns (33%), 500/s, ETA 0:04"),
        (7, 4, 1.0, True, "ingest: 7/7 turns (100%), 7.00/s, took 0:01"),  # total grew
        (0, 0, 0.6, True, "ingest: 0/0 turns, took 0:01"),
    ],
)
def test_progress_line_rate_and_eta(
    done: int, total: int, elapsed: float, final: bool, line: str
) -> None:
    assert progress_line("ingest", "turns", done, total, elapsed, final) == line


@dataclass
class Clock:
    now: float = 100.0

    def __call__(self) -> float:
        return self.now


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_on_a_terminal_the_line_is_redrawn_at_most_ten_times_a_second() -> None:
    clock, stream = Clock(), Terminal()
    progress = Progress("process", "jobs", 4, stream=stream, clock=clock)
    clock.now += 0.06
    progress.advance(note="block_summary")
    assert stream.getvalue() == ""  # too soon after the start
    clock.now += 0.06
    progress.advance(note="event_extraction")
    assert (
        stream.getvalue() == "\rprocess: 2/4 jobs (50%), 16.7/s, ETA 0:00  event_extraction\033[K"
    )
    clock.now += 0.06
    progress.advance()
    assert stream.getvalue().count("\r") == 1
    clock.now += 0.3
    progress.advance()
    progress.close()
    assert stream.getvalue().endswith("\rprocess: 4/4 jobs (100%), 8.33/s, took 0:00\033[K\n")


def test_elsewhere_a_line_every_n_items_and_a_final_one() -> None:
    clock, stream = Clock(), io.StringIO()
    with Progress("ingest", "turns", 5, stream=stream, clock=clock, every=2) as progress:
        for _ in range(5):
            clock.now += 1.0
            progress.advance(note="not shown off a terminal")
    assert stream.getvalue().splitlines() == [
        "ingest: 2/5 turns (40%), 1.00/s, ETA 0:03",
        "ingest: 4/5 turns (80%), 1.00/s, ETA 0:01",
        "ingest: 5/5 turns (100%), 1.00/s, took 0:05",
    ]


def test_a_failed_run_leaves_no_final_line_and_ends_a_drawn_one() -> None:
    for stream, expected in ((io.StringIO(), ""), (Terminal(), "\n")):
        clock = Clock()
        with (
            pytest.raises(RuntimeError),
            Progress("x", "items", 3, stream=stream, clock=clock) as p,
        ):
            clock.now += 1.0
            p.advance()
            raise RuntimeError("stopped")
        assert stream.getvalue().endswith(expected)
        assert "took" not in stream.getvalue()


def test_nothing_to_do_writes_nothing() -> None:
    stream = io.StringIO()
    with Progress("process", "jobs", 0, stream=stream):
        pass
    assert stream.getvalue() == ""


def test_a_total_counted_high_is_settled_when_the_run_completes() -> None:
    clock, stream = Clock(), io.StringIO()
    with Progress("process", "jobs", 4, stream=stream, clock=clock) as progress:
        progress.advance()
        progress.complete()
    assert stream.getvalue().startswith("process: 1/1 jobs (100%)")


def messages_file(path: Path, turns: int) -> Path:
    at = "2025-01-01T10:00:00+00:00"
    entries = [
        {"thread": "t", "role": role, "content": f"{role} says {i}", "at": at}
        for i in range(turns)
        for role in ("user", "assistant")
    ]
    path.write_text(json.dumps(entries))
    return path


def test_ingest_and_process_end_with_a_progress_line_on_stderr(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db, file = str(tmp_path / "m.db"), messages_file(tmp_path / "m.json", 7)
    assert main(["ingest", str(file), "--db", db, "--block-turns", "3"]) == 0
    out, err = capsys.readouterr()
    assert err.splitlines()[-1].startswith("ingest: 7/7 turns (100%), ")
    assert "took" in err and "%)" not in out
    assert main(["process", "--db", db]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("ran 6 jobs") and err.splitlines()[-1].startswith(  # the tail too
        "process: 6/6 jobs (100%), "
    )
