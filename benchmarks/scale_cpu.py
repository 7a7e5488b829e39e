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

The corpus may be a ``postgresql://`` URL of a copy of it (``search_scale.py --db``); there
each call's statements, units and round trips are counted too (``statement_counts.py``:
deterministic where latency is not; mean per call). ``--results FILE`` writes what each
call returned, to compare two commits' answers with ``cmp``: run each on a fresh copy of the
same corpus (calls write: they stamp what they found), with the clock fixed per call
(``fix_clock``) so that the stamps' times match too, and on PostgreSQL over one connection:
over a pool of four, rows equal in rank came back in another order from run to run
(probably as old row versions are pruned at times the other connections' snapshots set).
"""

import argparse
import asyncio
import json
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from benchmarks.scale_corpus import SPACE, THREADS, corpus_queries
from benchmarks.scale_stats import summary
from benchmarks.statement_counts import Counts, counting
from stratagate_plugin.cli.common import settle_heap
from stratagate_plugin.core import clock
from stratagate_plugin.core.events.documents import EVENT_RULES
from stratagate_plugin.core.memory import StrataGate
from stratagate_plugin.core.store import Database
from stratagate_plugin.core.store.postgres.db import DEFAULT_CONNECTIONS
from stratagate_plugin.core.store.postgres.engine_db import EngineDatabase
from stratagate_plugin.core.store.units import URL_SCHEMES

WARM_UP = 5
TIMES = ("last week", "in March", "yesterday", "on Friday", "in 2024")


FIXED_START = datetime(2026, 1, 1, tzinfo=UTC)


def fix_clock(call: int) -> None:
    """ "Now" is one moment for the whole call, a second after the previous call's: what a
    call stamps is then the same whatever else read the clock (the pool's threads do)."""
    moment = FIXED_START + timedelta(seconds=call)
    clock.use_test_clock(lambda: moment)


def timed(queries: list[str]) -> list[str]:
    """Each query naming a time, the times in turn."""
    return [f"{query} {TIMES[i % len(TIMES)]}" for i, query in enumerate(queries)]


async def open_corpus(where: str, connections: int = DEFAULT_CONNECTIONS) -> StrataGate:
    """The corpus file, or its copy on a PostgreSQL server (``connections`` in the pool)."""
    if where.startswith(URL_SCHEMES):
        server = EngineDatabase(where, events=EVENT_RULES, connections=connections)
        return StrataGate(await server.open())
    return StrataGate(await Database(Path(where), events=EVENT_RULES).open())


def operations(sg: StrataGate) -> dict[str, Callable[[str], Awaitable[Any]]]:
    thread = f"t{THREADS - 1}"
    return {
        "search_events": lambda q: sg.events.search(SPACE, q),
        "search_raw_ranked": lambda q: sg.retrieval.search_raw_ranked(SPACE, q),
        "build_auto_context": lambda q: sg.retrieval.auto_context(SPACE, thread, q),
        "search_graph": lambda q: sg.graph.search(SPACE, q),
        "list_topics": lambda q: sg.topics.catalog(SPACE, query=q),
    }


async def measure(
    where: str,
    queries: list[str],
    settle: bool = False,
    only: list[str] | None = None,
    answers: dict[str, list[Any]] | None = None,
) -> dict[str, dict[str, Any]]:
    """Per operation (``only`` those named): CPU and wall p50/p95 in ms, and on PostgreSQL
    the statements each call sent; each call's result into ``answers`` when given."""
    sg = await open_corpus(where, DEFAULT_CONNECTIONS if answers is None else 1)
    if settle:
        settle_heap()
    rows = {}
    calls = 0
    for name, run in operations(sg).items():
        if only and name not in only:
            continue
        cpu, wall, counted = [], [], []
        for index, query in enumerate([*queries[:WARM_UP], *queries]):
            if answers is not None:
                fix_clock(calls := calls + 1)
            with counting() as counts:
                started, clock_started = time.process_time(), time.perf_counter()
                result = await run(query)
                cpu_ms = (time.process_time() - started) * 1000
                wall_ms = (time.perf_counter() - clock_started) * 1000
            if index < WARM_UP:
                continue
            cpu.append(cpu_ms)
            wall.append(wall_ms)
            counted.append(counts)
            if answers is not None:
                answers.setdefault(name, []).append(plain(result))
        rows[name] = {"cpu": summary(cpu), "wall": summary(wall), **per_call(counted)}
    await sg.close()
    return rows


def per_call(counted: list[Counts]) -> dict[str, Any]:
    """Statements, units and round trips per call: mean and most (none on SQLite)."""
    if not any(c.trips for c in counted):
        return {}
    return {
        kind: {
            "mean": round(sum(getattr(c, kind) for c in counted) / len(counted), 1),
            "max": max(getattr(c, kind) for c in counted),
        }
        for kind in ("statements", "units", "trips")
    }


def plain(result: Any) -> Any:
    """A call's result as JSON values (models by their fields, floats exact)."""
    if hasattr(result, "model_dump"):
        return result.model_dump(mode="json")
    if isinstance(result, dict):
        return {str(key): plain(value) for key, value in result.items()}
    if isinstance(result, list | tuple):
        return [plain(item) for item in result]
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("db", help="a corpus kept by search_scale.py --keep, or its URL")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--settle-heap", action="store_true", help="freeze as the servers do")
    parser.add_argument("--only", action="append", help="an operation to run (repeatable)")
    parser.add_argument("--timed", action="store_true", help="each query names a time")
    parser.add_argument("--results", type=Path, help="write each call's result here")
    args = parser.parse_args()
    queries = corpus_queries(args.seed, args.queries)
    queries = timed(queries) if args.timed else queries
    answers: dict[str, list[Any]] | None = {} if args.results else None
    rows = asyncio.run(measure(args.db, queries, args.settle_heap, args.only, answers))
    print_rows(rows)
    if args.results:
        args.results.write_text(json.dumps(answers, indent=1, sort_keys=True) + "\n")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2) + "\n")


def print_rows(rows: dict[str, dict[str, Any]]) -> None:
    heads = ("cpu p50", "cpu p95", "wall p50", "wall p95", "stmts", "units", "trips")
    print(f"{'operation':<20}" + "".join(f"{head:>10}" for head in heads))
    for name, row in rows.items():
        cells = [row[kind][f"{p}_ms"] for kind in ("cpu", "wall") for p in ("p50", "p95")]
        cells += [
            row[kind]["mean"] if kind in row else "-" for kind in ("statements", "units", "trips")
        ]
        print(f"{name:<20}" + "".join(f"{cell:>10}" for cell in cells))


if __name__ == "__main__":
    main()
