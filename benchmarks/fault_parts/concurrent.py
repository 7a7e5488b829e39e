"""Scenario 2: three writers on one database for a while, as a user's machine would run them.

* chat: ``stratagate chat --session S --message …`` again and again (offline agent, memory
  plugin on), alternating sessions; statements and questions with unique text.
* ingest: small files, six turns each in a thread of their own.
* process and reads: ``process``, ``blocks --json``, ``events --json`` in turn.

A chat turn is acknowledged when the child exits 0; with a "could not record" warning it is
*deferred*: kept in the session file, to be recorded at the session's next turn or start,
so one more ``chat --session S --message final`` per session runs at the end before
counting. An ingest file is acknowledged (all its turns) when ``ingest`` exits 0. Then every
acknowledged turn must be in the file exactly once, the file sound, no event card derived
twice; exits other than 0/1/2 (or a hang) are crashes, "Traceback" on any stderr a
traceback. Refusals (exit 1 or 2, e.g. the file stayed locked) are listed, not counted.
"""

import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from . import db_checks, procs
from .inputs import file_message_counts, write_messages
from .results import Row

RUN_TIMEOUT = 120.0
DEFERRED = "could not record"
Key = tuple[str, str, str]


@dataclass
class Writer:
    """One writer's runs: each child's outcome, and the messages it acknowledged."""

    name: str
    outcomes: list[procs.Outcome] = field(default_factory=list)
    acknowledged: list[Key] = field(default_factory=list)
    deferred: int = 0


def concurrent_writers(folder: Path, seconds: float, sessions: int = 2) -> Row:
    home, project = folder / "home", folder / "project"
    project.mkdir(parents=True)
    env = procs.child_env(home)
    procs.cli("plugin", "list", env=env, timeout=RUN_TIMEOUT)  # creates the default profile
    deadline = time.monotonic() + seconds
    chat, ingest, reader = Writer("chat"), Writer("ingest"), Writer("process+reads")
    loops: list[Callable[[], None]] = [
        lambda: _chat_loop(chat, env, project, sessions, deadline),
        lambda: _ingest_loop(ingest, env, folder / "files", deadline),
        lambda: _reader_loop(reader, env, deadline),
    ]
    with ThreadPoolExecutor(max_workers=3) as pool:
        for future in [pool.submit(loop) for loop in loops]:
            future.result()
    final = Writer("final turns")
    for index in range(sessions):
        _chat(final, env, project, f"s{index}", f"final {index}: that is all for now")
    return _checked(home / "memory.db", [chat, ingest, reader, final], seconds)


def _chat_loop(writer: Writer, env: dict[str, str], cwd: Path, sessions: int, until: float) -> None:
    index = 0
    while time.monotonic() < until:
        if index % 4 == 3:
            text = f"chat {index}: what did I say about the kiln in room {index - 1}?"
        else:
            text = f"chat {index}: the kiln in room {index} fires at {index % 12 + 1} o'clock"
        _chat(writer, env, cwd, f"s{index % sessions}", text)
        index += 1


def _chat(writer: Writer, env: dict[str, str], cwd: Path, session: str, text: str) -> None:
    outcome = procs.cli("chat", "--session", session, "--message", text,
                        env=env, timeout=RUN_TIMEOUT, cwd=cwd)  # fmt: skip
    writer.outcomes.append(outcome)
    if outcome.returncode == 0:
        writer.acknowledged.append((session, "user", text))
        writer.deferred += DEFERRED in outcome.stderr


def _ingest_loop(writer: Writer, env: dict[str, str], folder: Path, until: float) -> None:
    index = 0
    while time.monotonic() < until:
        file = write_messages(folder / f"file-{index}.json", 6, threads=1, tag=f"ingest{index}")
        outcome = procs.cli("ingest", str(file), "--block-turns", "3", env=env,
                            timeout=RUN_TIMEOUT)  # fmt: skip
        writer.outcomes.append(outcome)
        if outcome.returncode == 0:
            writer.acknowledged += [k for k in file_message_counts(file) if k[1] == "user"]
        index += 1


def _reader_loop(writer: Writer, env: dict[str, str], until: float) -> None:
    commands = (("process",), ("blocks", "--json"), ("events", "--json"))
    index = 0
    while time.monotonic() < until:
        command = commands[index % len(commands)]
        writer.outcomes.append(procs.cli(*command, env=env, timeout=RUN_TIMEOUT))
        index += 1


def _checked(db: Path, writers: list[Writer], seconds: float) -> Row:
    row = Row("concurrent writers", acknowledged=0, lost=0, integrity_errors=0, duplicates=0)
    row.tracebacks = row.crashes = 0
    stored = db_checks.message_counts(db)
    for writer in writers:
        row.add("acknowledged", len(writer.acknowledged))
        missing = [key for key in writer.acknowledged if key not in stored]
        row.add("lost", len(missing))
        for key in missing:
            row.example("lost", {"writer": writer.name, "message": key})
        _outcomes(row, writer)
    doubled = {key: n for key, n in stored.items() if n > 1 and key[1] == "user"}
    events = db_checks.duplicate_events(db)
    row.add("duplicates", sum(n - 1 for n in doubled.values()) + events)
    row.details["duplicate_turns"] = [list(key) for key in list(doubled)[:5]]
    row.details["duplicate_events"] = events
    found = db_checks.problems(db)
    row.add("integrity_errors", len(found))
    row.details["problems"] = found
    row.details["seconds_asked"] = seconds
    return row


def _outcomes(row: Row, writer: Writer) -> None:
    exits = Counter(outcome.returncode for outcome in writer.outcomes)
    row.details.setdefault("writers", {})[writer.name] = {
        "runs": len(writer.outcomes), "exits": dict(exits), "deferred": writer.deferred,
    }  # fmt: skip
    for outcome in writer.outcomes:
        if outcome.traceback:
            row.add("tracebacks")
            row.example("tracebacks", {"writer": writer.name, "stderr": outcome.excerpt()})
        if outcome.crashed():
            row.add("crashes")
            row.example("crashed", {"writer": writer.name, "exit": outcome.returncode})
        elif outcome.returncode != 0:
            row.example("refused", {"writer": writer.name, "stderr": outcome.excerpt(2)})
