"""``stratagate mcp`` on the wire: raw bytes in, one JSON-RPC line out for every message.

A lone surrogate is stored as U+FFFD and answered; malformed JSON, batches, non-objects
and unusable ids get ``-32700`` / ``-32600``; over-long lines and messages get an error
naming the limit; the server keeps serving after each, and nothing is half-stored.
"""

import json
import queue
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browser import server_env
from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks.fault_parts.r24_wire import rows as wire_rows
from stratagate_plugin.mcp_server.recording import MAX_TEXT_BYTES
from stratagate_plugin.mcp_server.wire import (
    MAX_LINE_BYTES,
    Refusal,
    check_line,
    leading_id,
    too_long,
)

COMMAND = [sys.executable, "-m", "stratagate_plugin.cli.main", "mcp"]
WAIT = 90.0  # generous: the machine is shared; a hang still fails the test
HELLO = {
    "protocolVersion": "2025-06-18",
    "capabilities": {},
    "clientInfo": {"name": "raw-bytes", "version": "1"},
}


class Wire:
    """A running ``stratagate mcp`` driven line by line; replies read by a thread."""

    def __init__(self, root: Path) -> None:
        self.process = subprocess.Popen(
            COMMAND,
            cwd=root / "project",
            env=server_env(root / "home"),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self.replies: queue.Queue[bytes] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self.next_id = 100

    def _read(self) -> None:
        assert self.process.stdout
        for line in self.process.stdout:
            self.replies.put(line)

    def send(self, raw: bytes) -> None:
        assert self.process.stdin
        self.process.stdin.write(raw + b"\n")
        self.process.stdin.flush()

    def reply(self) -> dict[str, Any]:
        try:
            line = self.replies.get(timeout=WAIT)
        except queue.Empty:
            raise AssertionError(f"no reply within {WAIT} s") from None
        message: dict[str, Any] = json.loads(line)
        return message

    def ask(self, raw: bytes) -> dict[str, Any]:
        self.send(raw)
        return self.reply()

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        self.next_id += 1
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        reply = self.ask(json.dumps(message | ({"params": params} if params else {})).encode())
        assert reply["id"] == self.next_id, reply
        return reply

    def ping(self) -> None:
        assert self.request("ping")["result"] == {}

    def close(self) -> str:
        """Close stdin; the server exits 0; its stderr."""
        assert self.process.stdin and self.process.stderr
        self.process.stdin.close()
        code = self.process.wait(timeout=WAIT)
        errors = self.process.stderr.read().decode(errors="replace")
        assert code == 0, errors
        return errors


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "home").mkdir()
    (tmp_path / "project").mkdir()
    return tmp_path


@pytest.fixture
def wire(root: Path) -> Iterator[Wire]:
    server = Wire(root)
    try:
        assert server.ask(frame(0, "initialize", HELLO))["id"] == 0
        server.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
        yield server
    finally:
        if server.process.poll() is None:
            server.process.kill()
        server.process.wait(timeout=WAIT)
        for pipe in (server.process.stdin, server.process.stdout, server.process.stderr):
            if pipe is not None and not pipe.closed:
                pipe.close()


def frame(request_id: Any, method: str, params: dict[str, Any]) -> bytes:
    message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
    return json.dumps(message).encode()


def record_turn(request_id: Any, user: str, assistant: str = "ok") -> bytes:
    arguments = {"user": user, "assistant": assistant}
    return frame(request_id, "tools/call", {"name": "memory_record_turn", "arguments": arguments})


def stored_messages(root: Path) -> list[str]:
    with sqlite3.connect(root / "home" / "memory.db") as db:
        return [row[0] for row in db.execute("SELECT content FROM messages ORDER BY pk")]


def test_a_lone_surrogate_is_stored_as_a_replacement_character_and_answered(
    root: Path, wire: Wire
) -> None:
    raw = b'"lone \\ud800 x"'  # the JSON escape, as a client that does not check sends it
    line = record_turn(1, "PLACEHOLDER").replace(b'"PLACEHOLDER"', raw)
    reply = wire.ask(line)
    assert reply["id"] == 1 and reply["result"]["structuredContent"]["recorded"] is True
    wire.ping()
    wire.close()
    assert stored_messages(root) == ["lone \ufffd x", "ok"]


def test_invalid_utf8_bytes_are_replaced_and_the_turn_recorded(root: Path, wire: Wire) -> None:
    line = record_turn(2, "PLACEHOLDER").replace(b"PLACEHOLDER", b"caf\xe9 \xff!")
    assert wire.ask(line)["result"]["structuredContent"]["recorded"] is True
    wire.close()
    assert stored_messages(root) == ["caf\ufffd \ufffd!", "ok"]


MALFORMED = [
    (b"{not json", -32700, None),
    (b'{"jsonrpc":"2.0","id":5,"method":"ping"', -32700, None),  # cut short
    (b'{"jsonrpc":"2.0","id":5,"method":"ping","x":NaN}', -32700, None),
    (b"[" * 100_000, -32700, None),  # nested past any parser's depth
    (b'[{"jsonrpc":"2.0","id":6,"method":"ping"}]', -32600, None),  # a batch
    (b"[]", -32600, None),
    (b'"ping"', -32600, None),
    (b"42", -32600, None),
    (b"null", -32600, None),
    (b'{"jsonrpc":"2.0","id":[1],"method":"ping"}', -32600, None),
    (b'{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}', -32600, None),
    (b'{"jsonrpc":"2.0","id":true,"method":"ping"}', -32600, None),
    (b'{"jsonrpc":"2.0","id":1.5,"method":"ping"}', -32600, None),
    (b'{"jsonrpc":"2.0","id":null,"method":"ping"}', -32600, None),
    (b'{"id":8,"method":"ping"}', -32600, 8),  # no "jsonrpc"
    (b'{"jsonrpc":"1.0","id":"a","method":"ping"}', -32600, "a"),
    (b'{"jsonrpc":"2.0","id":9,"method":7}', -32600, 9),
    (b'{"jsonrpc":"2.0","id":10,"method":"tools/call","params":[1,2]}', -32600, 10),
    (b'{"jsonrpc":"2.0","id":11}', -32600, 11),
    (b"{}", -32600, None),
]


def test_every_malformed_line_is_answered_and_the_server_keeps_serving(
    root: Path, wire: Wire
) -> None:
    for raw, code, request_id in MALFORMED:
        reply = wire.ask(raw)
        assert (reply["error"]["code"], reply["id"]) == (code, request_id), (raw[:60], reply)
        assert reply["error"]["message"] and "\n" not in reply["error"]["message"]
        wire.ping()
    errors = wire.close()
    assert "Traceback" not in errors
    assert errors.count("refused a message") == len(MALFORMED)
    assert not (root / "home" / "memory.db").exists() or stored_messages(root) == []


def test_a_line_over_the_limit_is_refused_with_its_id_and_nothing_is_stored(
    root: Path, wire: Wire
) -> None:
    huge = record_turn(12, "x" * (MAX_LINE_BYTES + 10))
    reply = wire.ask(huge)
    assert (reply["id"], reply["error"]["code"]) == (12, -32600)
    assert "8 MB" in reply["error"]["message"]
    wire.ping()
    assert wire.ask(record_turn(13, "after the big one"))["id"] == 13
    wire.close()
    assert stored_messages(root) == ["after the big one", "ok"]


def test_a_message_over_the_text_limit_is_a_jsonrpc_error_naming_it(root: Path, wire: Wire) -> None:
    reply = wire.ask(record_turn(14, "é" * (MAX_TEXT_BYTES // 2 + 1)))
    assert (reply["id"], reply["error"]["code"]) == (14, -32602)
    assert "1 MB" in reply["error"]["message"] and "user" in reply["error"]["message"]
    reply = wire.ask(record_turn(15, "fine", assistant="y" * (MAX_TEXT_BYTES + 1)))
    assert reply["error"]["code"] == -32602 and "assistant" in reply["error"]["message"]
    assert wire.ask(record_turn(16, "x" * MAX_TEXT_BYTES))["id"] == 16  # at the limit: taken
    wire.close()
    assert stored_messages(root) == ["x" * MAX_TEXT_BYTES, "ok"]


# -- the line checker alone ---------------------------------------------------------------


def test_the_id_of_a_line_cut_short_is_found_at_its_top_level_only() -> None:
    assert leading_id(b'{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"us') == 7
    assert leading_id(b'{ "id" : "r-1" , "params": {"user": "xx') == "r-1"
    assert leading_id(b'{"params": {"id": 3, "user": "xxxx') is None  # nested, then cut
    assert leading_id(b'{"jsonrpc": "2.0", "id": tr') is None
    assert leading_id(b'[{"id": 1}') is None
    assert too_long(b'{"id": 4, "method": "x", "params": {').id == 4


def surrogate_free(value: Any) -> bool:
    if isinstance(value, str):
        return not any(0xD800 <= ord(char) <= 0xDFFF for char in value)
    if isinstance(value, dict):
        return all(surrogate_free(k) and surrogate_free(v) for k, v in value.items())
    if isinstance(value, list):
        return all(surrogate_free(item) for item in value)
    return True


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)
MESSAGES = st.fixed_dictionaries(
    {"jsonrpc": st.sampled_from(["2.0", "2.0", "1.0"])},
    optional={
        "id": JSON_VALUES,
        "method": st.text() | JSON_VALUES,
        "params": JSON_VALUES,
        "result": JSON_VALUES,
    },
)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.one_of(MESSAGES.map(json.dumps), JSON_VALUES.map(json.dumps), st.text()), st.binary())
def test_any_line_is_one_message_or_one_error_never_a_crash(text: str, noise: bytes) -> None:
    for raw in (text.encode("utf-8", "surrogatepass"), noise, text.encode("utf-8", "replace")):
        checked = check_line(raw)
        if checked is None:
            assert not raw.decode("utf-8", "replace").strip()
        elif isinstance(checked, Refusal):
            assert checked.code in (-32700, -32600) and checked.message
            assert checked.id is None or isinstance(checked.id, str | int)
        else:
            assert surrogate_free(checked.message.model_dump(mode="python"))


def test_the_fault_rows_of_the_wire_are_all_zero(tmp_path: Path) -> None:
    """``benchmarks/fault_parts/r24_wire`` at a small size: every call answered and stored."""
    surrogate_row, malformed_row = wire_rows(tmp_path, turns=8, malformed=30)
    assert (surrogate_row.acknowledged, surrogate_row.failures()) == (8, {}), surrogate_row
    assert (malformed_row.fuzz_cases, malformed_row.failures()) == (30, {}), malformed_row
