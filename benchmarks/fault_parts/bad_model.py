"""Scenario 3: ``stratagate chat`` and ``stratagate process`` against a misbehaving model.

For each fault of ``bad_server`` (malformed JSON, wrong shapes, 500/503, 429, a reply
slower than the profile's ``timeout_s``, an empty body): one chat turn through a profile
whose ``model`` is that fault's URL (so the memory's own model calls see it too), and one
``process`` over a small database with pending blocks, pointed there by
``STRATAGATE_BASE_URL``/``STRATAGATE_MODEL`` (whose client keeps its default timeout, so
there the hang is a slow failure, retried while the job has attempts left).

Allowed exits are 0, 1 (turn or job failed) and 2 (a reported error); anything else or a
hang is a crash, and "Traceback" on stderr a traceback (an uncaught exception also exits
1, so the traceback column is where it shows). A chat turn is *lost* when its user message
is not in the session file: the promise is that it is kept whatever the model does, so
every turn sent counts as acknowledged. A ``process`` run leaving a job ``running`` or an
unsound file is an integrity error.
"""

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from . import db_checks, procs
from .bad_server import FAULTS, HANG, BadServer
from .inputs import copy_database, write_messages, write_profile
from .results import Row

CHAT_TIMEOUT_S = 1.0  # the profile's timeout_s; the hang fault outlasts it
HANG_S = CHAT_TIMEOUT_S + 0.5
RUN_TIMEOUT = 90.0


@dataclass
class Run:
    """One child run against one fault, and what was wrong afterwards."""

    fault: str
    outcome: procs.Outcome
    problems: list[str] = field(default_factory=list)


def bad_model(
    folder: Path, cycles: int, faults: tuple[str, ...] = FAULTS, workers: int = 2
) -> list[Row]:
    """Rows for chat and process; ``cycles`` passes over ``faults``, ``workers`` at a time."""
    home, project = folder / "home", folder / "project"
    project.mkdir(parents=True)
    template = _pending_database(folder)
    jobs = [(cycle, fault) for cycle in range(cycles) for fault in _slowest_first(faults)]
    with BadServer(HANG_S) as server, ThreadPoolExecutor(max_workers=max(1, workers)) as pool:

        def chat(job: tuple[int, str]) -> Run:
            return _chat_turn(server, home, project, job[1], f"cycle {job[0]}")

        def process(job: tuple[int, str]) -> Run:
            db = copy_database(template, folder / "process" / f"{job[0]}-{job[1]}.db")
            return _process(server, home, db, job[1])

        pending = [(pool.submit(process, job), pool.submit(chat, job)) for job in jobs]
        processes = [p.result() for p, _ in pending]
        chats = [c.result() for _, c in pending]
        requests = dict(server.requests)
    chat_row = tally(Row("bad model: chat", acknowledged=0, lost=0), chats, lost=True)
    chat_row.details["requests"] = requests
    memory = db_checks.problems(home / "memory.db")
    chat_row.add("integrity_errors", bool(memory))
    chat_row.details["memory_db"] = memory
    return [chat_row, tally(Row("bad model: process"), processes, lost=False)]


def tally(row: Row, runs: list[Run], lost: bool) -> Row:
    """Sum the runs into ``row``: exit codes and times of all, excerpts of the bad ones."""
    row.integrity_errors = row.tracebacks = row.crashes = 0
    for run in runs:
        outcome = run.outcome
        row.details.setdefault("exits", {})[run.fault] = outcome.returncode
        row.details.setdefault("seconds", {})[run.fault] = round(outcome.seconds, 2)
        if lost:
            row.add("acknowledged")
            row.add("lost", "not in the session file" in run.problems)
        else:
            row.add("integrity_errors", bool(run.problems))
        for problem in run.problems:
            row.example("problems", {"fault": run.fault, "problem": problem})
        if outcome.traceback:
            row.add("tracebacks")
            row.example("tracebacks", {"fault": run.fault, "stderr": outcome.excerpt()})
        if outcome.crashed():
            row.add("crashes")
            row.example("crashed", {"fault": run.fault, "exit": outcome.returncode,
                                    "stderr": outcome.excerpt(4)})  # fmt: skip
    return row


def _slowest_first(faults: tuple[str, ...]) -> list[str]:
    """The hang first, so the other worker's runs overlap it instead of waiting behind it."""
    return sorted(faults, key=lambda fault: fault != HANG)


def _pending_database(folder: Path) -> Path:
    """Four turns, one sealed block: a summary job waiting for a model (whose retries,
    three attempts, make ``process`` with the hang fault the slowest run)."""
    template = folder / "pending.db"
    file = write_messages(folder / "pending.json", 4, threads=1, tag="pending")
    made = procs.cli("ingest", str(file), "--db", str(template), "--block-turns", "4",
                     env=procs.child_env(folder / "build"), timeout=RUN_TIMEOUT)  # fmt: skip
    if made.returncode != 0:
        raise RuntimeError(f"could not build the pending database: {made.excerpt()}")
    return template


def _chat_turn(server: BadServer, home: Path, cwd: Path, fault: str, tag: str) -> Run:
    profile = write_profile(home, f"fault-{fault}", server.url(fault), CHAT_TIMEOUT_S)
    text = f"{tag} {fault}: please keep in mind that the green teapot is on shelf 4"
    outcome = procs.cli("chat", "--profile", profile, "--message", text,
                        env=procs.child_env(home), timeout=RUN_TIMEOUT, cwd=cwd)  # fmt: skip
    kept = any(text in path.read_text(errors="replace") for path in _sessions(home))
    return Run(fault, outcome, [] if kept else ["not in the session file"])


def _process(server: BadServer, home: Path, db: Path, fault: str) -> Run:
    extra = {
        "STRATAGATE_BASE_URL": server.url(fault),
        "STRATAGATE_MODEL": f"model-{fault}",
        "STRATAGATE_API_KEY": "loopback-needs-no-key",  # the client refuses to send none
    }
    outcome = procs.cli("process", "--db", str(db), env=procs.child_env(home, extra),
                        timeout=RUN_TIMEOUT)  # fmt: skip
    found = db_checks.problems(db)
    running = db_checks.job_statuses(db)["running"]
    return Run(fault, outcome, found + ([f"{running} jobs left running"] if running else []))


def _sessions(home: Path) -> list[Path]:
    return sorted((home / "sessions").glob("*.jsonl"))
