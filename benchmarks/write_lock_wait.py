"""Writes from many processes on one SQLite file: the wait for the write lock, polled
(``db.begin_immediate``) against SQLite's own busy handler, in the same run.

    .venv/bin/python benchmarks/write_lock_wait.py --processes 8 --writes 150 --json /tmp/w.json

Each process opens the engine's ``Database`` on one file and makes ``--writes`` writes
through ``Database.write``, each holding the lock ``--hold`` ms (a unit's work) and
pausing up to ``--gap`` ms between writes. The time from asking to write to holding the
lock is recorded per write. ``sqlite`` runs the same with ``begin_immediate`` replaced by a
plain ``BEGIN IMMEDIATE`` under the connection's ``busy_timeout``, which is SQLite's own
handler: it sleeps 1, 2, 5, 10, 15, 20, 25 … 100 ms between tries. The two alternate
``--rounds`` times on fresh files; p50/p95/p99 of the wait and the wall time are printed.
"""

import argparse
import asyncio
import json
import multiprocessing
import random
import sqlite3
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.scale_stats import summary
from stratagate_plugin.core.store import Database
from stratagate_plugin.core.store import db as store_db

HANDLERS = ("polled", "sqlite")


def plain_begin(raw: sqlite3.Connection, wait_ms: int) -> None:
    """The old way: SQLite's busy handler under the connection's ``busy_timeout``."""
    raw.execute("BEGIN IMMEDIATE")


async def writes(path: Path, count: int, hold_s: float, gap_s: float, seed: int) -> list[float]:
    """Waits (ms) for the lock of ``count`` writes through ``Database.write``."""
    rng = random.Random(seed)
    waits: list[float] = []
    async with Database(path, backups=False, readers=0) as db:
        for n in range(count):
            asked = time.perf_counter()

            def unit(raw: sqlite3.Connection, n: int = n, asked: float = asked) -> None:
                waits.append((time.perf_counter() - asked) * 1000)
                raw.execute("INSERT INTO meta(key, value) VALUES (?, '1')", (f"w{seed}-{n}",))
                time.sleep(hold_s)  # the unit's work, holding the lock

            await db.write(unit)
            await asyncio.sleep(rng.random() * gap_s)
    return waits


async def create(path: Path) -> None:
    """The file with the engine's schema."""
    async with Database(path, backups=False, readers=0):
        pass


def child(handler: str, path: str, args: dict[str, Any], seed: int) -> list[float]:
    if handler == "sqlite":
        store_db.begin_immediate = plain_begin  # type: ignore[assignment]
    return asyncio.run(
        writes(Path(path), args["writes"], args["hold"] / 1000, args["gap"] / 1000, seed)
    )


def one_run(handler: str, folder: Path, args: dict[str, Any], round_: int) -> dict[str, Any]:
    path = folder / f"{handler}-{round_}.db"
    asyncio.run(create(path))
    context = multiprocessing.get_context("spawn")
    started = time.perf_counter()
    jobs = [(handler, str(path), args, round_ * 100 + n) for n in range(args["processes"])]
    with context.Pool(args["processes"]) as pool:
        waits = [wait for result in pool.starmap(child, jobs) for wait in result]
    ordered = sorted(waits)
    p99 = round(ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))], 2)
    wall = round(time.perf_counter() - started, 2)
    return {"wall_s": wall, **summary(waits), "p99_ms": p99, "n": len(waits)}


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--processes", type=int, default=8)
    parser.add_argument("--writes", type=int, default=150, help="writes per process")
    parser.add_argument("--hold", type=float, default=2.0, help="ms a write holds the lock")
    parser.add_argument("--gap", type=float, default=20.0, help="most ms between writes")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    settings = {k: v for k, v in vars(args).items() if k != "json"}
    rows: dict[str, list[dict[str, Any]]] = {handler: [] for handler in HANDLERS}
    with tempfile.TemporaryDirectory() as tmp:
        for round_ in range(args.rounds):
            for handler in HANDLERS:
                rows[handler].append(one_run(handler, Path(tmp), settings, round_))
    print(f"{'handler':<8}{'round':>6}{'wall s':>8}{'p50 ms':>9}{'p95 ms':>9}{'p99 ms':>9}")
    for handler, runs in rows.items():
        for n, row in enumerate(runs):
            print(
                f"{handler:<8}{n:>6}{row['wall_s']:>8}{row['p50_ms']:>9}{row['p95_ms']:>9}"
                f"{row['p99_ms']:>9}"
            )
    if args.json:
        args.json.write_text(json.dumps({**settings, "runs": rows}, indent=2) + "\n")


if __name__ == "__main__":
    main()
