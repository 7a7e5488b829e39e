"""Several app processes on one database: HTTP throughput with 1 and with N ``serve``s.

``search_scale.py --apps 1,2 [--db postgresql://…]`` (issue #30: "throughput with 2
processes ≥ 1.6× one") runs, for each count in ``--apps`` and on each database (the
SQLite file; and the server's copy when ``--db`` names one):

- that many ``stratagate serve`` processes at once on the one database, each in a home of
  its own on a free loopback port (``--serve-processes`` web processes each, 1 by default
  here: an app is one web process and its worker, so the count is the count of engines);
- ``--clients`` ``httpx`` clients per app, each making ``--calls`` requests (the pages of
  ``scale_concurrency.py``'s HTTP run: events with a filter, topics with a query, graph,
  blocks), and a writer per app recording a turn every ``--writer-interval`` s through a
  ``stratagate mcp`` of its own, each in its own session.

With ``--drain`` each database's pending jobs (the back-fill that opening a generated
corpus queues: thousands of graph and topic projections) are run first with ``stratagate
process``, so the apps' workers carry only the writers' new work, as on a memory in use.
Counts alternate round by round (``--rounds``: 1, 2, 1, 2, …) so the machine's drift falls on
both. Reported per database and count: requests/s over all clients, p50/p95, the writers'
turns, CPU ms per request of the web processes, the workers, the local PostgreSQL server
and the clients themselves, and the cores they kept busy; and each round's throughput
against one app in that round (the ratio the issue asks for), with the median over rounds.
"""

import asyncio
import statistics
import subprocess
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import psycopg

from benchmarks.fault_parts.procs import CLI, child_env
from benchmarks.scale_concurrency import (
    Run,
    Serve,
    Target,
    client_queries,
    clients_at_once,
    http_reader,
    mcp_params,
    mcp_writer,
    pending_jobs,
    report,
    served,
    tree_cpu,
)


async def apps_at_once(
    db: Target,
    folder: Path,
    queries: list[str],
    apps: int,
    clients: int,
    calls: int,
    gap: float,
    how: Serve,
) -> dict[str, Any]:
    """``apps`` ``serve``s on ``db``, ``clients`` readers and one writer each, at once."""
    with ExitStack() as stack:
        bases, pids = [], []
        for index in range(apps):
            base, pid = stack.enter_context(served(db, _home(folder, f"app-{index}"), how))
            bases.append(base)
            pids.append(pid)
        run, before, cpu, server = Run(), pending_jobs(db), [], server_pid(db)
        shares = client_queries(queries, clients * apps, calls)
        readers = [http_reader(bases[i % apps], share, run) for i, share in enumerate(shares)]
        writers = [
            mcp_writer(mcp_params(db, _home(folder, f"writer-{i}")), queries, run, gap, f"w{i}")
            for i in range(apps)
        ]

        def mark() -> None:
            cpu.append(cpu_seconds(pids, server))

        ready = len(readers) + len(writers)
        wall, turns = await clients_at_once(readers, _all_turns(writers), run, ready, mark)
        mark()
        row = report(f"{apps} app(s)", run, wall, turns, before, db)
        spent = {role: cpu[1][role] - cpu[0][role] for role in cpu[1]}
        row["cpu_ms_per_request"] = {
            role: round(seconds * 1000 / row["calls"], 1) for role, seconds in spent.items()
        }
        row["cores_busy"] = round(sum(spent.values()) / wall, 2)
        return {"apps": apps, **row}


def cpu_seconds(pids: list[int], server: int | None) -> dict[str, float]:
    """CPU seconds so far of the apps' web processes and workers (summed over apps), of
    the database server's processes (``server``: its postmaster; 0 on SQLite) and of the
    clients (this process): on 2 cores they all share the same two."""
    found = {"web": 0.0, "worker": 0.0}
    for pid in pids:
        for role, seconds in tree_cpu(pid).items():
            found[role] += seconds
    found["postgresql"] = sum(tree_cpu(server).values()) if server else 0.0
    found["clients"] = time.process_time()  # this process: the HTTP clients' own CPU
    return found


def server_pid(db: Target) -> int | None:
    """The postmaster's process id of a server on this machine (its data directory's
    ``postmaster.pid``), to count its backends' CPU; None on SQLite."""
    if not isinstance(db, str):
        return None
    with psycopg.connect(db) as server:
        row = server.execute("SHOW data_directory").fetchone()
    assert row is not None
    return int((Path(row[0]) / "postmaster.pid").read_text().split()[0])


def _home(folder: Path, name: str) -> Path:
    home = folder / name
    home.mkdir(parents=True, exist_ok=True)
    return home


async def _all_turns(writers: list[Any]) -> int:
    return sum(await asyncio.gather(*writers))


def drain(db: Target, home: Path) -> float:
    """Run ``db``'s pending jobs to the end (``stratagate process``); its seconds."""
    started = time.perf_counter()
    command = [*CLI, "process", "--db", str(db)]
    subprocess.run(command, env=child_env(_home(home, "drain")), check=True, capture_output=True)
    return round(time.perf_counter() - started, 1)


def apps_run(
    targets: dict[str, Target],
    folder: Path,
    queries: list[str],
    counts: list[int],
    rounds: int,
    clients: int,
    calls: int,
    gap: float,
    how: Serve,
) -> dict[str, Any]:
    """Every count in every round on every database; the rows and the ratios to one app."""
    rows: dict[str, list[dict[str, Any]]] = {name: [] for name in targets}
    for number in range(rounds):
        for name, db in targets.items():
            for apps in counts:
                place = folder / f"{name}-r{number}-a{apps}"
                measure = apps_at_once(db, place, queries, apps, clients, calls, gap, how)
                row = {"round": number, **asyncio.run(measure)}
                rows[name].append(row)
                print_row(name, row)
    return {"rows": rows, "ratios": {name: ratios(found) for name, found in rows.items()}}


def ratios(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Per count above one: each round's requests/s over that round's one app, and the
    median of those."""
    single = {row["round"]: row["calls_per_s"] for row in rows if row["apps"] == 1}
    found: dict[str, Any] = {}
    for apps in sorted({row["apps"] for row in rows} - {1}):
        each = [
            round(row["calls_per_s"] / single[row["round"]], 2)
            for row in rows
            if row["apps"] == apps and single.get(row["round"])
        ]
        found[str(apps)] = {"per_round": each, "median": statistics.median(each) if each else None}
    return found


def print_row(name: str, row: dict[str, Any]) -> None:
    writer = row["writer"]
    print(
        f"{name:<11} round {row['round']} {row['apps']} app(s): {row['calls']} requests, "
        f"{row['calls_per_s']}/s, p50 {row['all']['p50_ms']} p95 {row['all']['p95_ms']} ms; "
        f"cpu ms/request {row['cpu_ms_per_request']}, cores busy {row['cores_busy']}; "
        f"writers {writer['turns']} turns, p95 {writer.get('p95_ms', '-')} ms; "
        f"jobs pending {row['jobs_pending_before']} → {row['jobs_pending_after']}",
        flush=True,
    )


def print_ratios(result: dict[str, Any]) -> None:
    for name, found in result["ratios"].items():
        for apps, cell in found.items():
            each, median = cell["per_round"], cell["median"]
            print(f"{name}: {apps} apps / 1 app, requests/s: {each}, median {median}")
