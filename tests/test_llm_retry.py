"""Retries of model requests: the pure policy, then a real loopback server and a fake clock."""

import asyncio
import socket
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from typing import Any

import pytest
from loopback import FakeProvider, fake_provider
from starlette.responses import JSONResponse, Response
from waits import FakeTime

from stratagate_plugin.core.llm.base import (
    ModelAuthError,
    ModelError,
    ModelRateLimitedError,
    ModelServerError,
    ModelTimeoutError,
    StructuredTask,
)
from stratagate_plugin.core.llm.http import HttpModel, HttpModelConfig
from stratagate_plugin.core.llm.retry import RetryPolicy, retry_after_seconds, retry_delay
from stratagate_plugin.core.llm.tasks import SUMMARIZE_BLOCK, BlockSummary
from stratagate_plugin.harness.chat import ChatMessage
from stratagate_plugin.memory_plugin.chat_model import HttpChatModel

KEY_ENV = "STRATAGATE_TEST_RETRY_KEY"
NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
POLICY = RetryPolicy(max_attempts=4, base_delay_s=0.5, max_delay_s=3, max_total_s=10)
SUMMARY = {"title": "T", "tags": [], "summary": "S.", "keypoints": [], "should_extract": False}


@pytest.mark.parametrize(
    ("attempt", "draw", "expected"),
    [(1, 1.0, 0.5), (2, 1.0, 1.0), (3, 1.0, 2.0), (3, 0.25, 0.5), (1, 0.0, 0.0)],
)
def test_retry_delay_is_exponential_with_full_jitter(
    attempt: int, draw: float, expected: float
) -> None:
    assert retry_delay(POLICY, attempt, 0, None, lambda: draw) == expected


def test_retry_delay_is_capped_at_max_delay() -> None:
    policy = RetryPolicy(max_attempts=20, base_delay_s=1, max_delay_s=3, max_total_s=1000)
    assert retry_delay(policy, 10, 0, None, lambda: 1.0) == 3


def test_retry_delay_waits_at_least_retry_after() -> None:
    assert retry_delay(POLICY, 1, 0, 2.5, lambda: 1.0) == 2.5
    assert retry_delay(POLICY, 3, 0, 0.1, lambda: 1.0) == 2.0


@pytest.mark.parametrize(
    ("attempt", "elapsed", "retry_after", "why"),
    [
        (4, 0, None, "the last attempt was made"),
        (1, 0, 3.5, "Retry-After asks for more than max_delay_s"),
        (1, 9.8, None, "the delay would pass max_total_s"),
        (1, 8, 2, "Retry-After would pass max_total_s"),
    ],
)
def test_retry_delay_gives_up(
    attempt: int, elapsed: float, retry_after: float | None, why: str
) -> None:
    assert retry_delay(POLICY, attempt, elapsed, retry_after, lambda: 1.0) is None, why


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        ("3", 3.0),
        (" 1.5 ", 1.5),
        ("-4", 0.0),
        (format_datetime(NOW + timedelta(seconds=10), usegmt=True), 10.0),
        (format_datetime(NOW - timedelta(seconds=10), usegmt=True), 0.0),
        ("Sun, 01 Mar 2026 12:00:07", 7.0),
        ("soon", None),
        ("nan", None),
        ("inf", None),
        ("", None),
        (None, None),
    ],
)
def test_retry_after_seconds_reads_seconds_and_http_dates(
    header: str | None, expected: float | None
) -> None:
    assert retry_after_seconds(header, NOW) == expected


@pytest.fixture
async def provider(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[FakeProvider]:
    async with fake_provider(monkeypatch, KEY_ENV, "sk-retry-0123456789") as fake:
        yield fake


def config(base_url: str, **overrides: Any) -> HttpModelConfig:
    values: dict[str, Any] = {"base_url": base_url, "model": "m", "api_key_env": KEY_ENV}
    return HttpModelConfig(**(values | {"timeout_s": 5} | overrides))


def summary_task() -> StructuredTask[BlockSummary]:
    return StructuredTask(SUMMARIZE_BLOCK, BlockSummary, "Summarise.", {"block": {}})


def ok() -> Response:
    function = {"name": "stratagate_summarize_block", "arguments": SUMMARY}
    message = {"content": None, "tool_calls": [{"id": "c1", "function": function}]}
    return JSONResponse({"choices": [{"message": message}]})


def status(code: int, headers: dict[str, str] | None = None) -> Response:
    return JSONResponse({"error": {"message": f"status {code}"}}, code, headers=headers)


async def complete(provider: FakeProvider, time: FakeTime, **overrides: Any) -> BlockSummary:
    async with HttpModel(config(provider.base_url, **overrides), clock=time.clock()) as model:
        return await model.complete(summary_task())


async def test_http_model_429_waits_for_retry_after_then_succeeds(provider: FakeProvider) -> None:
    provider.push(status(429, {"Retry-After": "1"}), ok())
    time = FakeTime(draw=0.0)
    assert (await complete(provider, time)).title == "T"
    assert len(provider.requests) == 2
    [slept] = time.sleeps
    assert slept >= 1


async def test_http_model_retry_after_as_http_date_is_honoured(provider: FakeProvider) -> None:
    when = format_datetime(datetime.now(UTC) + timedelta(seconds=5), usegmt=True)
    provider.push(status(503, {"Retry-After": when}), ok())
    time = FakeTime(draw=0.0)
    await complete(provider, time)
    [slept] = time.sleeps
    assert 0 < slept <= 5


async def test_http_model_503_twice_then_succeeds(provider: FakeProvider) -> None:
    provider.push(status(503), status(503), ok())
    time = FakeTime(draw=1.0)
    assert (await complete(provider, time)).title == "T"
    assert len(provider.requests) == 3
    assert time.sleeps == [0.5, 1.0]


@pytest.mark.parametrize("code", [500, 502, 504])
async def test_http_model_always_failing_server_gives_up_after_max_attempts(
    provider: FakeProvider, code: int
) -> None:
    provider.push(*[status(code)] * 5)
    with pytest.raises(ModelServerError, match=f"HTTP {code}.*gave up after 3 attempts$"):
        await complete(provider, FakeTime(), max_attempts=3)
    assert len(provider.requests) == 3


async def test_http_model_refused_connection_gives_up_after_max_attempts() -> None:
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        base_url = f"http://127.0.0.1:{unused.getsockname()[1]}/v1"
    time = FakeTime()
    async with HttpModel(config(base_url, api_key_env=None), clock=time.clock()) as model:
        with pytest.raises(ModelError, match=r"cannot reach .*gave up after 4 attempts$"):
            await model.complete(summary_task())
    assert len(time.sleeps) == 3


async def test_http_model_retries_stop_at_the_total_time_bound(provider: FakeProvider) -> None:
    provider.push(*[status(503)] * 10)
    time = FakeTime(draw=1.0)
    bounds = {"max_attempts": 10, "retry_base_delay_s": 4, "retry_max_delay_s": 4}
    with pytest.raises(ModelServerError, match="gave up after 3 attempts"):
        await complete(provider, time, retry_max_total_s=10, **bounds)
    assert time.sleeps == [4, 4] and len(provider.requests) == 3


async def test_http_model_retry_after_beyond_the_budget_is_not_waited_for(
    provider: FakeProvider,
) -> None:
    provider.push(status(429, {"Retry-After": "20"}), ok())
    time = FakeTime()
    with pytest.raises(ModelRateLimitedError, match="retry after 20 s; gave up after 1 attempt"):
        await complete(provider, time, retry_max_delay_s=30, retry_max_total_s=10)
    assert time.sleeps == [] and len(provider.requests) == 1


@pytest.mark.parametrize(
    ("reply", "error"),
    [
        (status(401), ModelAuthError),
        (status(403), ModelAuthError),
        (status(404), ModelError),
        (status(422), ModelError),
        (status(400), ModelError),
    ],
)
async def test_http_model_client_errors_are_never_retried(
    provider: FakeProvider, reply: Response, error: type[ModelError]
) -> None:
    provider.push(reply, ok())
    time = FakeTime()
    with pytest.raises(error) as caught:
        await complete(provider, time)
    assert len(provider.requests) == 1 and time.sleeps == []
    assert "gave up" not in str(caught.value)


async def slow() -> Response:
    await asyncio.sleep(0.5)
    return ok()


async def very_slow() -> Response:
    await asyncio.sleep(5)  # cancelled when the server stops
    return ok()


async def test_http_model_read_timeout_is_retried(provider: FakeProvider) -> None:
    provider.push(very_slow, ok())
    time = FakeTime()  # a timeout generous enough for the second, prompt reply on a busy box
    assert (await complete(provider, time, timeout_s=1.0, retry_max_total_s=10)).title == "T"
    assert len(provider.requests) == 2 and len(time.sleeps) == 1


async def test_http_model_retry_gets_only_the_time_the_budget_has_left(
    provider: FakeProvider,
) -> None:
    provider.push(status(503, {"Retry-After": "9.95"}), slow)
    with pytest.raises(ModelTimeoutError, match=r"within 0\.05 s; gave up after 2 attempts"):
        await complete(provider, FakeTime(), retry_max_delay_s=10, retry_max_total_s=10)


async def test_http_chat_retries_through_the_same_transport(provider: FakeProvider) -> None:
    reply = {"choices": [{"message": {"content": "Back."}, "finish_reason": "stop"}]}
    provider.push(status(502), JSONResponse(reply))
    time = FakeTime()
    model = HttpChatModel(config(provider.base_url), clock=time.clock())
    async with model:
        answer = await model.chat([ChatMessage(role="user", content="?")], [])
    assert answer.text == "Back." and len(time.sleeps) == 1
