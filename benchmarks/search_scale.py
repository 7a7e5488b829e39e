"""Search at scale: the agent-facing reads over a large namespace, bm25s in the same run.

    PYTHONPATH=. .venv/bin/python benchmarks/search_scale.py --json /tmp/search_scale.json
    PYTHONPATH=. .venv/bin/python benchmarks/search_scale.py --growth --json /tmp/growth.json
    PYTHONPATH=. .venv/bin/python benchmarks/search_scale.py --concurrency --keep /tmp/s.db
    PYTHONPATH=. .venv/bin/python benchmarks/search_scale.py --keep /tmp/s.db \
        --db postgresql://localhost/scale

Options: ``--events 100000 --messages 500000 --queries 200 --seed 7 --nodes 3000
--chapters 300``; ``--keep DB`` builds the database there once and reuses it (queries come
from their own seed, so a reused database gets the same queries). Three runs, one a call:

- the default, the **main table** (about 4–5 minutes on 2 cores at full size, build
  included): ~200 queries through each operation of ``scale_measure.py`` (p50/p95 ms),
  the same queries through bm25s over the same texts (``scale_bm25s.py``: its own
  ``retrieve`` and top-k over the non-zero scores, the faster taken as the baseline) and
  the p50 ratio (``--drain``: after the jobs that opening the corpus queues have run, so
  ``list_topics`` and recall's directory read the whole projected catalog, thousands of
  chapters, rather than the ``--chapters`` written before them); peak memory is the
  process's maximum resident set size (``getrusage``);
- ``--growth``: the main table at each of ``--growth-sizes`` messages, events 1:5
  (``scale_growth.py``), then one table of p50/p95 per operation and size;
- ``--apps 1,2``: that many ``serve`` processes on one database, ``--clients`` HTTP clients
  and a writer each, counts alternating over ``--rounds`` (``scale_apps.py``): requests/s
  and the ratio to one app, on the SQLite file and (``--db``) on the server;
- ``--concurrency``: ``--clients`` clients at once through MCP and through HTTP, each
  run with a writer recording turns (``scale_concurrency.py``): calls/s, p50/p95 per call;
  ``--through http`` (or ``mcp``) runs one path only (the MCP run takes minutes at 100k).

``--db postgresql://…`` (the main table): the corpus is copied onto that server (an empty
database: ``stratagate db copy``'s copy; a database already holding it is reused), and the
same operations are measured there after SQLite's, in the same run: a second table (bm25s
is measured once: the texts are the same).

The corpus (``scale_corpus.py``) is written straight through the store's own insert
code, then a graph and topic catalog (``scale_graph.py``); the build checks that the next
turn seals. Each run prints its table and the JSON (``--json`` writes it). Needs
``pip install bm25s``.
"""

import argparse
import asyncio
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.scale_apps import apps_run, drain, print_ratios
from benchmarks.scale_concurrency import THROUGH, Serve, Target, concurrency
from benchmarks.scale_concurrency import print_table as print_concurrency
from benchmarks.scale_corpus import CorpusSize, corpus_queries, ensure_corpus
from benchmarks.scale_growth import GROWTH_SIZES, growth, print_growth
from benchmarks.scale_measure import measure_corpus, measure_ours, print_memory, print_table
from benchmarks.scale_stats import summary
from benchmarks.scale_verdict import as_json, concurrency_checks, main_checks, print_verdict
from stratagate_plugin.core.events.documents import EVENT_RULES
from stratagate_plugin.core.store.copy import copy_between, migrate
from stratagate_plugin.core.store.postgres import PostgresDatabase


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--messages", type=int, default=500_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--nodes", type=int, default=3000, help="graph nodes to project")
    parser.add_argument("--chapters", type=int, default=300, help="topic chapters to write")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--keep", type=Path, help="keep the database here (reused if present)")
    parser.add_argument("--db", help="a postgresql:// URL: the main table there too")
    parser.add_argument(
        "--only", action="append", default=[], help="measure only this operation (repeat)"
    )
    runs = parser.add_mutually_exclusive_group()
    runs.add_argument("--growth", action="store_true", help="the table at growing sizes")
    runs.add_argument("--concurrency", action="store_true", help="many clients at once")
    runs.add_argument(
        "--apps",
        type=lambda text: [int(part) for part in text.split(",")],
        help="`serve` processes on one database, e.g. 1,2: throughput of each (scale_apps.py)",
    )
    parser.add_argument("--rounds", type=int, default=2, help="--apps: rounds of every count")
    parser.add_argument(
        "--drain",
        action="store_true",
        help="run the jobs opening the corpus queued first (its graph and topic back-fill)",
    )
    parser.add_argument(
        "--growth-sizes",
        type=lambda text: [int(part) for part in text.split(",")],
        default=list(GROWTH_SIZES),
        help="messages per corpus, comma-separated (default: %(default)s)",
    )
    parser.add_argument("--growth-dir", type=Path, help="keep the growth databases here")
    parser.add_argument("--clients", type=int, default=8, help="concurrent clients")
    parser.add_argument("--calls", type=int, default=60, help="timed calls per client")
    parser.add_argument(
        "--writer-interval", type=float, default=0.2, help="seconds between the writer's turns"
    )
    parser.add_argument(
        "--through",
        choices=THROUGH,
        default="both",
        help="the concurrency run's paths: MCP, HTTP or both (default)",
    )
    parser.add_argument(
        "--serve-processes",
        type=int,
        default=None,
        help="the HTTP run's `serve --processes` (default: serve's own default)",
    )
    parser.add_argument(
        "--serve-code",
        type=Path,
        default=None,
        help="the checkout whose `serve` the HTTP run starts (default: this one)",
    )
    return parser.parse_args()


def main() -> None:
    args = parse_args()
    queries = corpus_queries(args.seed, args.queries)
    unsaid = ("json", "keep", "growth_dir", "growth", "concurrency", "serve_code", "db", "apps")
    settings = {k: v for k, v in vars(args).items() if k not in unsaid}
    if args.growth:
        rows = growth(
            args.growth_sizes, queries, args.nodes, args.chapters, args.seed, args.growth_dir
        )
        print_growth(rows)
        result: dict[str, Any] = {"run": "growth", **settings, "sizes": rows}
    else:
        with tempfile.TemporaryDirectory() as tmp:
            path = args.keep or Path(tmp) / "scale.db"
            size = CorpusSize(args.events, args.messages, args.nodes, args.chapters, args.seed)
            build = ensure_corpus(path, size)
            if args.drain and not args.apps:  # --apps drains each of its databases
                build["drain_s"] = drain(path, Path(tmp))
            if args.concurrency:
                result = {**settings, "build": build}
                result |= concurrent_run(args, path, Path(tmp), queries)
            elif args.apps:
                result = {**settings, "build": build, **apps_table(args, path, Path(tmp), queries)}
            else:
                result = {**settings, "build": build, **main_table(args, path, queries)}
                if args.db:
                    result["postgresql"] = server_table(args, path, queries)
    print(json.dumps(result, indent=2))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")


def main_table(args: argparse.Namespace, path: Path, queries: list[str]) -> dict[str, Any]:
    latency, figures = measure_corpus(path, queries, args.only)
    print_table(latency)
    print_memory(figures)
    result = {"run": "main", **figures, "latency": latency}
    checks = main_checks(result)
    print_verdict(checks)
    return result | {"verdict": as_json(checks)}


def server_table(args: argparse.Namespace, path: Path, queries: list[str]) -> dict[str, Any]:
    """The same operations on a copy of the corpus on the server at ``args.db``."""
    copied = asyncio.run(server_copy(path, args.db))
    samples, _ = asyncio.run(measure_ours(args.db, queries, args.only))
    rows = {name: summary(values) for name, values in samples.items()}
    print_table(rows, "postgresql")
    return {"copy_s": copied, "latency": rows}


async def server_copy(path: Path, url: str) -> float | None:
    """The corpus copied to ``url`` unless it holds it already, then its tables analysed (a
    fresh copy has no statistics: the planner would guess); the copy's seconds."""
    await migrate(url, EVENT_RULES)
    database = await PostgresDatabase(url, connections=1).open()
    try:
        row = await database.read(
            lambda conn: conn.execute("SELECT count(*) FROM messages").fetchone()
        )
        copied = None
        if row is None or not row[0]:
            started = time.perf_counter()
            await copy_between(str(path), url, EVENT_RULES)
            copied = round(time.perf_counter() - started, 1)
        await database.outside_transaction(lambda conn: conn.execute("ANALYZE"))
    finally:
        await database.close()
    return copied


def apps_table(
    args: argparse.Namespace, path: Path, folder: Path, queries: list[str]
) -> dict[str, Any]:
    """``--apps``: the counts of ``serve`` on the SQLite file, and on the server's copy."""
    targets: dict[str, Target] = {"sqlite": path}
    if args.db:
        targets["postgresql"] = args.db
        asyncio.run(server_copy(path, args.db))
    how = Serve(args.serve_processes or 1, args.serve_code)
    drained = {name: drain(db, folder) for name, db in targets.items()} if args.drain else {}
    result = apps_run(
        targets,
        folder,
        queries,
        args.apps,
        args.rounds,
        args.clients,
        args.calls,
        args.writer_interval,
        how,
    )
    print_ratios(result)
    return {"run": "apps", "drain_s": drained, **result}


def concurrent_run(
    args: argparse.Namespace, path: Path, folder: Path, queries: list[str]
) -> dict[str, Any]:
    rows = concurrency(
        path,
        folder,
        queries,
        args.clients,
        args.calls,
        args.writer_interval,
        args.through,
        Serve(args.serve_processes, args.serve_code),
    )
    print_concurrency(rows)
    checks = concurrency_checks(rows)
    print_verdict(checks)
    return {"run": "concurrency", "clients_at_once": rows, "verdict": as_json(checks)}


if __name__ == "__main__":
    main()
