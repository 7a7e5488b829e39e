"""CPU time per call of the agent's searches on a kept ``search_scale.py`` corpus.

    PYTHONPATH=. .venv/bin/python benchmarks/scale_cpu.py /tmp/s500k.db --json /tmp/cpu.json

On a shared machine a call's wall time measures the load as much as the code; its CPU time
(the process's, every thread's: the reader pool runs the reads) is what decides the tail
when eight server processes share two cores (issue #29). Each operation of
``scale_measure.py`` that ranks text runs over the benchmark's queries (``--queries``,
``--seed`` as there) after a warm-up of five; p50/p95 of CPU and wall milliseconds are
printed. To compare two commits, run it at each, back to back, on the same file.
``--settle-heap`` freezes the objects alive after opening, as ``serve`` and ``mcp`` do before
serving (``cli.common.settle_heap``): the tail without the collector's full passes.
``--timed`` ends each query with a time it names ("… last week", "… in March"): the
questions whose windows vote on when a message was said or its event happened.
"""

import argparse
import asyncio
import json
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from benchmarks.scale_corpus import SPACE, THREADS, corpus_queries
from benchmarks.scale_stats import summary
from stratagate_plugin.cli.common import settle_heap
from stratagate_plugin.core.events.documents import EVENT_RULES
from stratagate_plugin.core.memory import StrataGate
from stratagate_plugin.core.store import Database

WARM_UP = 5
TIMES = ("last week", "in March", "yesterday", "on Friday", "in 2024")


def timed(queries: list[str]) -> list[str]:
    """Each query naming a time, the times in turn."""
    return [f"{query} {TIMES[i % len(TIMES)]}" for i, query in enumerate(queries)]


async def measure(
    path: Path, queries: list[str], settle: bool = False, only: list[str] | None = None
) -> dict[str, dict[str, Any]]:
    """Per operation (``only`` those named): CPU and wall p50/p95 in ms."""
    sg = StrataGate(await Database(path, events=EVENT_RULES).open())
    if settle:
        settle_heap()
    thread = f"t{THREADS - 1}"
    operations: dict[str, Callable[[str], Awaitable[Any]]] = {
        "search_events": lambda q: sg.events.search(SPACE, q),
        "search_raw_ranked": lambda q: sg.retrieval.search_raw_ranked(SPACE, q),
        "build_auto_context": lambda q: sg.retrieval.auto_context(SPACE, thread, q),
        "search_graph": lambda q: sg.graph.search(SPACE, q),
    }
    rows = {}
    for name, run in operations.items():
        if only and name not in only:
            continue
        for query in queries[:WARM_UP]:
            await run(query)
        cpu, wall = [], []
        for query in queries:
            started, clock = time.process_time(), time.perf_counter()
            await run(query)
            cpu.append((time.process_time() - started) * 1000)
            wall.append((time.perf_counter() - clock) * 1000)
        rows[name] = {"cpu": summary(cpu), "wall": summary(wall)}
    await sg.close()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("db", type=Path, help="a corpus kept by search_scale.py --keep")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--settle-heap", action="store_true", help="freeze as the servers do")
    parser.add_argument("--only", action="append", help="an operation to run (repeatable)")
    parser.add_argument("--timed", action="store_true", help="each query names a time")
    args = parser.parse_args()
    queries = corpus_queries(args.seed, args.queries)
    queries = timed(queries) if args.timed else queries
    rows = asyncio.run(measure(args.db, queries, args.settle_heap, args.only))
    heads = ("cpu p50", "cpu p95", "wall p50", "wall p95")
    print(f"{'operation':<20}" + "".join(f"{head:>10}" for head in heads))
    for name, row in rows.items():
        cells = [row[kind][f"{p}_ms"] for kind in ("cpu", "wall") for p in ("p50", "p95")]
        print(f"{name:<20}" + "".join(f"{cell:>10}" for cell in cells))
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2) + "\n")


if __name__ == "__main__":
    main()
