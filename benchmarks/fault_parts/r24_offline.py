"""Issue 24 rows: a huge message over MCP, and jobs another process queued for an idle server.

"huge message N MB": ``stratagate mcp`` (offline model, one-turn blocks so the turn seals
at once) takes ``memory_record_turn`` of N MB, then is pinged every 50 ms while the block
derives (a ``tools/list`` request: the SDK answers ``ping`` only in legacy mode). Counted:
the turn acknowledged and kept whole in L5 (``lost`` otherwise), the block derived
(``crashes`` when it failed or never got ready within the row's limit), and, in
``details``, the slowest ping and the time to ready. Before issue 24 a 5 MB turn held a
ping for 77.7 s; a ping slower than ``FROZEN_S`` counts as a crash here.

A message over the MCP limit (``MAX_TEXT_BYTES``, 1 MB of UTF-8: the 5 MB row) must be
refused in one line, store nothing, and leave the server answering at once: its row counts
a crash otherwise, and ``lost`` if anything of it was stored. The 1 MB row sends the
largest message the limit allows.

"idle worker": a real ``serve`` and a ``stratagate ingest`` of one block into its file;
the block must get ready with no request to the server (``lost`` otherwise).
"""

import asyncio
import json
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from mcp import Client
from mcp.client.stdio import StdioServerParameters

from stratagate_plugin.mcp_server.recording import MAX_TEXT_BYTES

from .results import Row

SIZES_MB = (1, 5)
FROZEN_S = 5.0  # a ping this slow means the server was frozen, not busy
ROW_LIMIT_S = 50.0  # each row stays under a minute
REPO = Path(__file__).resolve().parents[2]
SENTENCE = "Alice said the pottery launch moved to June 12 after the kiln inspection. "
PROFILE = "plugins: [stratagate-memory]\nsettings:\n  stratagate-memory:\n    block_turn_size: 1\n"


def rows(folder: Path, sizes_mb: tuple[int, ...] = SIZES_MB) -> list[Row]:
    found = [asyncio.run(huge_message(folder / f"huge-{mb}", mb)) for mb in sizes_mb]
    return [*found, idle_worker(folder / "idle")]


def environment(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("STRATAGATE_")}
    env["STRATAGATE_HOME"] = str(home)
    env["PYTHONPATH"] = str(REPO)
    return env


def one_block_profile(home: Path) -> None:
    (home / "profiles").mkdir(parents=True, exist_ok=True)
    (home / "profiles" / "default.yml").write_text(PROFILE, encoding="utf-8")


async def huge_message(folder: Path, megabytes: int) -> Row:
    over = megabytes * 1_000_000 > MAX_TEXT_BYTES and megabytes != 1
    name = f"huge message {megabytes} MB" + (" (over the MCP limit)" if over else "")
    row, started = Row(name, acknowledged=0, lost=0, crashes=0), 0.0
    home, project = folder / "home", folder / "project"
    project.mkdir(parents=True, exist_ok=True)
    one_block_profile(home)
    size = min(megabytes * 1_000_000, MAX_TEXT_BYTES) if megabytes == 1 else megabytes * 1_000_000
    text = (SENTENCE * (size // len(SENTENCE) + 1))[:size]
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "stratagate_plugin.cli.main", "mcp"],
        env=environment(home),
        cwd=str(project),
    )
    started = time.perf_counter()
    async with Client(params) as client:
        await client.list_tools()
        sent = time.perf_counter()
        try:
            result = await client.call_tool(
                "memory_record_turn", {"user": text, "assistant": "Ok."}
            )
        except Exception as error:  # the SDK raises a JSON-RPC error reply
            return await refused(client, home / "memory.db", row, str(error), started)
        row.details["record_s"] = round(time.perf_counter() - sent, 2)
        if result.is_error:
            row.add("lost")
            row.example("record", str(result.content)[:300])
            return finish(row, started)
        row.add("acknowledged")
        await watch_pings(client, home / "memory.db", row)
    kept = stored_lengths(home / "memory.db")
    if len(text) not in kept:
        row.add("lost")
        row.example("L5", f"no message of {len(text)} characters; stored {kept[:3]}")
    return finish(row, started)


async def refused(client: Client, db: Path, row: Row, error: str, started: float) -> Row:
    """An over-limit message: one line naming the limit, nothing stored, the server still
    answering at once."""
    row.details["refused"] = error
    if len(error.splitlines()) != 1 or "limit" not in error:
        row.add("crashes")
        row.example("refusal", error[:300])
    sent = time.perf_counter()
    if not await ping(client, FROZEN_S) or time.perf_counter() - sent > FROZEN_S:
        row.add("crashes")
        row.example("ping", "the server did not answer after the refusal")
    if db.exists() and stored_lengths(db):
        row.add("lost")
        row.example("stored", "a refused message left rows behind")
    return finish(row, started)


async def watch_pings(client: Client, db: Path, row: Row) -> None:
    """Ping every 50 ms until the block is ready (or failed, or the row's time is up); a
    ping still unanswered when the time is up ends the watch."""
    began, slowest, pings = time.perf_counter(), 0.0, 0
    status = "pending"
    while (left := ROW_LIMIT_S - (time.perf_counter() - began)) > 0:
        sent = time.perf_counter()
        answered = await ping(client, max(1.0, left))
        slowest, pings = max(slowest, time.perf_counter() - sent), pings + 1
        status = block_status(db)
        if not answered or status in ("ready", "failed"):
            break
        await asyncio.sleep(0.05)
    row.details.update(
        pings=pings,
        slowest_ping_ms=round(slowest * 1000, 1),
        ready_after_s=round(time.perf_counter() - began, 2),
        status=status,
    )
    if status != "ready":
        row.add("crashes")
        row.example("derivation", f"block {status} after {ROW_LIMIT_S} s")
    if slowest > FROZEN_S:
        row.add("crashes")
        row.example("ping", f"a ping took {slowest:.1f} s while the block derived")


async def ping(client: Client, limit_s: float) -> bool:
    """One request the server answers at once when its loop is free (``tools/list``: this
    SDK answers the protocol's ``ping`` only in legacy mode); False if unanswered in time."""
    try:
        await asyncio.wait_for(client.list_tools(), timeout=limit_s)
    except TimeoutError:
        return False
    return True


def block_status(db: Path) -> str:
    if not db.exists():
        return "pending"
    with sqlite3.connect(db, timeout=30) as plain:
        found = plain.execute("SELECT processing_status FROM blocks LIMIT 1").fetchone()
        failed = plain.execute(
            "SELECT 1 FROM jobs WHERE status = 'failed' AND attempts >= 3 LIMIT 1"
        ).fetchone()
    if failed:
        return "failed"
    return str(found[0]) if found else "pending"


def stored_lengths(db: Path) -> list[int]:
    with sqlite3.connect(db, timeout=30) as plain:
        return [int(n) for (n,) in plain.execute("SELECT length(content) FROM messages")]


def idle_worker(folder: Path) -> Row:
    """``serve`` idle, ``ingest`` into its file: the block derives without a request."""
    row, started = Row("idle serve runs others' jobs", acknowledged=0, lost=0, crashes=0), 0.0
    home = folder / "home"
    home.mkdir(parents=True, exist_ok=True)
    file = folder / "chat.json"
    said = [("user", "We moved the launch to June."), ("assistant", "Noted.")]
    entries = [{"thread": "t", "role": r, "content": c, "at": "2026-03-06T09:30:00+00:00"}
               for r, c in said]  # fmt: skip
    file.write_text(json.dumps(entries), encoding="utf-8")
    command = [sys.executable, "-m", "stratagate_plugin.cli.main"]
    started = time.perf_counter()
    server = subprocess.Popen(
        [*command, "serve", "--port", "0"], cwd=folder, env=environment(home),
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        db = home / "memory.db"
        wait_for(lambda: db.exists(), 30)
        done = subprocess.run(
            [*command, "ingest", str(file), "--db", str(db), "--space", "ns"],
            cwd=folder, env=environment(home), capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        if done.returncode != 0:
            row.add("crashes")
            row.example("ingest", done.stderr[-300:])
            return finish(row, started)
        row.add("acknowledged")
        recorded = time.perf_counter()
        if wait_for(lambda: block_status(db) == "ready", ROW_LIMIT_S):
            row.details["ready_after_s"] = round(time.perf_counter() - recorded, 2)
        else:
            row.add("lost")
            row.example("idle", f"block {block_status(db)} after {ROW_LIMIT_S} s, no request")
    finally:
        server.terminate()
        server.wait(timeout=30)
    return finish(row, started)


def wait_for(condition: Any, limit_s: float) -> bool:
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.1)
    return bool(condition())


def finish(row: Row, started: float) -> Row:
    row.seconds = time.perf_counter() - started
    return row
