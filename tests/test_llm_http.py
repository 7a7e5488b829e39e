"""The OpenAI-compatible client against a real loopback server with scripted replies."""

import asyncio
import json
import logging
import socket
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any

import httpx
import pytest
from loopback import FakeProvider, fake_provider
from pydantic import ValidationError
from starlette.responses import JSONResponse, Response
from waits import FakeTime

from stratagate_plugin.core.llm.base import (
    ModelAuthError,
    ModelError,
    ModelNotFoundError,
    ModelOutputError,
    ModelRateLimitedError,
    ModelServerError,
    ModelTimeoutError,
    StructuredTask,
)
from stratagate_plugin.core.llm.http import HttpModel, HttpModelConfig
from stratagate_plugin.core.llm.prompts import load_prompt
from stratagate_plugin.core.llm.retry import RetryPolicy
from stratagate_plugin.core.llm.tasks import (
    EXTRACT_EVENT_CARDS,
    SUMMARIZE_BLOCK,
    BlockSummary,
    EventExtraction,
)
from stratagate_plugin.core.text.token_budget import estimate_tokens

KEY_ENV = "STRATAGATE_TEST_API_KEY"
KEY = "sk-test-DO-NOT-LEAK-0123456789abcdef"
SUMMARY: dict[str, Any] = {
    "title": "Release plan for v2",
    "tags": ["release"],
    "summary": "The user set the v2 release for Friday.",
    "keypoints": ["v2 ships on Friday"],
    "should_extract": True,
}
EXTRACTION: dict[str, Any] = {
    "should_extract": True,
    "events": [
        {
            "title": "v2 release set for Friday",
            "summary": "The user decided v2 ships on Friday.",
            "source_message_ids": ["m1"],
            "scope": "project",
        }
    ],
}


@pytest.fixture
async def provider(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[FakeProvider]:
    async with fake_provider(monkeypatch, KEY_ENV, KEY) as fake:
        yield fake


@pytest.fixture
async def model(provider: FakeProvider) -> AsyncIterator[HttpModel]:
    """A model in the forced-tool-call mode (the modes' ladder: test_structured_modes.py)."""
    async with HttpModel(_config(provider), clock=FakeTime().clock()) as http_model:
        http_model.use_mode("tools")
        yield http_model


def _config(provider: FakeProvider, **overrides: Any) -> HttpModelConfig:
    values: dict[str, Any] = {
        "base_url": provider.base_url,
        "model": "test-model",
        "api_key_env": KEY_ENV,
        "timeout_s": 5,
    }
    return HttpModelConfig(**(values | overrides))


def _summary_task() -> StructuredTask[BlockSummary]:
    message = {"id": "m1", "role": "user", "content": "v2 发布定在周五", "created_at": "x"}
    payload = {"block": {"id": "b1", "sequence": 1, "messages": [message]}}
    return StructuredTask(SUMMARIZE_BLOCK, BlockSummary, load_prompt(SUMMARIZE_BLOCK), payload)


def _extraction_task() -> StructuredTask[EventExtraction]:
    payload = {"target": {"block_id": "b1", "messages": []}, "allowed_source_message_ids": ["m1"]}
    instructions = load_prompt(EXTRACT_EVENT_CARDS)
    return StructuredTask(EXTRACT_EVENT_CARDS, EventExtraction, instructions, payload)


def _tool_reply(
    arguments: dict[str, Any] | str, name: str = "stratagate_summarize_block"
) -> Response:
    text = arguments if isinstance(arguments, str) else json.dumps(arguments)
    call = {"id": "call_1", "type": "function", "function": {"name": name, "arguments": text}}
    message = {"role": "assistant", "content": None, "tool_calls": [call]}
    return _choice(message)


def _text_reply(content: str) -> Response:
    return _choice({"role": "assistant", "content": content})


def _choice(message: dict[str, Any]) -> Response:
    return JSONResponse({"choices": [{"index": 0, "message": message, "finish_reason": "stop"}]})


def _error_reply(status: int, message: str, headers: dict[str, str] | None = None) -> Response:
    body = {"error": {"message": message, "type": "invalid_request_error"}}
    return JSONResponse(body, status_code=status, headers=headers)


async def test_http_model_tool_call_reply_is_validated(
    model: HttpModel, provider: FakeProvider
) -> None:
    provider.push(_tool_reply(SUMMARY))
    task = _summary_task()
    result = await model.complete(task)
    assert result == BlockSummary.model_validate(SUMMARY)
    [request] = provider.requests
    body = request.body
    assert request.headers["authorization"] == f"Bearer {KEY}"
    assert body["model"] == "test-model"
    assert body["temperature"] == 0
    assert body["max_tokens"] == 2048
    assert body["tools"][0]["function"]["name"] == "stratagate_summarize_block"
    assert body["tools"][0]["function"]["parameters"] == BlockSummary.model_json_schema()
    assert body["tool_choice"] == {
        "type": "function",
        "function": {"name": "stratagate_summarize_block"},
    }
    system, user = body["messages"]
    assert system == {"role": "system", "content": task.instructions}
    assert json.loads(user["content"]) == task.payload
    assert "发布" in user["content"]


async def test_http_model_nested_schema_tool_call_is_validated(
    model: HttpModel, provider: FakeProvider
) -> None:
    provider.push(_tool_reply(EXTRACTION, name="stratagate_extract_event_cards"))
    result = await model.complete(_extraction_task())
    assert result.events[0].scope == "project"
    assert "$defs" in provider.requests[0].body["tools"][0]["function"]["parameters"]


async def test_http_model_plain_json_in_text_is_parsed(
    model: HttpModel, provider: FakeProvider
) -> None:
    provider.push(_text_reply(f"Here is the result: {json.dumps(SUMMARY)} Hope it helps."))
    result = await model.complete(_summary_task())
    assert result.title == SUMMARY["title"]


async def test_http_model_fenced_json_is_parsed(model: HttpModel, provider: FakeProvider) -> None:
    thinking = '<think>maybe {"title": "wrong"}</think>'
    provider.push(_text_reply(f"{thinking}\nSure:\n```json\n{json.dumps(SUMMARY)}\n```\n"))
    result = await model.complete(_summary_task())
    assert result.title == SUMMARY["title"]


async def test_http_model_invalid_then_valid_feeds_error_back(
    model: HttpModel, provider: FakeProvider
) -> None:
    invalid = {**EXTRACTION, "events": [{**EXTRACTION["events"][0], "scope": "forever"}]}
    name = "stratagate_extract_event_cards"
    provider.push(_tool_reply(invalid, name=name), _tool_reply(EXTRACTION, name=name))
    result = await model.complete(_extraction_task())
    assert result.events[0].scope == "project"
    first, second = provider.requests
    assert len(second.body["messages"]) == len(first.body["messages"]) + 1
    feedback = second.body["messages"][-1]
    assert feedback["role"] == "user"
    assert "events.0.scope" in feedback["content"]
    assert "forever" in feedback["content"]


async def test_http_model_invalid_twice_raises_output_error(
    model: HttpModel, provider: FakeProvider
) -> None:
    provider.push(_tool_reply({"tags": []}), _text_reply("I cannot do that."))
    provider.push(_text_reply("Still no."))  # text under a forced tool call: schema in prompt
    with pytest.raises(ModelOutputError, match="summarize_block") as caught:
        await model.complete(_summary_task())
    assert len(provider.requests) == 3
    assert "tools" not in provider.requests[2].body
    assert "no tool call and no JSON" in str(caught.value)


async def test_http_model_malformed_tool_arguments_are_retried(
    model: HttpModel, provider: FakeProvider
) -> None:
    provider.push(_tool_reply('{"title": "cut off'), _tool_reply(SUMMARY))
    assert (await model.complete(_summary_task())).title == SUMMARY["title"]
    assert "not valid JSON" in provider.requests[1].body["messages"][-1]["content"]


@pytest.mark.parametrize("status", [401, 403])
async def test_http_model_auth_rejection_names_env_var_not_key(
    model: HttpModel, provider: FakeProvider, status: int
) -> None:
    provider.push(_error_reply(status, f"Incorrect API key provided: {KEY}"))
    with pytest.raises(ModelAuthError) as caught:
        await model.complete(_summary_task())
    message = str(caught.value)
    assert f"rejected the API key (set in ${KEY_ENV})" in message
    assert KEY not in message
    assert KEY not in repr(caught.value)


async def test_http_model_404_names_base_url_and_model(
    model: HttpModel, provider: FakeProvider
) -> None:
    provider.push(_error_reply(404, 'model "test-model" not found, try pulling it first'))
    with pytest.raises(ModelNotFoundError) as caught:
        await model.complete(_summary_task())
    assert provider.base_url in str(caught.value)
    assert "'test-model'" in str(caught.value)


async def test_http_model_429_reports_retry_after(model: HttpModel, provider: FakeProvider) -> None:
    provider.push(_error_reply(429, "Rate limit reached", headers={"Retry-After": "600"}))
    with pytest.raises(ModelRateLimitedError, match=r"retry after 600 s; gave up after 1 attempt$"):
        await model.complete(_summary_task())
    assert len(provider.requests) == 1


async def test_http_model_500_raises_server_error(model: HttpModel, provider: FakeProvider) -> None:
    provider.push(*[Response("upstream exploded", status_code=500)] * 4)
    with pytest.raises(ModelServerError, match="HTTP 500: upstream exploded"):
        await model.complete(_summary_task())


async def test_http_model_rejected_tool_choice_falls_back_to_plain_json(
    model: HttpModel, provider: FakeProvider
) -> None:
    provider.push(_error_reply(400, "tool_choice not supported"), _text_reply(json.dumps(SUMMARY)))
    assert (await model.complete(_summary_task())).title == SUMMARY["title"]
    first, second = provider.requests
    assert "tools" in first.body
    assert "tools" not in second.body
    assert "tool_choice" not in second.body
    system = second.body["messages"][0]["content"]
    assert json.dumps(BlockSummary.model_json_schema(), ensure_ascii=False) in system
    provider.push(_text_reply(json.dumps(SUMMARY)))
    await model.complete(_summary_task())
    assert "tools" not in provider.requests[2].body


async def test_http_model_second_tool_rejection_is_an_error(
    model: HttpModel, provider: FakeProvider
) -> None:
    provider.push(_error_reply(400, "tools unsupported"), _error_reply(400, "tools unsupported"))
    with pytest.raises(ModelError, match="HTTP 400: tools unsupported"):
        await model.complete(_summary_task())
    assert len(provider.requests) == 2


async def test_http_model_rejected_max_tokens_switches_parameter(
    model: HttpModel, provider: FakeProvider
) -> None:
    message = "Unsupported parameter: 'max_tokens' is not supported with this model."
    provider.push(_error_reply(400, message), _tool_reply(SUMMARY))
    await model.complete(_summary_task())
    second = provider.requests[1].body
    assert "max_tokens" not in second
    assert second["max_completion_tokens"] == 2048


async def test_http_model_slow_reply_raises_timeout(provider: FakeProvider) -> None:
    async def slow() -> Response:
        await asyncio.sleep(2)
        return _tool_reply(SUMMARY)

    provider.push(slow)
    async with HttpModel(_config(provider, timeout_s=0.2, max_attempts=1)) as http_model:
        with pytest.raises(ModelTimeoutError, match=r"within 0\.2 s"):
            await http_model.complete(_summary_task())


async def test_http_model_refused_connection_raises_model_error(
    provider: FakeProvider,
) -> None:
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        base_url = f"http://127.0.0.1:{unused.getsockname()[1]}/v1"
    config = _config(provider, base_url=base_url)
    async with HttpModel(config, clock=FakeTime().clock()) as http_model:
        with pytest.raises(ModelError, match="cannot reach"):
            await http_model.complete(_summary_task())


async def test_http_model_unset_key_env_sends_no_authorization(
    provider: FakeProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A local server needs no key (issue 31): the call is made without the header."""
    monkeypatch.delenv(KEY_ENV)
    provider.push(_tool_reply(SUMMARY))
    async with HttpModel(_config(provider)) as http_model:
        await http_model.complete(_summary_task())
    assert "authorization" not in provider.requests[0].headers


async def test_http_model_without_key_env_sends_no_authorization(
    provider: FakeProvider,
) -> None:
    provider.push(_tool_reply(SUMMARY))
    async with HttpModel(_config(provider, api_key_env=None)) as http_model:
        await http_model.complete(_summary_task())
    assert "authorization" not in provider.requests[0].headers


async def test_http_model_key_never_logged_or_in_repr(
    model: HttpModel, provider: FakeProvider, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    provider.push(
        _error_reply(400, f"tools not supported for key {KEY}"),
        _text_reply("no json here"),
        _error_reply(500, f"bad key {KEY}"),
    )
    with pytest.raises(ModelServerError) as caught:
        await model.complete(_summary_task())
    assert KEY not in caplog.text
    assert KEY not in str(caught.value)
    assert KEY not in repr(model)
    assert KEY not in repr(model.config)


async def test_http_model_injected_client_is_left_open(provider: FakeProvider) -> None:
    provider.push(_tool_reply(SUMMARY))
    async with httpx.AsyncClient() as client:
        async with HttpModel(_config(provider), client=client) as http_model:
            await http_model.complete(_summary_task())
        assert not client.is_closed


def test_http_model_config_normalises_base_url_and_bounds_tokens() -> None:
    config = HttpModelConfig(base_url="http://h/v1/chat/completions/", model="m")
    assert config.base_url == "http://h/v1"
    assert (config.timeout_s, config.max_output_tokens, config.temperature) == (120, 2048, 0)
    assert config.retry_policy == RetryPolicy(
        max_attempts=4, base_delay_s=0.5, max_delay_s=30, max_total_s=60
    )
    with pytest.raises(ValidationError):
        HttpModelConfig(base_url="http://h/v1", model="m", max_output_tokens=255)


@pytest.mark.parametrize(
    ("task_name", "fields"),
    [
        (SUMMARIZE_BLOCK, BlockSummary.model_fields),
        (EXTRACT_EVENT_CARDS, {"should_extract", "source_message_ids", "happened_start"}),
    ],
)
def test_load_prompt_names_every_output_field(task_name: str, fields: Any) -> None:
    prompt = load_prompt(task_name)
    assert all(f"`{name}`" in prompt for name in fields)
    assert "{{" not in prompt


def test_load_prompt_rejects_unknown_task() -> None:
    with pytest.raises(KeyError):
        load_prompt("../secrets")


@pytest.mark.parametrize(
    ("window", "low", "high"),
    [(None, 2048, 2048), (200_000, 32_768, 32_768), (4_096, 257, 4_095), (1_024, 256, 1_023)],
)
async def test_a_task_s_own_output_budget_is_cut_to_the_model_window(
    provider: FakeProvider, window: int | None, low: int, high: int
) -> None:
    """The topic projection asks 32,768 tokens (spec §5.3): granted only within a known
    window, less the input (never below 256); an unknown window keeps max_output_tokens."""
    task = replace(_summary_task(), max_output_tokens=32_768)
    async with HttpModel(_config(provider, context_window=window)) as http_model:
        provider.push(_tool_reply(SUMMARY))
        await http_model.complete(task)
        provider.push(_tool_reply(SUMMARY))
        await http_model.complete(_summary_task())  # no budget of its own
    first, plain = provider.requests
    granted = first.body["max_tokens"]
    assert low <= granted <= high
    sent = json.dumps(first.body["messages"], ensure_ascii=False)
    sent += json.dumps(BlockSummary.model_json_schema(), ensure_ascii=False)
    if window is not None and granted > 256:  # input and output fit the window
        assert granted + estimate_tokens(sent) <= window
    assert plain.body["max_tokens"] == 2048
