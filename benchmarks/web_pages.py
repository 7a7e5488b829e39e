"""Web pages at scale: every memory page and API call on the search-scale database.

    .venv/bin/python benchmarks/web_pages.py --json /tmp/web_pages.json

Builds (or reuses, ``--keep DB``) the 100k-event / 500k-message namespace of
``search_scale.py``, starts the host with the memory plugin on it and the web app as
``stratagate serve`` builds it, and requests each page ``--rounds`` times in process
(``httpx.ASGITransport``: routing, the guard, the engine's queries and the templates;
no socket). Beside each page, the same run times a plain ``SELECT`` of the same page of
rows on its own connection (the same index the page walks: the events by chronology,
the 40 blocks shown and their messages, an event with its source messages): the ratio is
what the app adds over reading the rows. The text filter's plain query is a LIKE scan that
stops at 40 hits, not the FTS5 search the page runs, so its ratio overstates the cost.
Aim: every page p95 ≤ 100 ms and ≤ 3× its plain query.
"""

import argparse
import asyncio
import json
import os
import random
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from benchmarks.scale_corpus import NAMESPACE, THREADS, Vocabulary, build, create_schema
from stratagate_plugin.core.store.timeline_rows import CHRONOLOGY, CONFLICTED
from stratagate_plugin.harness.chat import EchoChatModel
from stratagate_plugin.harness.profiles import Profile, save_profile
from stratagate_plugin.harness.runtime import Host
from stratagate_plugin.web.shell.app import build_app

Plain = Callable[[sqlite3.Connection], Any]


def pages(raw: sqlite3.Connection) -> dict[str, tuple[str, Plain]]:
    """Each page's URL and the plain query of the rows it shows."""
    event_id, word = raw.execute("SELECT id, title FROM events ORDER BY pk LIMIT 1").fetchone()
    word = word.split()[0]
    block_id = raw.execute("SELECT id FROM blocks ORDER BY sequence DESC LIMIT 1").fetchone()[0]
    thread = f"t{THREADS - 1}"
    space = f"space={NAMESPACE}"

    def select(sql: str, *args: Any) -> Plain:
        return lambda conn: conn.execute(sql, args).fetchall()

    def selects(*queries: tuple[Any, ...]) -> Plain:
        return lambda conn: [conn.execute(sql, args).fetchall() for sql, *args in queries]

    shown = [
        row[0]
        for row in raw.execute(
            "SELECT id FROM blocks WHERE namespace = ? AND thread_id = ? "
            "ORDER BY thread_sequence DESC LIMIT 40",
            (NAMESPACE, thread),
        )
    ]
    marks = ",".join("?" * len(shown))

    return {
        "status": (
            f"/memory/?{space}",
            select(
                "SELECT status, COUNT(*) FROM events WHERE namespace = ? GROUP BY status", NAMESPACE
            ),
        ),
        "status panel": (
            f"/memory/status/panel?{space}",
            select(
                "SELECT status, COUNT(*) FROM events WHERE namespace = ? GROUP BY status", NAMESPACE
            ),
        ),
        "events": (
            f"/memory/events?{space}",
            select(
                f"SELECT * FROM events WHERE namespace = ? ORDER BY {CHRONOLOGY} DESC LIMIT 40",
                NAMESPACE,
            ),
        ),
        "events page 100": (
            f"/memory/events?{space}&offset=4000",
            select(
                f"SELECT * FROM events WHERE namespace = ? ORDER BY {CHRONOLOGY} DESC "
                "LIMIT 40 OFFSET 4000",
                NAMESPACE,
            ),
        ),
        "events text filter": (
            f"/memory/events?{space}&q={word}",
            select(
                "SELECT * FROM events WHERE namespace = ? AND title LIKE ? LIMIT 40",
                NAMESPACE,
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
            select(
                f"SELECT * FROM events WHERE namespace = ? AND {CONFLICTED} LIMIT 20", NAMESPACE
            ),
        ),
        "blocks": (
            f"/memory/blocks?{space}&thread={thread}",
            selects(
                (
                    "SELECT * FROM blocks WHERE namespace = ? AND thread_id = ? "
                    "ORDER BY thread_sequence DESC LIMIT 40",
                    NAMESPACE,
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
                NAMESPACE,
            ),
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


def summary(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return {"p50_ms": round(statistics.median(ordered), 2), "p95_ms": round(p95, 2)}


async def measure(path: Path, home: Path, rounds: int) -> dict[str, Any]:
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
    async with Host.from_profile(profile, home) as host:
        app = await build_app(host, EchoChatModel())
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
            for name, (url, query) in table.items():
                first = await client.get(url)
                if first.status_code != 200:
                    results[name] = {"url": url, "status": first.status_code}
                    continue
                ours = []
                for _ in range(rounds):
                    started = time.perf_counter()
                    await client.get(url)
                    ours.append((time.perf_counter() - started) * 1000)
                theirs = timed(lambda query=query: query(plain), rounds)
                results[name] = {"url": url, **summary(ours), "plain": summary(theirs)}
    plain.close()
    return results


def report(results: dict[str, Any]) -> None:
    heads = ("p50 ms", "p95 ms", "plain p50", "plain p95", "p95 ratio", "aim met")
    print(f"{'page':<20}" + "".join(f"{head:>11}" for head in heads))
    for name, row in results.items():
        if "plain" not in row:
            print(f"{name:<20}   status {row['status']} ({row['url']})")
            continue
        ratio = row["p95_ms"] / max(row["plain"]["p95_ms"], 1e-3)
        row["p95_ratio"] = round(ratio, 2)
        row["aim_met"] = row["p95_ms"] <= 100 and (ratio <= 3 or row["p95_ms"] <= 5)
        print(
            f"{name:<20}{row['p50_ms']:>11}{row['p95_ms']:>11}{row['plain']['p50_ms']:>11}"
            f"{row['plain']['p95_ms']:>11}{ratio:>11.2f}{'yes' if row['aim_met'] else 'no':>11}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--messages", type=int, default=500_000)
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--keep", type=Path, help="keep the database here (reused if present)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = args.keep or Path(tmp) / "scale.db"
        if not path.exists():
            asyncio.run(create_schema(path))
            build(path, Vocabulary(random.Random(args.seed)), args.events, args.messages)
        results = asyncio.run(measure(path, Path(tmp) / "home", args.rounds))
    report(results)
    output = {
        "events": args.events,
        "messages": args.messages,
        "rounds": args.rounds,
        "pages": results,
    }
    print(json.dumps(output, indent=2))
    if args.json:
        args.json.write_text(json.dumps(output, indent=2))


if __name__ == "__main__":
    main()
