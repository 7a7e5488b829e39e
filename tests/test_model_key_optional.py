"""The API key is optional (issue 31): a local server (llama.cpp, Ollama, vLLM) needs none,
so no key means no ``Authorization`` header and the call is made; a server that does want
one answers 401/403, and that is one line saying how to give it."""

import asyncio
import json
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from loopback import FakeProvider, loopback_server, no_proxies
from starlette.responses import JSONResponse, Response

from stratagate_plugin.core.llm.base import ModelAuthError, StructuredTask
from stratagate_plugin.core.llm.http import HttpModel, HttpModelConfig
from stratagate_plugin.core.llm.select import model_from_settings
from stratagate_plugin.core.llm.tasks import SUMMARIZE_BLOCK, BlockSummary

ROOT = Path(__file__).resolve().parents[1]
SUMMARY = {"title": "Kiln", "tags": [], "summary": "The kiln is fixed.", "keypoints": []}


@pytest.fixture
async def provider(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[FakeProvider]:
    """A loopback provider with no key anywhere in the environment."""
    no_proxies(monkeypatch)
    monkeypatch.delenv("STRATAGATE_API_KEY", raising=False)
    fake = FakeProvider()
    async with loopback_server(fake.app):
        yield fake


def task() -> StructuredTask[BlockSummary]:
    payload = {"block": {"id": "b1", "messages": [{"id": "m1", "content": "kiln fixed"}]}}
    return StructuredTask(SUMMARIZE_BLOCK, BlockSummary, "Summarise.", payload)


def answer(content: str) -> Response:
    message = {"role": "assistant", "content": content}
    return JSONResponse({"choices": [{"index": 0, "message": message, "finish_reason": "stop"}]})


def refusal(status: int) -> Response:
    body = {"error": {"message": "Missing bearer token", "type": "authentication_error"}}
    return JSONResponse(body, status_code=status)


def env_model(environ: dict[str, str]) -> HttpModel:
    model = model_from_settings(environ=environ)
    assert isinstance(model, HttpModel)
    return model


def env_endpoint(provider: FakeProvider) -> dict[str, str]:
    return {"STRATAGATE_BASE_URL": provider.base_url, "STRATAGATE_MODEL": "smollm2"}


async def test_an_endpoint_from_the_environment_without_a_key_is_called_without_one(
    provider: FakeProvider,
) -> None:
    provider.push(answer(json.dumps(SUMMARY)))
    async with env_model(env_endpoint(provider)) as model:
        result = await model.complete(task())
    assert result.title == "Kiln"
    [request] = provider.requests
    assert "authorization" not in request.headers


async def test_a_profile_key_variable_that_is_unset_sends_no_header_either(
    provider: FakeProvider,
) -> None:
    provider.push(answer(json.dumps(SUMMARY)))
    config = HttpModelConfig(base_url=provider.base_url, model="m", api_key_env="NO_SUCH_KEY_31")
    async with HttpModel(config) as model:
        assert (await model.complete(task())).title == "Kiln"
    assert "authorization" not in provider.requests[0].headers


@pytest.mark.parametrize("status", [401, 403])
async def test_a_server_that_wants_a_key_says_how_to_give_it(
    provider: FakeProvider, status: int
) -> None:
    provider.push(refusal(status))
    async with env_model(env_endpoint(provider)) as model:
        with pytest.raises(ModelAuthError) as caught:
            await model.complete(task())
    message = str(caught.value)
    assert "\n" not in message
    assert "wants an API key" in message
    assert "$STRATAGATE_API_KEY" in message
    assert "api_key_env" in message
    assert f"HTTP {status}" in message
    assert len(provider.requests) == 1  # not retried


async def test_a_profile_without_a_key_variable_is_told_to_name_one(
    provider: FakeProvider,
) -> None:
    provider.push(refusal(401))
    config = HttpModelConfig(base_url=provider.base_url, model="m")
    async with HttpModel(config) as model:
        with pytest.raises(ModelAuthError, match="wants an API key") as caught:
            await model.complete(task())
    assert "api_key_env" in str(caught.value)


async def test_a_rejected_key_still_names_its_variable_and_never_the_key(
    provider: FakeProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = "sk-wrong-DO-NOT-LEAK-0123456789"
    monkeypatch.setenv("STRATAGATE_API_KEY", key)
    provider.push(refusal(401))
    async with env_model(env_endpoint(provider) | {"STRATAGATE_API_KEY": key}) as model:
        with pytest.raises(ModelAuthError) as caught:
            await model.complete(task())
    assert "rejected the API key (set in $STRATAGATE_API_KEY)" in str(caught.value)
    assert key not in str(caught.value)
    assert provider.requests[0].headers["authorization"] == f"Bearer {key}"


async def run_chat(provider: FakeProvider, text: str) -> tuple[int, str, str]:
    env = {**os.environ, **env_endpoint(provider)}
    env.pop("STRATAGATE_API_KEY", None)
    argv = ["-m", "stratagate_plugin.cli.main", "chat", "--profile", "bare", "--message", text]
    Path(env["STRATAGATE_HOME"], "profiles").mkdir(parents=True, exist_ok=True)
    Path(env["STRATAGATE_HOME"], "profiles", "bare.yml").write_text("plugins: []\n")
    process = await asyncio.create_subprocess_exec(
        sys.executable, *argv, cwd=ROOT, env=env,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await asyncio.wait_for(process.communicate(), timeout=120)
    return process.returncode or 0, out.decode(), err.decode()


async def test_chat_with_a_keyless_local_server_answers(provider: FakeProvider) -> None:
    provider.push(answer("Hello from the local model."))
    code, out, err = await run_chat(provider, "hi")
    assert code == 0, err
    assert out == "Hello from the local model.\n"
    assert "no API key" not in err
    assert "authorization" not in provider.requests[0].headers


async def test_chat_against_a_server_wanting_a_key_fails_in_one_line(
    provider: FakeProvider,
) -> None:
    provider.push(refusal(401))
    code, _, err = await run_chat(provider, "hi")
    assert code == 1
    failed = [line for line in err.splitlines() if "turn failed" in line]
    assert len(failed) == 1, err
    assert "wants an API key" in failed[0] and "STRATAGATE_API_KEY" in failed[0]
    assert "Traceback" not in err
