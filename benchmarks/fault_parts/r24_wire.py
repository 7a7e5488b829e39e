"""Fault rows "surrogate over MCP" and "malformed JSON-RPC" (issue 24): odd bytes on the
wire of a real ``stratagate mcp`` child.

* surrogate over MCP: ``memory_record_turn`` calls whose text carries lone surrogates (as
  JSON escapes, in the user's message, the answer or both) or invalid UTF-8 bytes, sent at
  once; ``acked`` counts the calls answered "recorded", ``lost`` the calls whose turn is
  not stored (with U+FFFD in place of the bad text) whether answered or not, ``dups`` turns
  stored twice, ``crashes`` calls never answered within the deadline (plus a server that
  died), ``tracebacks`` those on its stderr, ``integrity`` the database checks.
* malformed JSON-RPC: seeded lines that are not one valid message (cut-short requests,
  random bytes, batches, non-objects, ids of every wrong type, deep nesting, a line over
  8 MB), each followed by a ``ping``; ``fuzz`` counts the lines, ``crashes`` those not
  answered with a JSON-RPC error before the ping's reply (or a ping not answered at all).
"""

import json
import queue
import random
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

from benchmarks.fault_parts import db_checks
from benchmarks.fault_parts.procs import CLI, child_env
from benchmarks.fault_parts.results import Row

DEADLINE_S = 40.0  # for all the replies of one row: a hang is counted, never waited out
TURNS = 24
MALFORMED = 150
HELLO = {
    "protocolVersion": "2025-06-18",
    "capabilities": {},
    "clientInfo": {"name": "fault-matrix", "version": "1"},
}


def rows(folder: Path, turns: int = TURNS, malformed: int = MALFORMED, seed: int = 0) -> list[Row]:
    return [
        timed(surrogates, folder / "surrogates", turns),
        timed(malformed_lines, folder / "malformed", malformed, seed),
    ]


def timed(scenario: Any, *args: Any) -> Row:
    started = time.perf_counter()
    row: Row = scenario(*args)
    row.seconds = time.perf_counter() - started
    return row


class Server:
    """``stratagate mcp`` in ``folder/project`` with its home in ``folder/home``."""

    def __init__(self, folder: Path) -> None:
        self.home, project = folder / "home", folder / "project"
        for path in (self.home, project):
            path.mkdir(parents=True, exist_ok=True)
        self.errors = (folder / "stderr.txt").open("wb")
        self.child = subprocess.Popen(
            [*CLI, "mcp"], cwd=project, env=child_env(self.home),
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.errors,
        )  # fmt: skip
        self.replies: queue.Queue[dict[str, Any]] = queue.Queue()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        self.send(frame(0, "initialize", HELLO))
        self.reply_to(0, time.monotonic() + 120)  # start-up on a busy machine
        self.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')

    def _read(self) -> None:
        assert self.child.stdout
        for line in self.child.stdout:
            try:
                self.replies.put(json.loads(line))
            except ValueError:
                self.replies.put({"unreadable": line[:200].decode(errors="replace")})

    def send(self, raw: bytes) -> None:
        assert self.child.stdin
        self.child.stdin.write(raw + b"\n")
        self.child.stdin.flush()

    def next_reply(self, deadline: float) -> dict[str, Any] | None:
        try:
            return self.replies.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            return None

    def reply_to(self, request_id: Any, deadline: float) -> dict[str, Any] | None:
        while (reply := self.next_reply(deadline)) is not None:
            if reply.get("id") == request_id:
                return reply
        return None

    def close(self) -> tuple[int, str]:
        """Close stdin; the exit status (-9 when it had to be killed) and stderr."""
        assert self.child.stdin
        self.child.stdin.close()
        try:
            code = self.child.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.child.kill()
            self.child.wait()
            code = -9
        self.reader.join(timeout=30)  # stdout at EOF once the child is gone
        if self.child.stdout:
            self.child.stdout.close()
        self.errors.close()
        return code, Path(self.errors.name).read_text(errors="replace")


def frame(request_id: Any, method: str, params: dict[str, Any] | None = None) -> bytes:
    message = {"jsonrpc": "2.0", "id": request_id, "method": method}
    return json.dumps(message | ({"params": params} if params is not None else {})).encode()


# -- surrogates ------------------------------------------------------------------------------

BAD_TEXTS = (  # (what goes on the wire inside a JSON string, what must be stored)
    (b"lone \\ud800 x", "lone \ufffd x"),
    (b"\\udfff at the start", "\ufffd at the start"),
    (b"at the end \\udbff", "at the end \ufffd"),
    (b"reversed pair \\udc00\\ud800", "reversed pair \ufffd\ufffd"),
    (b"caf\xe9 latin-1 byte", "caf\ufffd latin-1 byte"),
    (b"\xff\xfe bytes", "\ufffd\ufffd bytes"),
    (b"\xe4\xb8 cut CJK", "\ufffd cut CJK"),
    (b"\\ud83d\\ude00 a real pair", "\U0001f600 a real pair"),
)


def surrogates(folder: Path, turns: int) -> Row:
    row = Row("surrogate over MCP", acknowledged=0, lost=0, duplicates=0, tracebacks=0, crashes=0)
    server = Server(folder)
    expected: dict[int, tuple[str, str]] = {}
    for index in range(turns):
        raw, stored = BAD_TEXTS[index % len(BAD_TEXTS)]
        user, answer = raw + f" #{index}".encode(), b"ok " + raw if index % 3 else b"ok"
        line = frame(index + 1, "tools/call", {"name": "memory_record_turn", "arguments": {}})
        arguments = b'{"user": "' + user + b'", "assistant": "' + answer + b'"}'
        server.send(line.replace(b'"arguments": {}', b'"arguments": ' + arguments))
        expected[index + 1] = (f"{stored} #{index}", f"ok {stored}" if index % 3 else "ok")
    unanswered = _collect(server, row, set(expected))
    code, errors = server.close()
    _account(row, folder / "home" / "memory.db", expected, unanswered, code, errors)
    return row


def _collect(server: Server, row: Row, waiting: set[int]) -> set[int]:
    deadline = time.monotonic() + DEADLINE_S
    while waiting and (reply := server.next_reply(deadline)) is not None:
        request_id = reply.get("id")
        if request_id in waiting:
            waiting.discard(request_id)
            content = reply.get("result", {}).get("structuredContent") or {}
            if content.get("recorded") is True:
                row.add("acknowledged")
            else:
                row.example("refused", reply)
    return waiting


def _account(
    row: Row, db: Path, expected: dict[int, tuple[str, str]], unanswered: set[int],
    code: int, errors: str,
) -> None:  # fmt: skip
    row.add("crashes", len(unanswered) + (code != 0))
    row.details["unanswered"] = len(unanswered)
    row.details["exit_status"] = code
    if "Traceback" in errors:
        row.add("tracebacks")
        row.example("stderr", errors[-800:])
    if not db.exists():
        row.add("lost", len(expected))
        return
    problems = db_checks.problems(db)
    row.integrity_errors = len(problems)
    counts = db_checks.message_counts(db)
    stored = {(role, content): n for (_, role, content), n in counts.items()}
    for user, answer in expected.values():
        if stored.get(("user", user), 0) == 0 or stored.get(("assistant", answer), 0) == 0:
            row.add("lost")
            row.example("lost", user)
    row.add("duplicates", sum(n - 1 for (role, _), n in stored.items() if role == "user" and n > 1))
    row.details["surrogates_stored"] = sum(
        n for (_, content), n in stored.items() if any(0xD800 <= ord(c) <= 0xDFFF for c in content)
    )


# -- malformed lines -------------------------------------------------------------------------

FIXED = (
    b"{not json",
    b"[]",
    b'[{"jsonrpc":"2.0","id":1,"method":"ping"}]',
    b'"ping"',
    b"null",
    b"[" * 100_000,
    b'{"jsonrpc":"2.0","id":null,"method":"ping"}',
    b'{"jsonrpc":"2.0","id":true,"method":"ping"}',
    b'{"jsonrpc":"2.0","id":1.5,"method":"ping"}',
    b'{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}',
    b'{"id":3,"method":"ping"}',
    b'{"jsonrpc":"2.0","id":4,"method":["ping"]}',
    b'{"jsonrpc":"2.0","id":5,"method":"tools/call","params":[1]}',
    b'{"jsonrpc":"2.0","id":6,"x":NaN,"method":"ping"}',
    b'{"jsonrpc":"2.0","id":7,"method":"ping"',
)
WRONG_IDS = (None, True, False, 1.25, [], [1], {}, {"id": 1}, -0.5)


def malformed_line(rng: random.Random) -> bytes:
    """One seeded line that is not a valid JSON-RPC message."""
    kind = rng.randrange(5)
    valid = frame(rng.randrange(10**6), "tools/call", {"name": "memory_record_turn",
                  "arguments": {"user": "x" * rng.randrange(50), "assistant": "y"}})  # fmt: skip
    if kind == 0:  # cut short
        return valid[: rng.randrange(1, len(valid) - 1)]
    if kind == 1:  # random bytes without a newline
        noise = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 80)))
        return b"~" + noise.replace(b"\n", b" ")  # never blank: a blank line asks nothing
    if kind == 2:  # a batch of valid requests
        return b"[" + b",".join([valid] * rng.randrange(1, 4)) + b"]"
    if kind == 3:  # a JSON value that is not an object
        return json.dumps(rng.choice([1, "s", [1, 2], None, 2.5, True])).encode()
    message = json.loads(valid) | {"id": rng.choice(WRONG_IDS)}
    return json.dumps(message).encode()


def malformed_lines(folder: Path, count: int, seed: int) -> Row:
    row = Row("malformed JSON-RPC", tracebacks=0, fuzz_cases=0, crashes=0)
    rng = random.Random(f"{seed}:wire")
    lines = [
        *FIXED,
        b'{"jsonrpc":"2.0","id":"big","method":"ping","params":{"p":"' + b"x" * 8_100_000 + b'"}}',
    ]
    lines += [malformed_line(rng) for _ in range(max(0, count - len(lines)))]
    server = Server(folder)
    deadline = time.monotonic() + DEADLINE_S
    for number, line in enumerate(lines):
        server.send(line)
        server.send(frame(f"ping-{number}", "ping"))
        row.add("fuzz_cases")
        if not _refused_before_ping(server, f"ping-{number}", deadline):
            row.add("crashes")
            row.example("unanswered", line[:120].decode(errors="replace"))
    code, errors = server.close()
    if code != 0:
        row.add("crashes")
    if "Traceback" in errors:
        row.add("tracebacks")
        row.example("stderr", errors[-800:])
    row.details["exit_status"] = code
    return row


def _refused_before_ping(server: Server, ping_id: str, deadline: float) -> bool:
    """A JSON-RPC error arrived for the line, then the ping's reply (the server lives)."""
    refused = False
    while (reply := server.next_reply(deadline)) is not None:
        if reply.get("id") == ping_id:
            return refused
        refused = refused or "error" in reply
    return False
