"""Malformed chat-completions replies from a real loopback server: a one-line ``ModelError``
naming the field, the server and the body (key scrubbed), never an AttributeError."""

import json
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest
from loopback import FakeProvider, fake_provider
from starlette.responses import JSONResponse, Response

from stratagate_plugin.core.llm.base import ModelError, StructuredTask
from stratagate_plugin.core.llm.http import HttpModel, HttpModelConfig
from stratagate_plugin.core.llm.tasks import SUMMARIZE_BLOCK, BlockSummary
from stratagate_plugin.harness.chat import ChatMessage
from stratagate_plugin.memory_plugin.chat_model import HttpChatModel

KEY_ENV = "STRATAGATE_TEST_REPLY_KEY"
KEY = "sk-reply-DO-NOT-LEAK-0123456789abcdef"
SUMMARY = {"title": "T", "tags": [], "summary": "S.", "keypoints": [], "should_extract": False}
ASK = [ChatMessage(role="user", content="?", source="user")]


def choice(message: Any) -> dict[str, Any]:
    return {"choices": [{"index": 0, "message": message, "finish_reason": "stop"}]}


def call(function: Any) -> dict[str, Any]:
    return choice({"role": "assistant", "content": None, "tool_calls": [{"function": function}]})


MALFORMED: list[tuple[str, bytes | Any, str]] = [
    ("message a string", choice("just a string"), "choices.0.message should be an object"),
    ("message null", choice(None), "choices.0.message should be an object"),
    ("message missing", {"choices": [{"index": 0}]}, "choices.0.message is missing"),
    ("choices empty", {"choices": []}, "choices is empty"),
    ("choices not a list", {"choices": {"0": {}}}, "choices should be a list, not an object"),
    ("choices missing", {"error": f"key {KEY} over quota"}, "choices is missing"),
    ("body a list", [choice("x")], "the reply should be an object, not a list"),
    ("function null", call(None), "tool_calls.0.function should be an object, not null"),
    ("function without name", call({"arguments": "{}"}), "tool_calls.0.function.name is missing"),
    ("arguments a number", call({"name": "f", "arguments": 3}), "arguments should be a string"),
    ("content a number", choice({"content": 42}), "content should be text, a list of parts"),
    ("tool_calls an object", choice({"tool_calls": {}}), "tool_calls should be a list"),
    ("non-JSON body", b"<html>Bad Gateway</html>", "the body is not JSON"),
    ("empty body", b"", "the body is empty"),
]


@pytest.fixture
async def provider(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[FakeProvider]:
    async with fake_provider(monkeypatch, KEY_ENV, KEY) as fake:
        yield fake


def config(provider: FakeProvider) -> HttpModelConfig:
    return HttpModelConfig(base_url=provider.base_url, model="m", api_key_env=KEY_ENV)


def raw(body: bytes | Any) -> Response:
    if isinstance(body, bytes):
        return Response(body, media_type="text/html")
    return JSONResponse(body)


def summary_task() -> StructuredTask[BlockSummary]:
    return StructuredTask(SUMMARIZE_BLOCK, BlockSummary, "Summarise.", {"block": {}})


async def ask_chat(provider: FakeProvider) -> object:
    async with HttpChatModel(config(provider)) as model:
        return await model.chat(ASK, [])


async def ask_task(provider: FakeProvider) -> object:
    async with HttpModel(config(provider)) as model:
        return await model.complete(summary_task())


@pytest.mark.parametrize("ask", [ask_chat, ask_task], ids=["chat", "structured task"])
@pytest.mark.parametrize(
    ("body", "expected"), [m[1:] for m in MALFORMED], ids=[m[0] for m in MALFORMED]
)
async def test_http_malformed_reply_is_a_clear_model_error(
    provider: FakeProvider,
    ask: Callable[[FakeProvider], Awaitable[object]],
    body: Any,
    expected: str,
) -> None:
    provider.push(raw(body))
    with pytest.raises(ModelError) as caught:
        await ask(provider)
    message = str(caught.value)
    assert expected in message
    assert provider.base_url in message and "\n" not in message
    assert KEY not in message and len(message) < 700
    assert len(provider.requests) == 1


async def test_http_chat_long_body_is_truncated_in_the_error(provider: FakeProvider) -> None:
    provider.push(raw(choice("x" * 5000)))
    async with HttpChatModel(config(provider)) as model:
        with pytest.raises(ModelError) as caught:
            await model.chat(ASK, [])
    assert "x" * 200 in str(caught.value) and "x" * 400 not in str(caught.value)


async def test_http_chat_lone_surrogates_become_replacement_characters(
    provider: FakeProvider,
) -> None:
    arguments = json.dumps({"q": "\ud800"})
    message = {
        "content": "a\ud800b",
        "reasoning_content": "r\udfff",
        "tool_calls": [{"function": {"name": "f\ud800", "arguments": arguments}}],
    }
    provider.push(Response(json.dumps(choice(message)), media_type="application/json"))
    async with HttpChatModel(config(provider)) as model:
        reply = await model.chat(ASK, [])
    assert (reply.text, reply.reasoning) == ("a\ufffdb", "r\ufffd")
    [tool] = reply.tool_calls
    assert (tool.id, tool.name) == ("call_0", "f\ufffd")
    assert json.loads(tool.arguments) == {"q": "\ufffd"}
    reply.model_dump_json()  # encodable as UTF-8


async def test_http_model_lone_surrogates_in_arguments_are_cleaned(
    provider: FakeProvider,
) -> None:
    arguments = json.dumps({**SUMMARY, "title": "v2 \ud800"})
    function = {"name": "stratagate_summarize_block", "arguments": arguments}
    provider.push(JSONResponse(call(function)))
    async with HttpModel(config(provider)) as model:
        summary = await model.complete(summary_task())
    assert summary.title == "v2 \ufffd"


@pytest.mark.parametrize(
    "message",
    [
        {"content": [{"type": "text", "text": json.dumps(SUMMARY)}]},
        {"function_call": {"name": "stratagate_summarize_block", "arguments": SUMMARY}},
        {
            "tool_calls": [
                {"function": {"name": "stratagate_summarize_block", "arguments": SUMMARY}}
            ]
        },
    ],
    ids=["content parts", "legacy function_call", "object arguments without id"],
)
async def test_http_model_accepts_the_shapes_real_servers_send(
    provider: FakeProvider, message: dict[str, Any]
) -> None:
    provider.push(JSONResponse(choice(message)))
    async with HttpModel(config(provider)) as model:
        assert (await model.complete(summary_task())).title == "T"


async def test_http_chat_legacy_function_call_is_a_tool_call(provider: FakeProvider) -> None:
    provider.push(JSONResponse(choice({"function_call": {"name": "f", "arguments": {"a": 1}}})))
    async with HttpChatModel(config(provider)) as model:
        reply = await model.chat(ASK, [])
    [tool] = reply.tool_calls
    assert (tool.id, tool.name, json.loads(tool.arguments)) == ("call_0", "f", {"a": 1})
