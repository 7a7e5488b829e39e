"""Derivation throughput: the dev conversations derived with K model calls in flight (#14).

    .venv/bin/python benchmarks/derive_throughput.py [--k 1,4,8] [--delay 0.3] \\
        [--data ../shared/locomo/locomo-dev.json] [--conversations N] [--block-turns 12] \\
        [--json OUT]

The model is a stand-in on loopback, in its own process (``stratagate_plugin.bench.
model_server``): it answers every summary and extraction with what the offline model gives
for the request's payload, as the forced tool call, ``--delay`` seconds after the request.
The conversations are recorded once (a LoCoMo sample is a namespace, a session a thread,
``--block-turns`` turns a block: 12, the core default, gives #14's 166 jobs, 160 requests
as pre-screened blocks skip the extraction call) and each K derives a copy of that file,
so runs compare event for event. Ideal wall time is calls × delay / K. "same-as-K1"
compares the events (block, title, sources) with the offline model run in process by one
worker; "links≠" counts the events whose relations or status differ from that run's (an
extraction may miss another thread's events in flight: docs/derivation-throughput.md).
"""

import argparse
import asyncio
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from stratagate_plugin.bench.locomo import ingest, load_samples, sessions_of
from stratagate_plugin.bench.model_server import event_fingerprints
from stratagate_plugin.core.config import MemoryConfig
from stratagate_plugin.core.llm.base import StructuredModel
from stratagate_plugin.core.llm.http import HttpModel, HttpModelConfig
from stratagate_plugin.core.llm.offline.model import OfflineModel
from stratagate_plugin.core.memory import StrataGate

DEV_DATA = Path(__file__).resolve().parents[2] / "shared" / "locomo" / "locomo-dev.json"
PROXY_VARS = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")
Fingerprints = set[tuple[Any, ...]]


async def record(path: Path, samples: list[dict[str, Any]], block_turns: int) -> None:
    async with await StrataGate.open(path, MemoryConfig(block_turn_size=block_turns)) as memory:
        for sample in samples:
            await ingest(memory, str(sample["sample_id"]), sessions_of(sample["conversation"]))


async def derive(path: Path, model: StructuredModel, k: int) -> tuple[float, Fingerprints]:
    """Wall seconds of one pass with ``k`` workers, and what it derived."""
    async with await StrataGate.open(path, model=model) as memory:
        started = time.perf_counter()
        report = await memory.derivation.process_pending(concurrency=k)
        wall = time.perf_counter() - started
        if report.failed:
            raise SystemExit(f"K={k}: {report.failed} jobs failed: {report.errors[:3]}")
        return wall, event_fingerprints(await memory.events.cards(include_hidden=True))


def copy_database(source: Path, target: Path) -> Path:
    with sqlite3.connect(source) as src, sqlite3.connect(target) as dst:
        src.backup(dst)
    return target


def start_server(delay: float) -> tuple[subprocess.Popen[str], str]:
    """The stand-in model in its own process (its work then takes no time from the client's)."""
    command = [sys.executable, "-m", "stratagate_plugin.bench.model_server", "--delay", str(delay)]
    server = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    assert server.stdout is not None
    base_url = server.stdout.readline().strip()
    if not base_url:
        raise SystemExit("the stand-in model server did not start")
    return server, base_url


def one_k(
    folder: Path, base_url: str, k: int, delay: float, reference: Fingerprints
) -> dict[str, Any]:
    httpx.post(f"{base_url}/stats")  # counts start again
    model = HttpModel(HttpModelConfig(base_url=base_url, model="stand-in"))
    wall, derived = asyncio.run(
        derive(copy_database(folder / "recorded.db", folder / f"k{k}.db"), model, k)
    )
    stats = httpx.post(f"{base_url}/stats").json()
    ideal = stats["requests"] * delay / k
    return {
        "k": k,
        "calls": stats["requests"],
        "delay_s": delay,
        "wall_s": round(wall, 3),
        "ideal_s": round(ideal, 3),
        "ratio": round(wall / ideal, 3),
        "events": len(derived),
        "same_as_k1": {card for card, _, _ in derived} == {card for card, _, _ in reference},
        "other_links": len(derived - reference),  # cards whose links or status differ
        "peak_in_flight": stats["peak_in_flight"],
    }


def print_table(rows: list[dict[str, Any]]) -> None:
    print(f"{'K':>3}{'calls':>7}{'delay':>7}{'wall s':>9}{'ideal s':>9}{'ratio':>7}"
          f"{'events':>8}{'same-as-K1':>12}{'links≠':>8}{'peak':>6}")  # fmt: skip
    for r in rows:
        print(
            f"{r['k']:>3}{r['calls']:>7}{r['delay_s']:>7.2f}{r['wall_s']:>9.2f}"
            f"{r['ideal_s']:>9.2f}{r['ratio']:>7.2f}{r['events']:>8}"
            f"{'yes' if r['same_as_k1'] else 'NO':>12}{r['other_links']:>8}"
            f"{r['peak_in_flight']:>6}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--k", default="1,4,8", help="worker counts, comma-separated")
    parser.add_argument("--delay", type=float, default=0.3, help="seconds per model answer")
    parser.add_argument("--data", type=Path, default=DEV_DATA, help="LoCoMo-format JSON file")
    parser.add_argument("--conversations", type=int, default=None, help="only the first N")
    parser.add_argument("--block-turns", type=int, default=12)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    for var in PROXY_VARS:  # the stand-in is on loopback
        os.environ.pop(var, None)
    samples = load_samples(args.data)[: args.conversations]
    ks = [int(k) for k in args.k.split(",")]
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        asyncio.run(record(folder / "recorded.db", samples, args.block_turns))
        offline = copy_database(folder / "recorded.db", folder / "offline.db")
        _, reference = asyncio.run(derive(offline, OfflineModel(), 1))
        server, base_url = start_server(args.delay)
        try:
            rows = [one_k(folder, base_url, k, args.delay, reference) for k in ks]
        finally:
            server.terminate()
            server.wait(timeout=10)
    print_table(rows)
    result = {
        "data": str(args.data),
        "conversations": len(samples),
        "block_turns": args.block_turns,
        "rows": rows,
    }
    print(json.dumps(result))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
