"""Issue 31 against a real loopback HTTP server: a model answering garbage text (as
SmolLM2-135M did) still leaves memory filled after ``ingest`` + ``process``, marked
offline-fallback with the model's error; ``jobs`` lists those blocks and ``jobs retry
--offline`` re-derives them once the model answers well. A 401 fills memory too, but
``process`` says the endpoint is misconfigured and exits 1."""

import asyncio
import json
import sqlite3
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from loopback import loopback_server, no_proxies
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from test_offline_fallback import STATEMENTS

from stratagate_plugin.cli.main import main

NO_JSON = "the reply contained no tool call and no JSON object"


@dataclass
class LocalServer:
    """An OpenAI-compatible server whose ``mode`` is garbage text, good JSON, or a 401."""

    mode: str = "garbage"
    base_url: str = ""
    requests: list[dict[str, Any]] = field(default_factory=list)

    def app(self, base_url: str) -> Starlette:
        self.base_url = base_url

        async def chat(request: Request) -> Response:
            body = await request.json()
            self.requests.append(body)
            if self.mode == "unauthorized":
                return JSONResponse({"error": {"message": "invalid api key"}}, status_code=401)
            text = "Sure! Here is what I found." if self.mode == "garbage" else good(body)
            message = {"role": "assistant", "content": text}
            return JSONResponse({"choices": [{"index": 0, "message": message,
                                              "finish_reason": "stop"}]})  # fmt: skip

        return Starlette(routes=[Route("/v1/chat/completions", chat, methods=["POST"])])


def good(body: dict[str, Any]) -> str:
    """A valid answer to the task, told by its payload (whatever the request's mode)."""
    payload = next(
        json.loads(m["content"]) for m in body["messages"] if m["content"].startswith("{")
    )
    if "block" in payload:
        return json.dumps({"title": "Served title", "tags": ["served"], "summary": "Served.",
                           "keypoints": ["served point"], "should_extract": True})  # fmt: skip
    if "target" in payload:
        users = [m for m in payload["target"]["messages"] if m["role"] == "user"]
        events = [
            {"title": f"Served card {i}", "summary": m["content"], "scope": "user",
             "source_message_ids": [m["id"]], "quotes": [m["content"]]}
            for i, m in enumerate(users)
        ]  # fmt: skip
        return json.dumps({"should_extract": True, "events": events})
    return json.dumps({"nodes": [], "facts": [], "edges": []})


@pytest.fixture
async def server(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[LocalServer]:
    no_proxies(monkeypatch)
    local = LocalServer()
    async with loopback_server(local.app):
        monkeypatch.setenv("STRATAGATE_BASE_URL", local.base_url)
        monkeypatch.setenv("STRATAGATE_MODEL", "smollm2")
        monkeypatch.setenv("STRATAGATE_API_KEY", "local-needs-no-key")
        yield local


async def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = await asyncio.to_thread(main, list(argv))
    out, err = capsys.readouterr()
    return code, out, err


async def ingest_six(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> str:
    entries = []
    for i, text in enumerate(STATEMENTS):
        at = f"2026-11-30T10:{i:02d}:00Z"
        entries.append({"thread": "s1", "role": "user", "content": text, "at": at})
        entries.append({"thread": "s1", "role": "assistant", "content": "Noted.", "at": at})
    source = tmp_path / "six.json"
    source.write_text(json.dumps(entries))
    db = str(tmp_path / "m.db")
    code, _, err = await cli(capsys, "ingest", str(source), "--db", db, "--block-turns", "2")
    assert code == 0, err
    return db


def pending_blocks(db: str) -> int:
    with sqlite3.connect(db) as conn:
        return int(conn.execute(
            "SELECT count(*) FROM blocks WHERE processing_status != 'ready'"
        ).fetchone()[0])  # fmt: skip


async def test_garbage_from_the_model_still_fills_memory_and_retry_replaces_it(
    server: LocalServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = await ingest_six(tmp_path, capsys)
    code, out, err = await cli(capsys, "process", "--db", db)
    assert code == 0, err
    assert "0 failed" in out and "3 blocks became ready" in out
    assert "answered by the offline model because the model failed" in err and NO_JSON in err
    assert pending_blocks(db) == 0 and server.requests
    events = json.loads((await cli(capsys, "events", "--db", db, "--json"))[1])
    assert len(events) >= 4
    assert {e["derived_by"] for e in events} == {"offline-fallback"}
    assert all(NO_JSON in e["derive_error"] for e in events)
    code, out, _ = await cli(capsys, "jobs", "--db", db)
    assert code == 0 and "3 blocks derived offline because the model failed" in out
    assert out.count(NO_JSON) >= 3  # each block with the model's error
    assert out.count("derived offline: ModelOutputError: ") == 6  # and each job
    listed = json.loads((await cli(capsys, "jobs", "--offline", "--json", "--db", db))[1])
    assert listed["count"] == 3 and all(NO_JSON in b["error"] for b in listed["blocks"])
    assert not any(b["setup_error"] for b in listed["blocks"])

    server.mode = "good"
    code, out, err = await cli(capsys, "jobs", "retry", "--offline", "--db", db)
    assert code == 0, err
    assert out.startswith("3 of 3 blocks derived again by smollm2: 6 events written")
    events = json.loads((await cli(capsys, "events", "--db", db, "--json"))[1])
    assert len(events) == 6 and {e["derived_by"] for e in events} == {"smollm2"}
    assert {e["derive_error"] for e in events} == {None}
    listed = json.loads((await cli(capsys, "jobs", "--offline", "--json", "--db", db))[1])
    assert listed["count"] == 0
    assert (await cli(capsys, "jobs", "retry", "--offline", "--db", db))[1].strip() == (
        "(no blocks derived offline)"
    )


async def test_a_retry_the_model_fails_again_keeps_the_offline_memory(
    server: LocalServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = await ingest_six(tmp_path, capsys)
    await cli(capsys, "process", "--db", db)
    before = json.loads((await cli(capsys, "events", "--db", db, "--json"))[1])
    code, out, err = await cli(capsys, "jobs", "retry", "--offline", "--db", db)
    assert code == 1 and out.startswith("0 of 3 blocks derived again")
    assert "3 blocks kept the offline result" in err and NO_JSON in err
    assert json.loads((await cli(capsys, "events", "--db", db, "--json"))[1]) == before


async def test_a_rejected_key_fills_memory_but_process_says_so_and_exits_1(
    server: LocalServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server.mode = "unauthorized"
    db = await ingest_six(tmp_path, capsys)
    code, _out, err = await cli(capsys, "process", "--db", db)
    assert code == 1
    loud = [line for line in err.splitlines() if line.startswith("error: ")]
    assert loud and "the model endpoint is misconfigured (ModelAuthError: " in loud[0]
    assert pending_blocks(db) == 0
    listed = json.loads((await cli(capsys, "jobs", "--offline", "--json", "--db", db))[1])
    assert listed["count"] == 3 and all(b["setup_error"] for b in listed["blocks"])


async def test_blocks_events_and_show_say_what_the_offline_model_stood_in_for(
    server: LocalServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Provenance in every output: a card or block the offline model derived after the
    model failed says so, with the model's error, wherever it is shown."""
    db = await ingest_six(tmp_path, capsys)
    assert (await cli(capsys, "process", "--db", db))[0] == 0
    blocks = json.loads((await cli(capsys, "blocks", "--db", db, "--json"))[1])
    assert {b["derived_by"] for b in blocks} == {"offline-fallback"}
    assert all(NO_JSON in b["derive_error"] for b in blocks)
    code, out, _ = await cli(capsys, "blocks", "--db", db)
    assert "3 block(s) derived offline after the model failed" in out
    code, out, _ = await cli(capsys, "events", "--db", db)
    listed = [line for line in out.splitlines() if line.startswith("evt_")]
    assert listed and all("active, offline" in line for line in listed)
    event_id = listed[0].split()[0]
    code, out, _ = await cli(capsys, "show", event_id, "--db", db)
    assert code == 0 and "derived    offline, after the model failed: " in out
    assert NO_JSON in out
    code, out, _ = await cli(capsys, "show", blocks[0]["id"], "--db", db)
    assert code == 0 and "derived    offline, after the model failed" in out

    server.mode = "good"
    assert (await cli(capsys, "jobs", "retry", "--offline", "--db", db))[0] == 0
    code, out, _ = await cli(capsys, "blocks", "--db", db)
    assert "derived offline" not in out
    code, out, _ = await cli(capsys, "show", blocks[0]["id"], "--db", db)
    assert "derived    smollm2" in out
