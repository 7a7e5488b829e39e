"""Scenario 1: SIGKILL at random points of ingest, ``append_turn`` bursts and ``process``.

Each target is first run unkilled (as many copies at once as trials will run) to observe
its window, from the moment its database's ``-wal`` file appears to its exit; kill points
are drawn uniformly in that window by a seeded RNG, as offsets from the moment the killed
child's own ``-wal`` appears (its start-up time varies with the machine's load). After
each kill the product itself reopens the file first (ingest re-run to completion, one
more ``append_turn``, ``process`` re-run to completion), then the file is checked
(``db_checks``): sound, nothing acknowledged missing, nothing stored twice.

Columns: ``acknowledged`` is what the killed child had promised (receipts it printed);
for ingest the file's turns (the re-run's exit 0 promises them all); for ``process`` the
turns already in the file it derives from. ``lost`` is those missing afterwards;
``duplicates`` are turns stored twice, plus for ``process`` event cards derived twice; a
re-run that does not finish with exit 0 is an integrity error, one that crashes or hangs
is a crash. ``details.phases`` says where kills landed, so a run whose kills all fell
before any write or after the exit is visible as such.
"""

import random
import re
import statistics
import sys
import textwrap
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from . import db_checks, procs
from .inputs import copy_database, file_message_counts, write_messages
from .results import Row

RERUN_TIMEOUT = 180.0
BLOCK_TURNS = "4"
WRITER = textwrap.dedent(
    """
    import asyncio, sys
    from stratagate_plugin.core.config import MemoryConfig
    from stratagate_plugin.core.memory import StrataGate

    async def main(path, prefix, count):
        memory = await StrataGate.open(path, MemoryConfig(block_turn_size=4))
        for i in range(count):
            await memory.blocks.append_turn(
                "ns", f"t{i % 5}", user=f"{prefix} message {i} " * 20,
                assistant=f"{prefix} reply {i}", receipt_id=f"{prefix}:{i}",
            )
            print(f"{prefix}:{i}", flush=True)
        await memory.close()

    asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3])))
    """
)


@dataclass
class Trial:
    """What one kill and its recovery showed."""

    delay: float
    phase: str
    acknowledged: int = 0
    lost: int = 0
    duplicates: int = 0
    problems: list[str] = field(default_factory=list)
    tracebacks: list[str] = field(default_factory=list)
    crashed: str | None = None

    def check_outcome(self, name: str, outcome: procs.Outcome) -> bool:
        """Note a traceback, crash or failed recovery of ``outcome``; True when it ran clean."""
        if outcome.traceback:
            self.tracebacks.append(f"{name}: {outcome.excerpt()}")
        if outcome.crashed():
            self.crashed = f"{name}: exit {outcome.returncode}: {outcome.excerpt(3)}"
        elif outcome.returncode != 0:
            self.problems.append(f"{name} exited {outcome.returncode}: {outcome.excerpt(3)}")
        return outcome.returncode == 0


@dataclass(frozen=True)
class Window:
    """The unkilled run's database-open to exit interval (seconds after its start); kill
    points are offsets into it, counted from when the killed child opens its file."""

    opened: float
    ended: float

    def draw(self, rng: random.Random, count: int) -> list[float]:
        return [rng.uniform(0, self.ended - self.opened) for _ in range(count)]


Make = Callable[[Path], tuple[list[str], Path]]  # a place → the child's args, the -wal path


def observed(make: Make, folder: Path, copies: int) -> Window:
    """The window of ``copies`` unkilled runs at once, averaged: the trials run ``workers``
    at a time, and a machine that busy imports modules slower than an idle one."""

    def one(index: int) -> tuple[float, float]:
        place = folder / f"reference-{index}"
        place.mkdir(parents=True)
        args, watch = make(place)
        opened, ended, outcome = procs.observe(args, procs.child_env(place), watch, RERUN_TIMEOUT)
        if outcome.returncode != 0:
            raise RuntimeError(f"the unkilled reference run failed: {outcome.excerpt()}")
        return opened, ended

    with ThreadPoolExecutor(max_workers=max(1, copies)) as pool:
        spans = list(pool.map(one, range(max(1, copies))))
    return Window(statistics.mean(s[0] for s in spans), statistics.mean(s[1] for s in spans))


def wal(db: Path) -> Path:
    return db.with_name(db.name + "-wal")


def run_trials(
    name: str,
    delays: list[float],
    trial: Callable[[float, Path], Trial],
    folder: Path,
    workers: int,
) -> Row:
    """Run ``trial`` once per kill point (``workers`` at a time) and sum them into a row."""
    folder.mkdir(parents=True, exist_ok=True)

    def one(index: int) -> Trial:
        place = folder / f"kill-{index:03d}"
        place.mkdir()
        return trial(delays[index], place)

    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        trials = list(pool.map(one, range(len(delays))))
    return summed(name, trials)


def summed(name: str, trials: list[Trial]) -> Row:
    row = Row(name, kill_points=len(trials), acknowledged=0, lost=0, integrity_errors=0)
    row.duplicates = row.tracebacks = row.crashes = 0
    for trial in trials:
        row.add("acknowledged", trial.acknowledged)
        row.add("lost", trial.lost)
        row.add("duplicates", trial.duplicates)
        row.add("integrity_errors", bool(trial.problems))
        row.add("tracebacks", len(trial.tracebacks))
        row.add("crashes", trial.crashed is not None)
        for problem in trial.problems:
            row.example("problems", {"delay": round(trial.delay, 3), "problem": problem})
        for excerpt in trial.tracebacks:
            row.example("tracebacks", excerpt)
        if trial.crashed:
            row.example("crashed", trial.crashed)
    row.details["phases"] = dict(Counter(trial.phase for trial in trials))
    return row


# --- (a) stratagate ingest ------------------------------------------------------------


def kill_ingest(kills: int, rng: random.Random, folder: Path, workers: int, turns: int) -> Row:
    """SIGKILL ``stratagate ingest`` of a ``turns``-turn file, then ingest it again."""
    file = write_messages(folder / "messages.json", turns, threads=3)
    expected = file_message_counts(file)
    window = observed(lambda place: (ingest_args(file, place / "m.db"), wal(place / "m.db")),
                      folder, workers)  # fmt: skip

    def trial(delay: float, place: Path) -> Trial:
        db, env = place / "m.db", procs.child_env(place)
        killed = procs.kill_at(ingest_args(file, db), env, delay, place, wal(db))
        again = procs.cli(*ingest_args(file, db)[3:], env=env, timeout=RERUN_TIMEOUT)
        where = phase(killed, again.stdout, r"\((\d+) already present\)", lambda n: (
            "before first turn" if n == 0 else "after last turn" if n == turns else "mid"
        ))  # fmt: skip
        result = Trial(delay, where, acknowledged=turns)
        _killed_output(result, killed)
        if result.check_outcome("ingest re-run", again):
            result.lost = db_checks.turns_missing(expected, db)
            result.duplicates = db_checks.doubled_messages(db)
            result.problems += db_checks.problems(db)
        return result

    row = run_trials("kill: ingest", window.draw(rng, kills), trial, folder / "kills", workers)
    row.details["window_s"] = [round(window.opened, 3), round(window.ended, 3)]
    return row


def ingest_args(file: Path, db: Path) -> list[str]:
    return [*procs.CLI, "ingest", str(file), "--db", str(db), "--block-turns", BLOCK_TURNS]


def phase(killed: procs.Killed, rerun_stdout: str, count: str, name: Callable[[int], str]) -> str:
    """Where the kill fell: "after exit", else ``name`` of the number the re-run's output
    matches with regex ``count`` (what the killed run had not done yet, or had)."""
    if killed.exited_first:
        return "after exit"
    found = re.search(count, rerun_stdout)
    return "unknown" if found is None else name(int(found.group(1)))


def _killed_output(result: Trial, killed: procs.Killed) -> None:
    if "Traceback" in killed.stderr:
        result.tracebacks.append(f"killed run: {killed.stderr.strip()[-600:]}")


# --- (b) append_turn bursts -------------------------------------------------------------


def kill_bursts(kills: int, rng: random.Random, folder: Path, workers: int, turns: int) -> Row:
    """SIGKILL a child looping over ``StrataGate.append_turn``; every receipt it printed
    must be stored, with its two messages, and the file must take a turn afterwards."""
    window = observed(lambda place: (writer_args(place / "m.db", "burst", turns),
                                     wal(place / "m.db")), folder, workers)  # fmt: skip

    def trial(delay: float, place: Path) -> Trial:
        db, env = place / "m.db", procs.child_env(place)
        killed = procs.kill_at(writer_args(db, "burst", turns), env, delay, place, wal(db))
        acked = {line for line in killed.stdout.splitlines() if line.startswith("burst:")}
        phase = "after exit" if killed.exited_first else "mid" if acked else "before first turn"
        result = Trial(delay, phase, acknowledged=len(acked))
        _killed_output(result, killed)
        after = procs.run(writer_args(db, "post", 1), env, RERUN_TIMEOUT)
        if result.check_outcome("append after the kill", after):
            stored = db_checks.receipt_ids(db)
            result.lost = len(acked - stored)
            result.duplicates = db_checks.doubled_messages(db)
            result.problems += db_checks.problems(db)
            balance = db_checks.receipt_balance(db)
            result.problems += [balance] if balance else []
        return result

    row = run_trials(
        "kill: append_turn burst", window.draw(rng, kills), trial, folder / "kills", workers
    )
    row.details["window_s"] = [round(window.opened, 3), round(window.ended, 3)]
    return row


def writer_args(db: Path, prefix: str, count: int) -> list[str]:
    return [sys.executable, "-c", WRITER, str(db), prefix, str(count)]


# --- (c) stratagate process -------------------------------------------------------------


def kill_process(kills: int, rng: random.Random, folder: Path, workers: int, turns: int) -> Row:
    """SIGKILL ``stratagate process`` (offline model) over many pending blocks, re-run it;
    the cards must equal those of an unkilled run on a copy (the offline model is
    deterministic), none derived twice, every job finished, every stored turn still there
    (acknowledged: the ``turns`` the ingest that built the file recorded)."""
    template = folder / "template.db"
    file = write_messages(folder / "messages.json", turns, threads=3)
    made = procs.run(ingest_args(file, template), procs.child_env(folder), RERUN_TIMEOUT)
    if made.returncode != 0:
        raise RuntimeError(f"could not build the pending database: {made.excerpt()}")

    def copied(place: Path) -> tuple[list[str], Path]:
        return process_args(copy_database(template, place / "m.db")), wal(place / "m.db")

    window = observed(copied, folder, max(2, workers))
    reference = Derived.of(folder / "reference-0" / "m.db")
    second = Derived.of(folder / "reference-1" / "m.db")
    expected = file_message_counts(file)

    def trial(delay: float, place: Path) -> Trial:
        db, env = copy_database(template, place / "m.db"), procs.child_env(place)
        killed = procs.kill_at(process_args(db), env, delay, place, wal(db))
        again = procs.cli("process", "--db", str(db), env=env, timeout=RERUN_TIMEOUT)
        where = phase(killed, again.stdout, r"ran (\d+) jobs", lambda n: (
            "before first job done" if n >= reference.jobs else "mid"
        ))  # fmt: skip
        result = Trial(delay, where, acknowledged=turns)
        _killed_output(result, killed)
        if result.check_outcome("process re-run", again):
            result.lost = db_checks.turns_missing(expected, db)
            result.duplicates = db_checks.duplicate_events(db) + db_checks.doubled_messages(db)
            result.problems += db_checks.problems(db) + reference.differences(db)
        return result

    row = run_trials("kill: process", window.draw(rng, kills), trial, folder / "kills", workers)
    row.details["window_s"] = [round(window.opened, 3), round(window.ended, 3)]
    row.details["reference_events"] = sum(len(t) for t in reference.titles.values())
    row.details["reference_deterministic"] = second.titles == reference.titles
    return row


def process_args(db: Path) -> list[str]:
    return [*procs.CLI, "process", "--db", str(db)]


@dataclass(frozen=True)
class Derived:
    """An unkilled ``process`` run's result: card titles per block and job outcomes."""

    titles: dict[str, list[str]]
    statuses: Counter[str]
    jobs: int

    @classmethod
    def of(cls, db: Path) -> "Derived":
        titles: dict[str, list[str]] = {}
        for block, title, _ in db_checks.event_keys(db):
            titles.setdefault(block, []).append(title)
        statuses = db_checks.job_statuses(db)
        return cls({b: sorted(t) for b, t in titles.items()}, statuses, sum(statuses.values()))

    def differences(self, db: Path) -> list[str]:
        """How ``db``'s derivation differs from this reference (empty when it does not)."""
        other = Derived.of(db)
        found = []
        changed = [b for b in self.titles.keys() | other.titles.keys()
                   if self.titles.get(b) != other.titles.get(b)]  # fmt: skip
        if changed:
            found.append(f"{len(changed)} blocks' cards differ from the unkilled run")
        if other.statuses != self.statuses:
            found.append(f"jobs ended {dict(other.statuses)}, unkilled {dict(self.statuses)}")
        return found
