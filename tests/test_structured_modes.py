"""Structured outputs the server enforces (issue 31): ``response_format`` ``json_schema``
first, then a forced tool call, then the schema in the prompt, found once per endpoint and
remembered in ``$STRATAGATE_HOME/cache/model-endpoints.json``; each answer capped by what its
schema can need. Loopback servers mimic what local servers were seen to do."""

import asyncio
import contextlib
import json
import logging
import os
import sys
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from loopback import loopback_server, no_proxies
from pydantic import BaseModel, Field
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from stratagate_plugin.core.llm.base import ModelError, ModelOutputError, StructuredTask
from stratagate_plugin.core.llm.endpoint_cache import CACHE_FILE, load_endpoint
from stratagate_plugin.core.llm.http import HttpModel, HttpModelConfig
from stratagate_plugin.core.llm.schema_budget import schema_budget
from stratagate_plugin.core.llm.select import endpoint_cache_path
from stratagate_plugin.core.llm.tasks import SUMMARIZE_BLOCK, BlockSummary

ROOT = Path(__file__).resolve().parents[1]
SUMMARY = {
    "title": "Kiln repaired",
    "tags": ["pottery"],
    "summary": "Ana said the kiln was repaired on Monday.",
    "keypoints": ["The kiln was repaired on Monday"],
    "should_extract": True,
}
PROSE = "Sure! This block is about a kiln that got repaired. Let me know if you need more."
REFUSED_FORMAT = "response_format type 'json_schema' is not supported by this server"
REFUSED_TOOLS = "tools param requires --jinja flag"


@dataclass
class Mimic:
    """A local server's answer to each way of asking for a schema: ``honoured``,
    ``refused`` (a 400 naming the field), ``ignored`` (prose back) or ``empty``."""

    response_format: str = "honoured"
    tools: str = "ignored"
    prompt: str = "honoured"
    result: dict[str, Any] = field(default_factory=lambda: SUMMARY)
    requests: list[dict[str, Any]] = field(default_factory=list)
    base_url: str = ""

    def app(self, base_url: str) -> Starlette:
        self.base_url = base_url
        return Starlette(routes=[Route("/v1/chat/completions", self.chat, methods=["POST"])])

    async def chat(self, request: Request) -> Response:
        body = await request.json()
        self.requests.append(body)
        if "response_format" in body:
            return self.answer(self.response_format, REFUSED_FORMAT, content=True)
        if "tools" in body:
            return self.answer(self.tools, REFUSED_TOOLS, content=False)
        return self.answer(self.prompt, "", content=True)

    def answer(self, how: str, refusal: str, *, content: bool) -> Response:
        if how == "refused":
            error = {"message": refusal, "type": "invalid_request_error"}
            return JSONResponse({"error": error}, status_code=400)
        if how == "empty":
            return reply({"role": "assistant", "content": ""})
        if how == "ignored":
            return reply({"role": "assistant", "content": PROSE})
        if content:
            return reply({"role": "assistant", "content": json.dumps(self.result)})
        function = {"name": "stratagate_summarize_block", "arguments": json.dumps(self.result)}
        call = {"id": "c1", "type": "function", "function": function}
        return reply({"role": "assistant", "content": None, "tool_calls": [call]})

    def modes(self) -> list[str]:
        return [mode_of(body) for body in self.requests]


def reply(message: dict[str, Any]) -> Response:
    return JSONResponse({"choices": [{"index": 0, "message": message, "finish_reason": "stop"}]})


def mode_of(body: dict[str, Any]) -> str:
    if "response_format" in body:
        strict = body["response_format"]["json_schema"].get("strict")
        return "json_schema" if strict else "loose"
    return "tools" if "tools" in body else "prompt"


def task(**changes: Any) -> StructuredTask[BlockSummary]:
    message = {"id": "m1", "role": "user", "content": "Ana: the kiln was repaired on Monday."}
    payload = {"block": {"id": "b1", "sequence": 1, "messages": [message]}}
    return StructuredTask(SUMMARIZE_BLOCK, BlockSummary, "Summarise the block.", payload)


@pytest.fixture
def cache(tmp_path: Path) -> Path:
    return tmp_path / "home" / CACHE_FILE


def serve(mimic: Mimic, monkeypatch: pytest.MonkeyPatch) -> AbstractAsyncContextManager[str]:
    no_proxies(monkeypatch)
    return loopback_server(mimic.app)


def http_model(mimic: Mimic, cache: Path | None, **overrides: Any) -> HttpModel:
    config = HttpModelConfig(base_url=mimic.base_url, model="smollm2", **overrides)
    return HttpModel(config, modes_path=cache)


async def summarise(mimic: Mimic, cache: Path | None) -> BlockSummary:
    async with http_model(mimic, cache) as model:
        return await model.complete(task())


@pytest.mark.parametrize(
    ("behaviour", "modes", "found"),
    [
        ({}, ["json_schema"], "json_schema"),
        ({"response_format": "refused", "tools": "honoured"}, ["json_schema", "tools"], "tools"),
        ({"response_format": "empty", "tools": "honoured"}, ["json_schema", "tools"], "tools"),
        (
            {"response_format": "refused", "tools": "refused"},
            ["json_schema", "tools", "prompt"],
            "prompt",
        ),
        (
            {"response_format": "ignored", "tools": "ignored"},
            ["json_schema", "tools", "prompt"],
            "prompt",
        ),
    ],
    ids=["honoured", "format-400", "format-empty", "no-tools-400", "everything-ignored"],
)
async def test_each_server_gets_the_schema_the_way_it_takes_it_and_that_is_remembered(
    monkeypatch: pytest.MonkeyPatch,
    cache: Path,
    behaviour: dict[str, str],
    modes: list[str],
    found: str,
) -> None:
    mimic = Mimic(**behaviour)
    async with serve(mimic, monkeypatch):
        assert (await summarise(mimic, cache)).title == SUMMARY["title"]
        assert mimic.modes() == modes
        state = load_endpoint(cache, mimic.base_url, "smollm2")
        assert state.mode == found and state.checked_at and state.last_error is None
        mimic.requests.clear()
        assert (await summarise(mimic, cache)).title == SUMMARY["title"]
        assert mimic.modes() == [modes[-1] if found != "json_schema" else "json_schema"]


async def test_the_request_asks_for_the_schema_the_servers_enforce(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    mimic = Mimic()
    async with serve(mimic, monkeypatch):
        await summarise(mimic, None)
    [body] = mimic.requests
    assert body["response_format"] == {
        "type": "json_schema",
        "json_schema": {
            "name": "stratagate_summarize_block",
            "schema": BlockSummary.model_json_schema(),
            "strict": True,
        },
    }
    assert "tools" not in body and "tool_choice" not in body


async def test_a_complaint_about_strictness_drops_strict_before_the_format(
    monkeypatch: pytest.MonkeyPatch, cache: Path
) -> None:
    """OpenAI refuses a strict schema whose fields are not all required: the same schema
    is then asked for without ``strict``, still enforced."""
    complaint = (
        "Invalid schema for response_format 'stratagate_summarize_block': In context=(), "
        "'required' is required to be supplied and to be an array including every key in "
        "properties. Missing 'tags'."
    )

    class Strict(Mimic):
        async def chat(self, request: Request) -> Response:
            body = await request.json()
            if body["response_format"]["json_schema"].get("strict"):
                self.requests.append(body)
                error = {"message": complaint, "type": "invalid_request_error"}
                return JSONResponse({"error": error}, status_code=400)
            return await super().chat(_Replayed(body))  # type: ignore[arg-type]

    mimic = Strict()
    async with serve(mimic, monkeypatch):
        assert (await summarise(mimic, cache)).title == SUMMARY["title"]
    assert mimic.modes() == ["json_schema", "loose"]
    assert "strict" not in mimic.requests[1]["response_format"]["json_schema"]
    state = load_endpoint(cache, mimic.base_url, "smollm2")
    assert (state.mode, state.strict) == ("json_schema", False)


class _Replayed:
    """A request whose body was already read."""

    def __init__(self, body: dict[str, Any]) -> None:
        self.body = body

    async def json(self) -> dict[str, Any]:
        return self.body


async def test_an_answer_cut_off_at_max_tokens_keeps_the_mode(
    monkeypatch: pytest.MonkeyPatch, cache: Path
) -> None:
    """A weak model filling a string until max_tokens began the JSON the server enforced:
    the validation retry asks again in the same mode, which is not given up."""
    cut = json.dumps(SUMMARY)[:40]

    class Truncating(Mimic):
        async def chat(self, request: Request) -> Response:
            body = await request.json()
            self.requests.append(body)
            text = cut if len(self.requests) == 1 else json.dumps(SUMMARY)
            return reply({"role": "assistant", "content": text})

    mimic = Truncating()
    async with serve(mimic, monkeypatch):
        assert (await summarise(mimic, cache)).title == SUMMARY["title"]
    assert mimic.modes() == ["json_schema", "json_schema"]
    assert "cut off or malformed" in mimic.requests[1]["messages"][-1]["content"]
    assert load_endpoint(cache, mimic.base_url, "smollm2").mode == "json_schema"


async def test_garbage_in_every_mode_fails_in_one_line_and_is_remembered(
    monkeypatch: pytest.MonkeyPatch, cache: Path
) -> None:
    mimic = Mimic(response_format="ignored", tools="ignored", prompt="ignored")
    async with serve(mimic, monkeypatch):
        with pytest.raises(ModelOutputError) as caught:
            await summarise(mimic, cache)
    message = str(caught.value)
    assert "\n" not in message and "no tool call and no JSON object" in message
    assert mimic.modes() == ["json_schema", "tools", "prompt", "prompt"]  # one validation retry
    state = load_endpoint(cache, mimic.base_url, "smollm2")
    assert state.mode == "prompt"
    assert state.last_error == message and state.last_error_at


async def test_the_remembered_mode_spares_a_second_process_the_probe(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Two real processes, wired as the commands are (``model_from_settings`` with the
    environment): the first pays for finding the mode, the second asks in it at once."""
    mimic = Mimic(response_format="refused", tools="honoured")
    script = (
        "import asyncio, os, sys\n"
        "sys.path.insert(0, os.environ['TESTS_DIR'])\n"
        "from test_structured_modes import task\n"
        "from stratagate_plugin.core.llm.select import model_from_settings\n"
        "async def main():\n"
        "    async with model_from_settings(None, os.environ) as model:\n"
        "        print((await model.complete(task())).title)\n"
        "asyncio.run(main())\n"
    )
    async with serve(mimic, monkeypatch):
        env = {
            **os.environ,
            "STRATAGATE_BASE_URL": mimic.base_url,
            "STRATAGATE_MODEL": "smollm2",
            "TESTS_DIR": str(ROOT / "tests"),
            "PYTHONPATH": str(ROOT),
        }
        counts = []
        for _ in range(2):
            before = len(mimic.requests)
            process = await asyncio.create_subprocess_exec(
                sys.executable, "-c", script, cwd=ROOT, env=env,
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
            )  # fmt: skip
            out, err = await asyncio.wait_for(process.communicate(), timeout=120)
            assert process.returncode == 0, err.decode()
            assert out.decode().strip() == SUMMARY["title"]
            counts.append(len(mimic.requests) - before)
    assert counts == [2, 1]
    assert mimic.modes() == ["json_schema", "tools", "tools"]
    cached = json.loads(endpoint_cache_path(env).read_text(encoding="utf-8"))
    assert [entry["mode"] for entry in cached.values()] == ["tools"]


async def test_a_corrupt_cache_is_ignored_with_a_warning_and_rewritten(
    monkeypatch: pytest.MonkeyPatch, cache: Path, caplog: pytest.LogCaptureFixture
) -> None:
    cache.parent.mkdir(parents=True)
    cache.write_text('{"http://x/v1 m": {"mode": "tools"', encoding="utf-8")
    mimic = Mimic()
    async with serve(mimic, monkeypatch):
        assert (await summarise(mimic, cache)).title == SUMMARY["title"]
    assert "ignoring the unreadable model cache" in caplog.text
    assert load_endpoint(cache, mimic.base_url, "smollm2").mode == "json_schema"


async def test_the_cache_never_holds_the_key(monkeypatch: pytest.MonkeyPatch, cache: Path) -> None:
    key = "sk-cache-DO-NOT-LEAK-0123456789abcdef"
    var = "CACHE_TEST_KEY"
    monkeypatch.setenv(var, key)

    class Leaky(Mimic):
        async def chat(self, request: Request) -> Response:
            error = {"message": f"server exploded for {key}"}
            return JSONResponse({"error": error}, status_code=418)

    mimic = Leaky()
    async with serve(mimic, monkeypatch), http_model(mimic, cache, api_key_env=var) as model:
        with pytest.raises(ModelError, match="HTTP 418"):
            await model.complete(task())
    text = cache.read_text(encoding="utf-8")
    assert "HTTP 418" in text and key not in text


class Tiny(BaseModel):
    """A two-field answer."""

    word: str = Field(max_length=40)
    count: int


class Medium(BaseModel):
    """Ten bounded notes."""

    notes: list[str] = Field(max_length=10)
    title: str = Field(max_length=100)


def test_a_schema_s_budget_counts_what_its_largest_answer_can_take() -> None:
    assert schema_budget(Tiny.model_json_schema()) < 100
    medium = schema_budget(Medium.model_json_schema())
    assert 10 * 200 + 100 <= medium < 3000  # unbounded strings get the default 200
    assert schema_budget({"type": "object"}) > 0  # a free mapping is not free
    recursive = {"$defs": {"N": {"type": "object", "properties": {"n": {"$ref": "#/$defs/N"}}}}}
    assert schema_budget({"$ref": "#/$defs/N", **recursive}) > 0


@pytest.mark.parametrize(
    ("output", "limit", "expected"),
    [
        (Tiny, 2048, 256),  # the floor
        (Medium, 8192, schema_budget(Medium.model_json_schema())),
        (Medium, 1024, 1024),  # never more than max_output_tokens
        (BlockSummary, 2048, 2048),
    ],
)
async def test_max_tokens_is_capped_by_what_the_schema_needs(
    monkeypatch: pytest.MonkeyPatch, output: type[BaseModel], limit: int, expected: int
) -> None:
    mimic = Mimic()
    small = StructuredTask("check_endpoint", output, "Answer.", {"words": ["a"]})
    async with serve(mimic, monkeypatch), http_model(mimic, None, max_output_tokens=limit) as m:
        with contextlib.suppress(ModelOutputError):  # the mimic answers with a summary
            await m.complete(small)
    assert {body["max_tokens"] for body in mimic.requests} == {expected}


async def test_requests_in_flight_share_one_step_down(
    monkeypatch: pytest.MonkeyPatch, cache: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    mimic = Mimic(response_format="refused", tools="honoured")
    async with serve(mimic, monkeypatch), http_model(mimic, cache) as model:
        results = await asyncio.gather(*(model.complete(task()) for _ in range(3)))
    assert {result.title for result in results} == {SUMMARY["title"]}
    assert mimic.modes().count("tools") == 3
    assert caplog.text.count("retrying with tools") == 1
