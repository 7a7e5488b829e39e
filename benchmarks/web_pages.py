"""Web pages at scale: every memory page and API call on the search-scale database.

    PYTHONPATH=. .venv/bin/python benchmarks/web_pages.py --json /tmp/web_pages.json

Builds (or reuses, ``--keep DB``) the 100k-event / 500k-message namespace of
``search_scale.py`` with its graph and topic catalog (``scale_corpus.ensure_corpus``),
starts the host with the memory plugin on it and the web app as ``stratagate serve``
builds it, and requests each page ``--rounds`` times in process (``httpx.ASGITransport``:
routing, the guard, the engine's queries and the templates; no socket). Beside each page,
the same run times a plain ``SELECT`` of the same page of rows on its own connection (the
same index the page walks: the events by chronology, the 40 blocks shown and their
messages, an event with its source messages): the ratio is what the app adds over reading
the rows. The text filter's plain query is a LIKE scan that stops at 40 hits, not the
FTS5 search the page runs, so its ratio overstates the cost; the topics and graph pages'
plain queries read their first page of rows only (no members, facts or edges).

``--worker`` says what the memory plugin's derivation worker does meanwhile (each its own
host on the same file, in this order): ``stopped`` cancels it as the host starts (what was
pending stays pending: opening a benchmark database queues graph and topic back-fill
jobs); ``running`` leaves it on and records a turn through the engine every
``--writer-interval`` s in a thread of its own (a block seals every 12 turns and the
worker derives it, as ``serve`` does while someone chats), and reports the jobs the
worker finished during the pages; ``apart`` does the same with the worker in a process of
its own at lower priority, as ``serve`` runs it (the writer's kicks go down its pipe; the
``cpu ms`` then leave the worker's share out); ``both`` (the default) runs stopped and
running.
Aim: every page p95 ≤ 100 ms and ≤ 3× its plain query, with the worker running.
``cpu ms`` is the process's CPU time per request (every thread: the readers, and with
``running`` the worker and the writer too): on shared cores wall times swing with the
machine's load, what a page costs does not.
"""

import argparse
import asyncio
import contextlib
import json
import os
import random
import sqlite3
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from benchmarks.scale_corpus import SPACE, THREADS, CorpusSize, Vocabulary, ensure_corpus
from benchmarks.scale_stats import summary
from benchmarks.scale_verdict import as_json, page_checks, print_verdict
from stratagate_plugin.cli.serve_processes import Child, Children
from stratagate_plugin.core.store.timeline_rows import CHRONOLOGY, CONFLICTED
from stratagate_plugin.harness.chat import EchoChatModel
from stratagate_plugin.harness.profiles import Profile, save_profile
from stratagate_plugin.harness.runtime import Host
from stratagate_plugin.memory_plugin.hooks import MemoryPlugin
from stratagate_plugin.memory_plugin.runtime import MemoryRuntime
from stratagate_plugin.web.shell.app import build_app

Plain = Callable[[sqlite3.Connection], Any]


def pages(raw: sqlite3.Connection) -> dict[str, tuple[str, Plain]]:
    """Each page's URL and the plain query of the rows it shows."""
    event_id, word = raw.execute("SELECT id, title FROM events ORDER BY pk LIMIT 1").fetchone()
    word = word.split()[0]
    block_id = raw.execute("SELECT id FROM blocks ORDER BY sequence DESC LIMIT 1").fetchone()[0]
    thread = f"t{THREADS - 1}"
    space = f"space={SPACE}"

    def select(sql: str, *args: Any) -> Plain:
        return lambda conn: conn.execute(sql, args).fetchall()

    def selects(*queries: tuple[Any, ...]) -> Plain:
        return lambda conn: [conn.execute(sql, args).fetchall() for sql, *args in queries]

    shown = [
        row[0]
        for row in raw.execute(
            "SELECT id FROM blocks WHERE namespace = ? AND thread_id = ? "
            "ORDER BY thread_sequence DESC LIMIT 40",
            (SPACE, thread),
        )
    ]
    marks = ",".join("?" * len(shown))

    return {
        "status": (
            f"/memory/?{space}",
            select(
                "SELECT status, COUNT(*) FROM events WHERE namespace = ? GROUP BY status", SPACE
            ),
        ),
        "status panel": (
            f"/memory/status/panel?{space}",
            select(
                "SELECT status, COUNT(*) FROM events WHERE namespace = ? GROUP BY status", SPACE
            ),
        ),
        "events": (
            f"/memory/events?{space}",
            select(
                f"SELECT * FROM events WHERE namespace = ? ORDER BY {CHRONOLOGY} DESC LIMIT 40",
                SPACE,
            ),
        ),
        "events page 100": (
            f"/memory/events?{space}&offset=4000",
            select(
                f"SELECT * FROM events WHERE namespace = ? ORDER BY {CHRONOLOGY} DESC "
                "LIMIT 40 OFFSET 4000",
                SPACE,
            ),
        ),
        "events text filter": (
            f"/memory/events?{space}&q={word}",
            select(
                "SELECT * FROM events WHERE namespace = ? AND title LIKE ? LIMIT 40",
                SPACE,
                f"%{word}%",
            ),
        ),
        "event detail": (
            f"/memory/events/{event_id}?{space}",
            selects(
                ("SELECT * FROM events WHERE id = ?", event_id),
                (
                    "SELECT m.* FROM event_sources s JOIN messages m ON m.id = s.message_id "
                    "WHERE s.event_id = ?",
                    event_id,
                ),
            ),
        ),
        "conflicts": (
            f"/memory/conflicts?{space}",
            select(f"SELECT * FROM events WHERE namespace = ? AND {CONFLICTED} LIMIT 20", SPACE),
        ),
        "blocks": (
            f"/memory/blocks?{space}&thread={thread}",
            selects(
                (
                    "SELECT * FROM blocks WHERE namespace = ? AND thread_id = ? "
                    "ORDER BY thread_sequence DESC LIMIT 40",
                    SPACE,
                    thread,
                ),
                (f"SELECT * FROM messages WHERE block_id IN ({marks})", *shown),
            ),
        ),
        "block L5 preview": (
            f"/memory/blocks/{block_id}/view?level=L5&{space}",
            select("SELECT * FROM messages WHERE block_id = ? ORDER BY position", block_id),
        ),
        "audit": (
            f"/memory/audit?{space}",
            select(
                "SELECT * FROM usage_receipts WHERE namespace = ? "
                "ORDER BY created_at DESC LIMIT 100",
                SPACE,
            ),
        ),
        "topics": (
            f"/memory/topics?{space}",
            select("SELECT * FROM topics WHERE namespace = ? LIMIT 20", SPACE),
        ),
        "topics query": (
            f"/memory/topics?{space}&q={word}",
            select(
                "SELECT * FROM topics WHERE namespace = ? AND title LIKE ? LIMIT 20",
                SPACE,
                f"%{word}%",
            ),
        ),
        "graph": (
            f"/memory/graph?{space}",
            select("SELECT * FROM graph_nodes WHERE namespace = ? LIMIT 100", SPACE),
        ),
        "graph JSON": (
            f"/memory/graph.json?{space}",
            select("SELECT * FROM graph_nodes WHERE namespace = ? LIMIT 100", SPACE),
        ),
        "jobs": (f"/memory/jobs?{space}", select("SELECT * FROM jobs ORDER BY id DESC LIMIT 40")),
        "profile": (f"/memory/profile?{space}", select("SELECT * FROM profile_fields")),
        "settings": (f"/memory/settings?{space}", select("SELECT * FROM namespaces")),
        "raw event JSON": (
            f"/memory/raw.json?kind=event&id={event_id}&{space}",
            select("SELECT * FROM events WHERE id = ?", event_id),
        ),
        "chat": ("/chat", select("SELECT 1")),
    }


def timed(run: Callable[[], Any], rounds: int) -> list[float]:
    found = []
    for _ in range(rounds):
        started = time.perf_counter()
        run()
        found.append((time.perf_counter() - started) * 1000)
    return found


async def measure(path: Path, home: Path, rounds: int, worker: str, gap: float) -> dict[str, Any]:
    """Every page's latencies and its plain query's, with the worker ``stopped`` or
    ``running`` (a writer feeding it); the jobs it finished meanwhile under ``_worker``."""
    os.environ["STRATAGATE_HOME"] = str(home)
    settings = {"database": str(path), "seal_idle_minutes": 10**9}
    profile = save_profile(
        Profile(
            name="bench", plugins=["stratagate-memory"], settings={"stratagate-memory": settings}
        )
    )
    plain = sqlite3.connect(path)
    table = pages(plain)
    results: dict[str, Any] = {}
    kick_read, kick_write = os.pipe()
    if worker == "apart":
        os.set_blocking(kick_write, False)
        MemoryRuntime.kick_pipe = kick_write
    async with Host.from_profile(profile, home) as host, worker_apart(worker, kick_read):
        runtime = memory_runtime(host)
        if worker == "stopped":
            await stop_worker(runtime)
        before = finished_jobs(plain)
        writes = worker in ("running", "apart")
        writing = asyncio.create_task(write_turns(runtime, gap)) if writes else None
        app = await build_app(host, EchoChatModel())
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
            for name, (url, query) in table.items():
                results[name] = await measure_page(client, url, query, plain, rounds)
        turns = await stop_writing(writing)
        results["_worker"] = {"worker": worker, "turns_written": turns}
        results["_worker"] |= {"jobs_finished": finished_jobs(plain) - before}
        results["_worker"] |= {"jobs_pending": pending_jobs(plain)}
    plain.close()
    MemoryRuntime.kick_pipe = None
    return results


@contextlib.asynccontextmanager
async def worker_apart(worker: str, kick_read: int) -> Any:
    """With ``apart``: ``serve``'s worker process on the bench profile, until the block ends
    (it yields to these pages through the database's board, which both runtimes join)."""
    if worker != "apart":
        yield
        return
    command = [sys.executable, "-m", "stratagate_plugin.cli.main", "serve", "--profile", "bench"]
    role = f"worker:{kick_read}"
    children = Children(
        [Child("worker", [*command, "--child", role], (kick_read,), dict(os.environ))]
    )
    children.start()
    try:
        yield
    finally:
        children.stop(grace_s=30)


async def measure_page(
    client: httpx.AsyncClient, url: str, query: Plain, plain: sqlite3.Connection, rounds: int
) -> dict[str, Any]:
    first = await client.get(url)
    if first.status_code != 200:
        return {"url": url, "status": first.status_code}
    ours, cpu = [], time.process_time()
    for _ in range(rounds):
        started = time.perf_counter()
        await client.get(url)
        ours.append((time.perf_counter() - started) * 1000)
    cpu_ms = round((time.process_time() - cpu) * 1000 / rounds, 2)
    theirs = timed(lambda: query(plain), rounds)
    return {"url": url, **summary(ours), "cpu_ms": cpu_ms, "plain": summary(theirs)}


def memory_runtime(host: Host) -> MemoryRuntime:
    return next(p.runtime for p in host.pm.get_plugins() if isinstance(p, MemoryPlugin))


async def stop_worker(runtime: MemoryRuntime) -> None:
    """Cancel the derivation worker (``stop`` then only closes the engine)."""
    if runtime.worker is not None:
        runtime.worker.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await runtime.worker
        runtime.worker = None


async def write_turns(runtime: MemoryRuntime, gap: float) -> int:
    """Record a turn every ``gap`` s and wake the worker, until cancelled."""
    written, rng = 0, random.Random(11)
    vocab = Vocabulary(rng)
    try:
        while True:
            text = vocab.text(6, 30)
            await runtime.memory.blocks.append_turn(
                SPACE, "pages-writer", user=text, assistant=f"Noted: {text}"
            )
            runtime.kick()
            written += 1
            await asyncio.sleep(gap)
    except asyncio.CancelledError:
        return written


async def stop_writing(writing: "asyncio.Task[int] | None") -> int:
    if writing is None:
        return 0
    writing.cancel()
    return await writing


def finished_jobs(raw: sqlite3.Connection) -> int:
    return int(raw.execute("SELECT COUNT(*) FROM jobs WHERE status != 'pending'").fetchone()[0])


def pending_jobs(raw: sqlite3.Connection) -> int:
    return int(raw.execute("SELECT COUNT(*) FROM jobs WHERE status = 'pending'").fetchone()[0])


def report(results: dict[str, Any]) -> None:
    worker = results["_worker"]
    print(
        f"worker {worker['worker']}: {worker['jobs_finished']} jobs finished during the pages, "
        f"{worker['jobs_pending']} pending after, {worker['turns_written']} turns written"
    )
    heads = ("p50 ms", "p95 ms", "cpu ms", "plain p50", "plain p95", "p95 ratio", "≤3× plain")
    print(f"{'page':<20}" + "".join(f"{head:>11}" for head in heads))
    for name, row in results.items():
        if name == "_worker":
            continue
        if "plain" not in row:
            print(f"{name:<20}   status {row['status']} ({row['url']})")
            continue
        ratio = row["p95_ms"] / max(row["plain"]["p95_ms"], 1e-3)
        row["p95_ratio"] = round(ratio, 2)
        row["aim_met"] = row["p95_ms"] <= 100 and (ratio <= 3 or row["p95_ms"] <= 5)
        print(
            f"{name:<20}{row['p50_ms']:>11}{row['p95_ms']:>11}{row['cpu_ms']:>11}"
            f"{row['plain']['p50_ms']:>11}"
            f"{row['plain']['p95_ms']:>11}{ratio:>11.2f}{'yes' if row['aim_met'] else 'no':>11}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--messages", type=int, default=500_000)
    parser.add_argument("--nodes", type=int, default=3000, help="graph nodes to project")
    parser.add_argument("--chapters", type=int, default=300, help="topic chapters to write")
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--worker", choices=("stopped", "running", "apart", "both"), default="both")
    parser.add_argument("--writer-interval", type=float, default=0.5)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--keep", type=Path, help="keep the database here (reused if present)")
    args = parser.parse_args()
    variants = ("stopped", "running") if args.worker == "both" else (args.worker,)
    size = CorpusSize(args.events, args.messages, args.nodes, args.chapters, args.seed)
    runs, verdicts = {}, {}
    with tempfile.TemporaryDirectory() as tmp:
        path = args.keep or Path(tmp) / "scale.db"
        ensure_corpus(path, size)
        for worker in variants:
            home = Path(tmp) / f"home-{worker}"
            runs[worker] = asyncio.run(
                measure(path, home, args.rounds, worker, args.writer_interval)
            )
            report(runs[worker])
            checks = page_checks(runs[worker], worker)
            print_verdict(checks)
            verdicts[worker] = as_json(checks)
    output = {**vars(args), "json": None, "keep": None, "worker_runs": runs, "verdict": verdicts}
    print(json.dumps(output, indent=2))
    if args.json:
        args.json.write_text(json.dumps(output, indent=2))


if __name__ == "__main__":
    main()
