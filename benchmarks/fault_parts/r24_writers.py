"""Issue 24, "interleaved writers": the web app, ``chat --session`` runs and an MCP client
write one session (one database) at the same moments.

Each round starts three writers together: a web-chat post to a running ``serve``, a
``stratagate chat --session S --message …`` child, and ``memory_record_turn`` with
``session=S`` on one ``stratagate mcp`` child. A web turn is acknowledged by its 303, a CLI
turn by exit 0, an MCP turn by ``recorded: true``. Then ``serve`` stops and one more CLI turn
runs (its start catches the session up, as a restart would). Every acknowledged text must be
in memory exactly once (``lost``, ``duplicates``), and the session file must number its
turns uniquely (a repeated number is an ``integrity_errors``); a child exiting other than
0/1/2 or hanging is a crash, "Traceback" on any stderr a traceback.
"""

import json
import queue
import signal
import subprocess
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx

from . import db_checks, procs
from .results import Row

ROUNDS = 3
TIMEOUT = 120.0
URL_PREFIX = "StrataGate is serving on "
HELLO = {
    "protocolVersion": "2025-06-18",
    "capabilities": {},
    "clientInfo": {"name": "fault-matrix", "version": "1"},
}


def rows(folder: Path) -> list[Row]:
    return [interleaved_writers(folder / "interleaved", ROUNDS)]


def interleaved_writers(folder: Path, rounds: int) -> Row:
    started = time.perf_counter()
    home, project = folder / "home", folder / "project"
    project.mkdir(parents=True)
    env = procs.child_env(home)
    procs.cli("plugin", "list", env=env, timeout=TIMEOUT)  # creates the default profile
    row = Row("interleaved writers (web+CLI+MCP)", acknowledged=0, lost=0, duplicates=0,
              integrity_errors=0, tracebacks=0, crashes=0)  # fmt: skip
    acknowledged: list[str] = []
    with Served(folder, env, project) as web, McpClient(env, project) as mcp:
        session = web.new_chat()
        for index in range(rounds):
            with ThreadPoolExecutor(max_workers=3) as pool:
                futures = [
                    pool.submit(web.say, session, f"web {index}: the kiln in room {index} is warm"),
                    pool.submit(_cli, row, env, project, session, f"cli {index}: Bo plays oboe"),
                    pool.submit(mcp.record, session, f"mcp {index}: the van {index} is red"),
                ]
                acknowledged += [text for future in futures if (text := future.result())]
    row.add("tracebacks", web.tracebacks() + mcp.tracebacks())
    row.add("crashes", web.crashes + mcp.crashes)
    final = _cli(row, env, project, session, "final: that is all for now")
    acknowledged += [final] if final else []
    _count(row, home, session, acknowledged)
    row.seconds = time.perf_counter() - started
    return row


def _cli(row: Row, env: dict[str, str], cwd: Path, session: str, text: str) -> str | None:
    outcome = procs.cli("chat", "--session", session, "--message", text,
                        env=env, timeout=TIMEOUT, cwd=cwd)  # fmt: skip
    if outcome.crashed():
        row.add("crashes")
        row.example("crash", outcome.excerpt())
    if outcome.traceback:
        row.add("tracebacks")
    return text if outcome.returncode == 0 else None


def _count(row: Row, home: Path, session: str, acknowledged: list[str]) -> None:
    with db_checks.reading(home / "memory.db") as conn:
        sql = "SELECT content FROM messages WHERE thread_id = ? AND role = 'user'"
        stored = Counter(str(content) for (content,) in conn.execute(sql, (session,)))
    row.add("acknowledged", len(acknowledged))
    missing = [text for text in acknowledged if not stored[text]]
    row.add("lost", len(missing))
    for text in missing:
        row.example("lost", text)
    row.add("duplicates", sum(count - 1 for count in stored.values() if count > 1))
    numbers = Counter(_file_turns(home / "sessions" / f"{session}.jsonl"))
    repeated = {number: count for number, count in numbers.items() if count > 1}
    row.add("integrity_errors", sum(count - 1 for count in repeated.values()))
    row.details["session file turn numbers"] = sorted(numbers.elements())


def _file_turns(path: Path) -> list[int]:
    turns = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            entry = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(entry, dict) and entry.get("kind") == "turn":
            turns.append(int(entry["turn"]))
    return turns


class Served:
    """``stratagate serve --port 0`` in ``cwd``; posts as the browser sends them."""

    def __init__(self, folder: Path, env: dict[str, str], cwd: Path) -> None:
        self.out, self.err = folder / "serve.out", folder / "serve.err"
        self.crashes = 0
        with self.out.open("wb") as out, self.err.open("wb") as err:
            args = [*procs.CLI, "serve", "--port", "0"]
            self.process = subprocess.Popen(args, cwd=cwd, env=env, stdout=out, stderr=err)
        self.url = self._printed_url()
        headers = {"sec-fetch-site": "same-origin", "origin": self.url}
        self.client = httpx.Client(base_url=self.url, headers=headers, trust_env=False,
                                   timeout=TIMEOUT)  # fmt: skip

    def __enter__(self) -> "Served":
        return self

    def __exit__(self, *exc: object) -> None:
        self.client.close()
        self.process.send_signal(signal.SIGINT)
        try:
            code = self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            code = self.process.wait()
        self.crashes += code not in (0, 1, 2, 130, -signal.SIGINT)

    def _printed_url(self) -> str:
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline:
            for line in self.out.read_text(errors="replace").splitlines():
                if line.startswith(URL_PREFIX):
                    return line.removeprefix(URL_PREFIX).split("?", 1)[0].strip().rstrip("/")
            if self.process.poll() is not None:
                break
            time.sleep(0.05)
        raise RuntimeError(f"serve printed no URL: {self.err.read_text(errors='replace')}")

    def new_chat(self) -> str:
        response = self.client.post("/chat/new")
        return str(response.headers["location"]).rsplit("/", 1)[-1]

    def say(self, session: str, text: str) -> str | None:
        response = self.client.post(f"/chat/{session}/messages", data={"text": text})
        return text if response.status_code == 303 else None

    def tracebacks(self) -> int:
        return int("Traceback" in self.err.read_text(errors="replace"))


class McpClient:
    """One ``stratagate mcp`` child spoken to by hand: one JSON-RPC line each way."""

    def __init__(self, env: dict[str, str], cwd: Path) -> None:
        args = [*procs.CLI, "mcp"]
        self.process = subprocess.Popen(args, cwd=cwd, env=env, stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                        text=True)  # fmt: skip
        self.lines: queue.Queue[str] = queue.Queue()
        self.stderr = ""
        self.crashes = 0
        threading.Thread(target=self._read, daemon=True).start()
        self.ids = iter(range(1, 1_000_000))
        self.request("initialize", HELLO)
        self.send({"method": "notifications/initialized"})

    def __enter__(self) -> "McpClient":
        return self

    def __exit__(self, *exc: object) -> None:
        assert self.process.stdin
        self.process.stdin.close()
        try:
            code = self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            code = procs.HANG
        self.stderr = self.process.stderr.read() if self.process.stderr else ""
        self.crashes += code != 0

    def _read(self) -> None:
        assert self.process.stdout
        for line in self.process.stdout:
            self.lines.put(line)

    def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin
        self.process.stdin.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
        self.process.stdin.flush()

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.send({"id": next(self.ids), "method": method, "params": params})
        try:
            reply: dict[str, Any] = json.loads(self.lines.get(timeout=TIMEOUT))
        except queue.Empty:
            self.crashes += 1
            return {}
        return reply

    def record(self, session: str, text: str) -> str | None:
        arguments = {"user": text, "assistant": "noted", "session": session}
        reply = self.request("tools/call", {"name": "memory_record_turn", "arguments": arguments})
        content = reply.get("result", {}).get("structuredContent") or {}
        return text if content.get("recorded") is True else None

    def tracebacks(self) -> int:
        return int("Traceback" in self.stderr)
