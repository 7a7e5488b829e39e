"""``stratagate mcp`` as a client sees it: start-up, recording and search round trips.

    .venv/bin/python benchmarks/mcp_roundtrip.py --turns 60 --searches 100 --json /tmp/mcp.json

Spawns the command with the SDK's stdio client in a fresh home (block size 6, the offline
model), times the spawn up to the first ``tools/list`` answer, ``memory_record_turn`` for
each turn, the wait after the last one until an event is searchable (the derivation worker
in the server process), then ``memory_search_events`` + ``memory_record_use`` pairs.
Beside the searches, the same queries through the façade in this process on the same
database, each opening its batch as the tool does: the ratio is what the protocol, the
process boundary and the result's JSON add.
"""

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from mcp import Client
from mcp.client.stdio import StdioServerParameters

from stratagate_plugin.core.memory import StrataGate

WORDS = [
    "Alice",
    "Lisbon",
    "bakery",
    "river",
    "Bob",
    "Paris",
    "conference",
    "train",
    "budget",
    "garden",
]


def turn(index: int) -> tuple[str, str]:
    a, b = WORDS[index % len(WORDS)], WORDS[(index * 3 + 1) % len(WORDS)]
    return f"On day {index} {a} talked about the {b} plan.", f"Noted the {b} plan for {a}."


def summary(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "n": len(ordered),
        "p50_ms": round(statistics.median(ordered) * 1000, 2),
        "p95_ms": round(ordered[int(0.95 * (len(ordered) - 1))] * 1000, 2),
    }


async def timed(client: Client, tool: str, arguments: dict[str, Any]) -> tuple[float, Any]:
    started = time.perf_counter()
    result = await client.call_tool(tool, arguments)
    if result.is_error:
        raise SystemExit(f"{tool} failed: {result.content}")
    return time.perf_counter() - started, result.structured_content


async def run(home: Path, turns: int, searches: int) -> dict[str, Any]:
    project = home.parent / "project"
    project.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("STRATAGATE_")}
    env["STRATAGATE_HOME"] = str(home)
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[1])
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "stratagate_plugin.cli.main", "mcp"],
        env=env,
        cwd=str(project),
    )
    report: dict[str, Any] = {}
    started = time.perf_counter()
    async with Client(params) as client:
        await client.list_tools()
        report["startup_ms"] = round((time.perf_counter() - started) * 1000, 1)
        recorded = []
        for i in range(turns):
            user, assistant = turn(i)
            arguments = {"user": user, "assistant": assistant}
            recorded.append(await timed(client, "memory_record_turn", arguments))
        report["record_turn"] = summary([seconds for seconds, _ in recorded])
        space = recorded[0][1]["namespace"]
        recorded_at = time.perf_counter()
        while True:
            _, found = await timed(client, "memory_search_events", {"query": "Alice plan"})
            await timed(
                client, "memory_record_use", {"batch_id": found["batchId"], "evidence_refs": []}
            )
            if found["results"]:
                break
            await asyncio.sleep(0.05)
        report["first_event_after_recording_ms"] = round(
            (time.perf_counter() - recorded_at) * 1000, 1
        )
        rounds = []
        for i in range(searches):
            query = f"{WORDS[i % len(WORDS)]} plan"
            seconds, found = await timed(client, "memory_search_events", {"query": query})
            await timed(
                client, "memory_record_use", {"batch_id": found["batchId"], "evidence_refs": []}
            )
            rounds.append(seconds)
        report["search_events"] = summary(rounds)
    memory = await StrataGate.open(home / "memory.db")
    async with memory:
        direct = []
        for i in range(searches):
            began = time.perf_counter()
            hits = await memory.events.search(space, f"{WORDS[i % len(WORDS)]} plan", limit=6)
            refs = [f"event:{hit.card.id}" for hit in hits]
            await memory.gate.open_batch(space, "bench", "memory_search_events", refs)
            direct.append(time.perf_counter() - began)
    report["search_events_in_process"] = summary(direct)
    report["search_ratio_p50"] = round(
        report["search_events"]["p50_ms"] / report["search_events_in_process"]["p50_ms"], 2
    )
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=60)
    parser.add_argument("--searches", type=int, default=100)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        report = asyncio.run(run(Path(folder) / "home", args.turns, args.searches))
    text = json.dumps(report, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
