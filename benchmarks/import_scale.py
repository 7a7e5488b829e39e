"""External-memory import at size: analysis, commit and undo, and the wizard's job page.

    PYTHONPATH=. .venv/bin/python benchmarks/import_scale.py --items 2000 --json /tmp/import.json

Starts the host with the memory plugin and the web app as ``stratagate serve`` builds it
(offline model, a fresh ``$STRATAGATE_HOME``), posts a pasted list of ``--items`` saved
memories to the wizard (read as ``lines``), lets the plugin's worker analyse it, then times
in process (``httpx.ASGITransport``, no socket): the job page's poll fragment and the whole
page (``--rounds`` each, p50/p95 and bytes), beside a plain ``SELECT`` of the job's item
rows on its own connection in the same run (the ratio is what the page adds over reading
its rows); then the commit and the undo of the batch.

    PYTHONPATH=. .venv/bin/python benchmarks/import_scale.py --cli 100,200,400,2000 \
        [--code /path/to/other/checkout] [--limit-s 300]

``--cli`` times ``stratagate import FILE`` (preview: parse and analyse) and then
``stratagate import FILE --commit`` in child processes, per size, each in a fresh home:
wall clock including the interpreter's start (about 2-3 s here). ``--code`` runs another
checkout's code (the "before" column); a run past ``--limit-s`` is reported as not done.
"""

import argparse
import asyncio
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from tests.webapp import memory_of, post, web_app


def pasted_list(items: int) -> str:
    return "\n".join(
        f"- Saved memory {i}: likes kiln glaze {i * 7} in topic {i % 37}" for i in range(items)
    )


async def timed(call: Callable[[], Awaitable[Any]], rounds: int) -> tuple[list[float], Any]:
    took, last = [], None
    for _ in range(rounds):
        start = time.perf_counter()
        last = await call()
        took.append((time.perf_counter() - start) * 1000)
    return took, last


def summary(took: list[float]) -> dict[str, float]:
    ordered = sorted(took)
    return {
        "p50_ms": round(statistics.median(ordered), 2),
        "p95_ms": round(ordered[max(0, int(len(ordered) * 0.95) - 1)], 2),
    }


def plain_items(path: Path, job_id: str, rounds: int) -> list[float]:
    conn = sqlite3.connect(path)
    took = []
    for _ in range(rounds):
        start = time.perf_counter()
        conn.execute(
            "SELECT idx, candidate_json, decision_json, choice FROM import_items "
            "WHERE job_id = ? ORDER BY idx",
            (job_id,),
        ).fetchall()
        took.append((time.perf_counter() - start) * 1000)
    conn.close()
    return took


async def measure(items: int, rounds: int) -> dict[str, Any]:
    home = Path(tempfile.mkdtemp(prefix="sg-import-bench-"))
    os.environ["STRATAGATE_HOME"] = str(home)
    async with web_app(home) as (_, host, client):
        memory = memory_of(host)
        start = time.perf_counter()
        answer = await post(client, "/memory/import", data={"text": pasted_list(items)})
        job_id = answer.headers["location"].split("/")[3].split("?")[0]
        while (await memory.imports.job(job_id)).status in ("extracting", "processing"):
            await asyncio.sleep(0.2)
        analysis_s = time.perf_counter() - start
        job = await memory.imports.job(job_id)
        poll_url = f"/memory/import/{job_id}/progress"
        poll, fragment = await timed(
            lambda: client.get(poll_url, headers={"hx-request": "true"}), rounds
        )
        page, whole = await timed(lambda: client.get(f"/memory/import/{job_id}"), rounds)
        plain = plain_items(Path(memory.db.path), job_id, rounds)
        start = time.perf_counter()
        batch = await memory.imports.commit(job_id, take_proposals=True)
        commit_s = time.perf_counter() - start
        start = time.perf_counter()
        await memory.imports.undo(batch.id)
        undo_s = time.perf_counter() - start
    plain_p50 = max(summary(plain)["p50_ms"], 1e-3)
    return {
        "items": items,
        "format": job.format,
        "analysis_s": round(analysis_s, 2),
        "analysis_ms_per_item": round(analysis_s * 1000 / items, 2),
        "commit_s": round(commit_s, 2),
        "events_written": len(batch.event_ids),
        "undo_s": round(undo_s, 2),
        "poll": {**summary(poll), "bytes": len(fragment.content)},
        "page": {**summary(page), "bytes": len(whole.content)},
        "plain_item_rows": summary(plain),
        "poll_p50_ratio_vs_plain": round(summary(poll)["p50_ms"] / plain_p50, 1),
    }


def cli_run(code: Path, home: Path, argv: list[str], limit_s: float) -> float | None:
    """Seconds one ``stratagate`` child took, or None past ``limit_s`` (it is killed)."""
    env = {**os.environ, "STRATAGATE_HOME": str(home), "PYTHONPATH": str(code)}
    command = [sys.executable, "-m", "stratagate_plugin.cli.main", *argv]
    start = time.perf_counter()
    try:
        done = subprocess.run(command, cwd=code, env=env, capture_output=True, timeout=limit_s)
    except subprocess.TimeoutExpired:
        return None
    if done.returncode != 0:
        raise RuntimeError(done.stderr.decode(errors="replace")[-500:])
    return round(time.perf_counter() - start, 2)


def measure_cli(sizes: list[int], code: Path, limit_s: float) -> list[dict[str, Any]]:
    results = []
    for items in sizes:
        home = Path(tempfile.mkdtemp(prefix="sg-import-cli-"))
        listing = home / "memories.txt"
        listing.write_text(pasted_list(items) + "\n", encoding="utf-8")
        argv = ["import", str(listing), "--db", str(home / "m.db"), "--space", "bench"]
        preview = cli_run(code, home, argv, limit_s)
        commit = None if preview is None else cli_run(code, home, [*argv, "--commit"], limit_s)
        results.append({"items": items, "preview_s": preview, "commit_s": commit})
        print(f"{items:>6} items: preview {_seconds(preview)}, commit {_seconds(commit)}")
    return results


def _seconds(value: float | None) -> str:
    return "not done" if value is None else f"{value} s"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--items", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--cli", help="comma-separated sizes: time the CLI preview and commit")
    parser.add_argument("--code", type=Path, default=Path(__file__).resolve().parents[1])
    parser.add_argument("--limit-s", type=float, default=300)
    args = parser.parse_args()
    if args.cli:
        sizes = [int(size) for size in args.cli.split(",")]
        rows = measure_cli(sizes, args.code.resolve(), args.limit_s)
        if args.json:
            args.json.write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")
        return
    result = asyncio.run(measure(args.items, args.rounds))
    print(f"{'measure':<28}{'value':>14}")
    for key in ("analysis_s", "analysis_ms_per_item", "commit_s", "events_written", "undo_s"):
        print(f"{key:<28}{result[key]:>14}")
    for key in ("poll", "page", "plain_item_rows"):
        row = result[key]
        print(f"{key + ' p50 / p95 ms':<28}{row['p50_ms']:>7} / {row['p95_ms']}")
        if "bytes" in row:
            print(f"{key + ' bytes':<28}{row['bytes']:>14}")
    print(f"{'poll p50 / plain p50':<28}{result['poll_p50_ratio_vs_plain']:>14}")
    print(json.dumps(result, indent=2))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
