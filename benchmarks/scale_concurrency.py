"""Many clients at once on the search-scale database, through MCP and through HTTP.

``search_scale.py --concurrency`` runs, on the corpus it built (or ``--keep``):

- **MCP**: ``--clients`` real ``stratagate mcp --db DB --space bench`` server processes,
  one per client (the SDK's stdio client, as ``mcp_roundtrip.py`` starts them), each
  making ``--calls`` calls: raw, event and graph searches and topic listings in turn, with
  ``memory_record_use`` after each search that opened a batch (as an agent must; timed
  as its own kind, not counted in ``--calls``);
- **HTTP**: one real ``stratagate serve`` on a free loopback port (a profile naming the
  database; ``--serve-processes`` web processes, the memory plugin's worker in its own)
  and ``--clients`` ``httpx`` clients, each on its own connection, making ``--calls``
  requests: the events page with a text filter, the topics page with a query, the graph
  page and the blocks page in turn.

In both, one more ``stratagate mcp`` process records turns (``memory_record_turn``, one
every ``--writer-interval`` s, in a session of its own: a block seals every 12 turns and
its derivation runs in the servers' workers) from the moment every client is ready until
the last finishes. Every client is warmed up first (each call kind once, untimed); the
clock runs from a common start. Reported: calls/s over all clients, p50/p95 per call
kind, the writer's own latencies and turns, and the jobs pending before and after
(each server's worker runs the back-fill jobs that opening the database queued). The
HTTP run follows the MCP run on the same file, so it also sees the MCP writer's turns.
"""

import asyncio
import functools
import json
import os
import re
import sqlite3
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Coroutine, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import psycopg
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from benchmarks.fault_parts.procs import CLI, child_env
from benchmarks.scale_corpus import SPACE, THREADS
from benchmarks.scale_stats import summary

MCP_KINDS = {
    "search_raw": "memory_search_raw",
    "search_events": "memory_search_events",
    "search_graph": "memory_search_graph",
    "list_topics": "memory_list_topics",
}
THROUGH = ("both", "mcp", "http")  # ``--through``: which of the two runs
HTTP_KINDS = ("events_filter", "topics_query", "graph_page", "blocks_page")
SERVING = re.compile(r"serving on (http://\S+?)/")
Target = Path | str  # a SQLite file, or a ``postgresql://`` URL


@dataclass
class Run:
    """Samples of one run: per call kind, ms; the writer's turns; the common start."""

    calls: dict[str, list[float]] = field(default_factory=dict)
    writer_ms: list[float] = field(default_factory=list)
    ready: int = 0
    go: asyncio.Event = field(default_factory=asyncio.Event)
    done: asyncio.Event = field(default_factory=asyncio.Event)

    def add(self, kind: str, started: float) -> None:
        self.calls.setdefault(kind, []).append((time.perf_counter() - started) * 1000)


def mcp_params(db: Target, home: Path) -> StdioServerParameters:
    """A ``stratagate mcp`` server on ``db``'s benchmark space, in a home of its own."""
    return StdioServerParameters(
        command=CLI[0],
        args=[*CLI[1:], "mcp", "--db", str(db), "--space", SPACE],
        env=child_env(home),
        cwd=str(home),
    )


async def mcp_call(client: Client, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool(tool, arguments)
    if result.is_error:
        raise SystemExit(f"scale_concurrency: {tool} failed: {result.content}")
    return dict(result.structured_content or {})


async def mcp_ask(client: Client, kind: str, query: str, run: Run | None) -> None:
    """One search through MCP (timed into ``run`` unless warming up), then its use."""
    started = time.perf_counter()
    found = await mcp_call(client, MCP_KINDS[kind], {"query": query})
    if run is not None:
        run.add(kind, started)
    if found.get("batchId"):
        started = time.perf_counter()
        await mcp_call(
            client, "memory_record_use", {"batch_id": found["batchId"], "evidence_refs": []}
        )
        if run is not None:
            run.add("record_use", started)


async def mcp_reader(params: StdioServerParameters, queries: Sequence[str], run: Run) -> None:
    async with Client(params) as client:
        await client.list_tools()
        for kind in MCP_KINDS:
            await mcp_ask(client, kind, queries[0], None)
        await _ready(run)
        kinds = list(MCP_KINDS)
        for index, query in enumerate(queries):
            await mcp_ask(client, kinds[index % len(kinds)], query, run)


async def mcp_writer(
    params: StdioServerParameters,
    turns: Sequence[str],
    run: Run,
    gap: float,
    session: str = "bench-writer",
) -> int:
    """Record turns into ``session`` until the readers are done; returns how many. Ready
    like a reader (counted in ``clients_at_once``'s start): a writer whose server came up
    after a short run had ended recorded nothing."""
    async with Client(params) as client:
        await client.list_tools()
        await _ready(run)
        count = 0
        while not run.done.is_set():
            user = turns[count % len(turns)]
            arguments = {"user": user, "assistant": f"Noted: {user}", "session": session}
            started = time.perf_counter()
            await mcp_call(client, "memory_record_turn", arguments)
            run.writer_ms.append((time.perf_counter() - started) * 1000)
            count += 1
            await asyncio.sleep(gap)
        return count


async def _ready(run: Run) -> None:
    run.ready += 1
    await run.go.wait()


async def clients_at_once(
    readers: Sequence[Awaitable[None]],
    writer: Awaitable[int],
    run: Run,
    count: int,
    at_start: Callable[[], Any] = lambda: None,
) -> tuple[float, int]:
    """Start every reader and the writer; once all readers and writers (``count`` in all)
    are warm, the clock starts (``at_start`` called then). Returns the wall time from the
    start to the last reader's end, and the writer's turns."""
    tasks = [asyncio.ensure_future(reader) for reader in readers]
    writing = asyncio.ensure_future(writer)
    while run.ready < count:
        failed = [task for task in [*tasks, writing] if task.done() and task.exception()]
        if failed:
            raise failed[0].exception()  # type: ignore[misc]
        await asyncio.sleep(0.05)
    at_start()
    started = time.perf_counter()
    run.go.set()
    await asyncio.gather(*tasks)
    wall = time.perf_counter() - started
    run.done.set()
    return wall, await writing


def client_queries(queries: Sequence[str], clients: int, calls: int) -> list[list[str]]:
    """``calls`` queries for each client, consecutive in ``queries`` (wrapping round), each
    client starting where the one before stopped: clients ask different questions."""
    return [
        [queries[(client * calls + index) % len(queries)] for index in range(calls)]
        for client in range(clients)
    ]


def pending_jobs(db: Target) -> int:
    """Jobs waiting, in a SQLite file or on a server (a ``postgresql://`` URL)."""
    question = "SELECT COUNT(*) FROM jobs WHERE status = 'pending'"
    if isinstance(db, str):
        with psycopg.connect(db) as server:
            return int(server.execute(question).fetchone()[0])  # type: ignore[index]
    with sqlite3.connect(db) as raw:
        return int(raw.execute(question).fetchone()[0])


def report(name: str, run: Run, wall: float, turns: int, before: int, db: Target) -> dict[str, Any]:
    """One run's row: calls/s, p50/p95 per kind, the writer, the jobs before and after."""
    calls = sum(len(samples) for samples in run.calls.values())
    return {
        "through": name,
        "calls": calls,
        "wall_s": round(wall, 2),
        "calls_per_s": round(calls / wall, 1),
        "kinds": {kind: {"n": len(s), **summary(s)} for kind, s in sorted(run.calls.items())},
        "all": summary([ms for samples in run.calls.values() for ms in samples]),
        "writer": {"turns": turns, **(summary(run.writer_ms) if run.writer_ms else {})},
        "jobs_pending_before": before,
        "jobs_pending_after": pending_jobs(db),
    }


async def through_mcp(
    db: Path, folder: Path, queries: Sequence[str], clients: int, calls: int, gap: float
) -> dict[str, Any]:
    run, before = Run(), pending_jobs(db)
    homes = [folder / f"mcp-{index}" for index in range(clients + 1)]
    for home in homes:
        home.mkdir(parents=True, exist_ok=True)
    shares = client_queries(queries, clients, calls)
    readers = [
        mcp_reader(mcp_params(db, home), share, run)
        for home, share in zip(homes, shares, strict=False)
    ]
    writer = mcp_writer(mcp_params(db, homes[-1]), queries, run, gap)
    wall, turns = await clients_at_once(readers, writer, run, clients + 1)
    return report("mcp", run, wall, turns, before, db)


def http_url(kind: str, query: str) -> str:
    space, word = f"space={SPACE}", quote(query.split()[-1])
    return {
        "events_filter": f"/memory/events?{space}&q={word}",
        "topics_query": f"/memory/topics?{space}&q={quote(query)}",
        "graph_page": f"/memory/graph?{space}",
        "blocks_page": f"/memory/blocks?{space}&thread=t{THREADS - 1}",
    }[kind]


async def http_reader(base: str, queries: Sequence[str], run: Run) -> None:
    async with httpx.AsyncClient(base_url=base, timeout=120) as client:
        for kind in HTTP_KINDS:
            (await client.get(http_url(kind, queries[0]))).raise_for_status()
        await _ready(run)
        for index, query in enumerate(queries):
            kind = HTTP_KINDS[index % len(HTTP_KINDS)]
            started = time.perf_counter()
            (await client.get(http_url(kind, query))).raise_for_status()
            run.add(kind, started)


@dataclass(frozen=True)
class Serve:
    """How the HTTP run starts ``serve``: its ``--processes`` (None: its default) and the
    checkout whose code it runs (None: this one), to compare another version's ``serve``
    under the same clients."""

    processes: int | None = None
    code: Path | None = None


@contextmanager
def served(db: Target, home: Path, how: Serve) -> Iterator[tuple[str, int]]:
    """``stratagate serve`` on a free loopback port, on ``db`` (a profile naming it), until
    the block ends; its base URL and process id."""
    write_profile(db, home)
    command = [*CLI, "serve", "--profile", "bench", "--port", "0"]
    command += [] if how.processes is None else ["--processes", str(how.processes)]
    env = child_env(home, {"PYTHONPATH": str(how.code)} if how.code else None)
    log = (home / "serve.log").open("wb")
    server = subprocess.Popen(  # in ``code`` (``-m`` puts the cwd first on the path)
        command, env=env, stdout=subprocess.PIPE, stderr=log, cwd=how.code
    )
    try:
        assert server.stdout is not None
        line = server.stdout.readline().decode()
        found = SERVING.search(line)
        if found is None:
            raise SystemExit(f"scale_concurrency: serve did not start ({home / 'serve.log'})")
        yield found.group(1), server.pid
    finally:
        server.terminate()
        server.wait(timeout=60)
        log.close()


def write_profile(db: Target, home: Path) -> None:
    """The ``bench`` profile: the memory plugin on ``db``, no idle sealing in the run."""
    settings = {"database": str(db), "seal_idle_minutes": 10**9}
    profile = {
        "name": "bench",
        "plugins": ["stratagate-memory"],
        "settings": {"stratagate-memory": settings},
    }
    folder = home / "profiles"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "bench.yml").write_text(json.dumps(profile), encoding="utf-8")  # JSON is YAML


async def through_http(
    db: Path,
    folder: Path,
    queries: Sequence[str],
    clients: int,
    calls: int,
    gap: float,
    how: Serve = Serve(),
) -> dict[str, Any]:
    home, writer_home = folder / "serve", folder / "http-writer"
    for path in (home, writer_home):
        path.mkdir(parents=True, exist_ok=True)
    with served(db, home, how) as (base, pid):
        run, before, cpu = Run(), pending_jobs(db), []
        shares = client_queries(queries, clients, calls)
        readers = [http_reader(base, share, run) for share in shares]
        writer = mcp_writer(mcp_params(db, writer_home), queries, run, gap)

        def mark() -> None:
            cpu.append(tree_cpu(pid))

        wall, turns = await clients_at_once(readers, writer, run, clients + 1, mark)
        mark()
        row = report("http", run, wall, turns, before, db)
        row["cpu_ms_per_call"] = {
            role: round((cpu[1][role] - cpu[0].get(role, 0.0)) * 1000 / row["calls"], 1)
            for role in cpu[1]
        }
        return row


def tree_cpu(pid: int) -> dict[str, float]:
    """CPU seconds so far of ``serve`` (``pid``) and its children, by role: ``web`` (the
    web processes) and ``worker`` (Linux ``/proc``; a child restarted meanwhile counts from
    its restart)."""
    tick = os.sysconf("SC_CLK_TCK")
    found = {"web": 0.0, "worker": 0.0}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            command = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if int(entry.name) == pid or int(fields[1]) == pid:
            role = "worker" if b"worker:" in command else "web"
            found[role] += (int(fields[11]) + int(fields[12])) / tick
    return found


Measure = Callable[
    [Path, Path, Sequence[str], int, int, float], Coroutine[Any, Any, dict[str, Any]]
]


def concurrency(
    db: Path,
    folder: Path,
    queries: Sequence[str],
    clients: int,
    calls: int,
    gap: float,
    through: str = "both",
    how: Serve = Serve(),
) -> list[dict[str, Any]]:
    """Both runs (``through``: or one), MCP first, then HTTP, each with its writer
    (``how``: how HTTP's ``serve`` starts)."""
    runs: list[Measure] = [through_mcp, functools.partial(through_http, how=how)]
    if through != "both":
        runs = [runs[0]] if through == "mcp" else [runs[1]]
    return [asyncio.run(measure(db, folder, queries, clients, calls, gap)) for measure in runs]


def print_table(rows: list[dict[str, Any]]) -> None:
    heads = ("n", "p50 ms", "p95 ms")
    print(f"{'through / call':<28}" + "".join(f"{head:>10}" for head in heads))
    for row in rows:
        total = f"{row['through']}: all ({row['calls_per_s']} calls/s)"
        print(f"{total:<28}{row['calls']:>10}{row['all']['p50_ms']:>10}{row['all']['p95_ms']:>10}")
        for kind, cell in row["kinds"].items():
            print(f"{'  ' + kind:<28}{cell['n']:>10}{cell['p50_ms']:>10}{cell['p95_ms']:>10}")
        writer = row["writer"]
        cells = (writer["turns"], writer.get("p50_ms", "-"), writer.get("p95_ms", "-"))
        print(f"{'  writer (turns)':<28}" + "".join(f"{cell:>10}" for cell in cells))
        if "cpu_ms_per_call" in row:
            shares = ", ".join(f"{role} {ms}" for role, ms in row["cpu_ms_per_call"].items())
            print(f"  cpu ms per call: {shares}")
    sys.stdout.flush()
