"""A client that exits while answers are on their way (issue 27): it closes its end of both
pipes, and ``stratagate mcp`` ends quietly with 0, its one banner line the only stderr."""

import json
import subprocess
import sys
from pathlib import Path

from browser import server_env

COMMAND = [sys.executable, "-m", "stratagate_plugin.cli.main", "mcp"]
WAIT = 90.0  # generous: the machine is shared; a hang still fails the test
HELLO = {
    "protocolVersion": "2025-06-18",
    "capabilities": {},
    "clientInfo": {"name": "leaving", "version": "1"},
}


def line(message: dict[str, object]) -> bytes:
    return json.dumps({"jsonrpc": "2.0", **message}).encode() + b"\n"


def test_a_client_closing_both_pipes_with_answers_pending_is_a_quiet_exit(tmp_path: Path) -> None:
    (tmp_path / "home").mkdir()
    (tmp_path / "project").mkdir()
    server = subprocess.Popen(
        COMMAND,
        cwd=tmp_path / "project",
        env=server_env(tmp_path / "home"),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert server.stdin and server.stdout and server.stderr
    try:
        server.stdin.write(line({"id": 0, "method": "initialize", "params": HELLO}))
        server.stdin.flush()
        assert json.loads(server.stdout.readline())["id"] == 0
        server.stdin.write(line({"method": "notifications/initialized"}))
        for request_id in range(1, 4):  # answers the client will never read
            server.stdin.write(line({"id": request_id, "method": "tools/list"}))
        server.stdin.flush()
        server.stdout.close()
        server.stdin.close()
        code = server.wait(timeout=WAIT)
        errors = server.stderr.read().decode(errors="replace")
    finally:
        if server.poll() is None:
            server.kill()
            server.wait(timeout=WAIT)
        server.stderr.close()
    assert code == 0, errors
    lines = errors.splitlines()
    assert len(lines) == 1 and lines[0].startswith("StrataGate MCP server on stdio"), errors
