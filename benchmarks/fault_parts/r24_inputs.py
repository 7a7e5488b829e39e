"""Issue 24's unbounded inputs: a 30 MB model reply, and endless or writerless files.

``huge reply``: chat turns through a profile whose model streams a 30 MB reply to every
call (the memory's derivation sees it too), then a ``process`` run. Each turn sent counts
as acknowledged (the user's message is kept whatever the model does); it is lost when
that message is not in memory. A child past its timeout or exiting outside 0/1/2 is a
crash; ``details`` keeps the database and session sizes and the longest stored message.

``/dev/zero import``: ``import`` and ``ingest`` of ``/dev/zero``, of a FIFO nobody writes,
and of ``-`` with stdin from ``/dev/zero``, each under a 1.5 GB address-space limit (so a
run that reads without a cap fails instead of taking the machine). Each case is one fuzz
case; a crash is a hang, a signal or an exit other than 2, and ``details`` says which
cases were refused with one line.
"""

import json
import os
import resource
import sqlite3
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from . import procs
from .bad_server import BadServer
from .inputs import write_profile
from .results import Row

HUGE_BYTES = 30 * 1024 * 1024
CHUNK = 256 * 1024
TURNS = 2
TURN_TIMEOUT_S = 45.0
FILE_TIMEOUT_S = 20.0
MEMORY_LIMIT = 1536 * 1024 * 1024


def rows(folder: Path) -> list[Row]:
    return [huge_reply(folder / "huge-reply"), endless_files(folder / "dev-zero")]


class HugeServer(BadServer):
    """Every chat-completions call is answered with a 30 MB body, streamed."""

    def __init__(self) -> None:
        super().__init__(hang_s=0)

    def _app(self) -> Starlette:
        async def chat(request: Request) -> Response:
            self.requests["huge"] += 1
            await request.body()
            return StreamingResponse(_huge_body(), media_type="application/json")

        path = "/fault/{fault}/v1/chat/completions"
        return Starlette(routes=[Route(path, chat, methods=["POST"])])


def _huge_body() -> Iterator[bytes]:
    yield b'{"choices":[{"index":0,"message":{"role":"assistant","content":"'
    for _ in range(HUGE_BYTES // CHUNK):
        yield b"x" * CHUNK
    yield b'"},"finish_reason":"stop"}]}'


def huge_reply(folder: Path) -> Row:
    row = Row("huge reply", acknowledged=0, lost=0, tracebacks=0, crashes=0)
    home, project = folder / "home", folder / "project"
    project.mkdir(parents=True)
    with HugeServer() as server:
        profile = write_profile(home, "huge", server.url("huge"), timeout_s=TURN_TIMEOUT_S)
        env = procs.child_env(home)
        sent = []
        for turn in range(TURNS):
            text = f"huge reply turn {turn}: the kiln fires at {1200 + turn} C"
            args = ("chat", "--profile", profile, "--session", "huge", "--message", text)
            outcome = procs.cli(*args, env=env, timeout=TURN_TIMEOUT_S, cwd=project)
            _count(row, outcome, f"turn {turn}")
            row.add("acknowledged")
            sent.append(text)
        process = procs.cli("process", env=env, timeout=TURN_TIMEOUT_S, cwd=project)
        _count(row, process, "process")
        row.details["model_requests"] = server.requests["huge"]
    stored, largest, db_bytes = _stored(home / "memory.db")
    row.add("lost", sum(text not in stored for text in sent))
    sessions = list((home / "sessions").rglob("*")) if (home / "sessions").exists() else []
    row.details.update(
        database_bytes=db_bytes,
        session_bytes=sum(path.stat().st_size for path in sessions if path.is_file()),
        largest_message_bytes=largest,
    )
    return row


def _stored(database: Path) -> tuple[set[str], int, int]:
    if not database.exists():
        return set(), 0, 0
    with sqlite3.connect(database) as conn:
        texts = {row[0] for row in conn.execute("SELECT content FROM messages")}
        largest = conn.execute("SELECT coalesce(max(length(content)), 0) FROM messages")
        biggest = int(largest.fetchone()[0])
    size = sum(p.stat().st_size for p in database.parent.glob(database.name + "*"))
    return texts, biggest, size


def _count(row: Row, outcome: procs.Outcome, what: str) -> None:
    if outcome.traceback:
        row.add("tracebacks")
    if outcome.crashed():
        row.add("crashes")
        row.example("crashed", {"run": what, "code": outcome.returncode,
                                "stderr": outcome.excerpt(3)})  # fmt: skip
    row.example("seconds", {what: round(outcome.seconds, 1)})


def endless_files(folder: Path) -> Row:
    row = Row("/dev/zero import", fuzz_cases=0, tracebacks=0, crashes=0)
    folder.mkdir(parents=True)
    fifo = folder / "nobody-writes"
    os.mkfifo(fifo)
    env = procs.child_env(folder / "home")
    refused: dict[str, str] = {}
    for command in ("import", "ingest"):
        for source, stdin in (("/dev/zero", None), (str(fifo), None), ("-", "/dev/zero")):
            case = f"{command} {source}" + (f" < {stdin}" if stdin else "")
            code, err, seconds = _bounded_run(command, source, stdin, env, folder)
            row.add("fuzz_cases")
            row.add("tracebacks", "Traceback" in err)
            lines = err.strip().splitlines()
            if code == 2 and len(lines) == 1:
                refused[case] = f"{lines[0]} ({seconds:.1f} s)"
            else:
                row.add("crashes")
                row.example("crashed", {"case": case, "code": code, "stderr": lines[-2:]})
    row.details["refused"] = refused
    return row


def _bounded_run(
    command: str, source: str, stdin: str | None, env: dict[str, str], folder: Path
) -> tuple[int, str, float]:
    """Return code (``procs.HANG`` on timeout), stderr and seconds of one capped child."""
    args = [*procs.CLI, command, source, "--db", str(folder / "m.db")]
    started = time.perf_counter()
    with open(stdin or os.devnull, "rb") as given:
        try:
            done = subprocess.run(
                args, env=env, cwd=folder, stdin=given, capture_output=True,
                timeout=FILE_TIMEOUT_S, preexec_fn=_limit_memory,
            )  # fmt: skip
        except subprocess.TimeoutExpired:
            return procs.HANG, "", FILE_TIMEOUT_S
    err = done.stderr.decode(errors="replace")
    return done.returncode, err, time.perf_counter() - started


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


if __name__ == "__main__":
    import tempfile

    from .results import table

    measured = rows(Path(tempfile.mkdtemp(prefix="sg-r24-inputs-")))
    print(table(measured))
    print(json.dumps([row.as_json() for row in measured], indent=2))
