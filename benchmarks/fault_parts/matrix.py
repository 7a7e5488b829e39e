"""The whole fault matrix in one call: every scenario with the sizes ``Options`` gives."""

import functools
import importlib
import pkgutil
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from . import kills
from .bad_model import bad_model
from .concurrent import concurrent_writers
from .fuzz import fuzz_all
from .results import Row

SCENARIOS = ("kills", "concurrent", "bad-model", "fuzz", "entrances")


@dataclass(frozen=True)
class Options:
    """Sizes of each scenario; the defaults are the benchmark's (issue #13)."""

    kills: int = 50
    seed: int = 0
    fuzz: int = 10_000
    seconds: float = 60.0
    cycles: int = 1
    workers: int = 2
    ingest_turns: int = 1000
    burst_turns: int = 2000
    process_turns: int = 200
    only: tuple[str, ...] = SCENARIOS


def run_matrix(options: Options, folder: Path) -> list[Row]:
    rows: list[Row] = []
    if "kills" in options.only:
        rows += kill_rows(options, folder / "kills")
    if "concurrent" in options.only:
        rows += timed(lambda: [concurrent_writers(folder / "concurrent", options.seconds)])
    if "bad-model" in options.only:
        rows += timed(lambda: bad_model(folder / "bad-model", options.cycles, workers=2))
    if "fuzz" in options.only:
        rows += fuzz_all(options.fuzz, options.seed)
    if "entrances" in options.only:
        rows += entrance_rows(folder / "entrances")
    return rows


def entrance_rows(folder: Path) -> list[Row]:
    """The rows of issue 24's probes (``r24_*`` modules): writers sharing a session, odd
    bytes over MCP, keys after Chinese text, huge messages and replies, endless files."""
    rows: list[Row] = []
    here = [str(Path(__file__).parent)]
    names = sorted(m.name for m in pkgutil.iter_modules(here) if m.name.startswith("r24_"))
    for name in names:
        part = importlib.import_module(f"{__package__}.{name}")
        rows += timed(functools.partial(part.rows, folder / name))
    return rows


def kill_rows(options: Options, folder: Path) -> list[Row]:
    """The three SIGKILL targets, each with its own seeded RNG (so sizes do not shift them)."""
    targets = (
        ("ingest", kills.kill_ingest, options.ingest_turns),
        ("bursts", kills.kill_bursts, options.burst_turns),
        ("process", kills.kill_process, options.process_turns),
    )
    rows = []
    for name, target, turns in targets:
        started = time.perf_counter()
        rng = random.Random(f"{options.seed}:{name}")
        row = target(options.kills, rng, folder / name, options.workers, turns)
        row.seconds = time.perf_counter() - started
        rows.append(row)
    return rows


def timed(scenario: Callable[[], list[Row]]) -> list[Row]:
    """The rows of ``scenario``, each given the scenario's wall time."""
    started = time.perf_counter()
    rows = scenario()
    for row in rows:
        row.seconds = time.perf_counter() - started
    return rows
