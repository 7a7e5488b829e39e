"""One resolution of the model settings (profile, then environment) for every command."""

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from loopback import FakeProvider, fake_provider
from starlette.responses import JSONResponse, Response

from stratagate_plugin.cli.main import main
from stratagate_plugin.core.llm.base import ModelConfigError
from stratagate_plugin.core.llm.http import HttpModel
from stratagate_plugin.core.llm.offline.model import OfflineModel
from stratagate_plugin.core.llm.select import model_from_settings, resolve_model_settings
from stratagate_plugin.harness.profiles import profile_path
from stratagate_plugin.memory_plugin.runtime import MemoryRuntime
from stratagate_plugin.memory_plugin.settings import DEFAULT_SETTINGS

PROFILE = {"base_url": "http://profile/v1", "model": "profile-model", "timeout_s": 7}
ENV = {
    "STRATAGATE_BASE_URL": "http://env/v1",
    "STRATAGATE_MODEL": "env-model",
    "STRATAGATE_TIMEOUT_S": "30",
    "STRATAGATE_MAX_ATTEMPTS": "2",
}


@pytest.mark.parametrize(
    ("settings", "environ", "expected"),
    [
        ({}, {}, {}),
        ({"model": None, "base_url": ""}, {"STRATAGATE_TIMEOUT_S": "30"}, {}),
        (
            PROFILE,
            {},
            {"base_url": "http://profile/v1", "model": "profile-model", "timeout_s": 7},
        ),
        (
            {},
            ENV,
            {
                "base_url": "http://env/v1",
                "model": "env-model",
                "api_key_env": "STRATAGATE_API_KEY",
                "timeout_s": "30",
                "max_attempts": "2",
            },
        ),
        (
            {**PROFILE, "api_key_env": None},
            {**ENV, "STRATAGATE_API_KEY_ENV": "OTHER_KEY"},
            {
                "base_url": "http://profile/v1",
                "model": "profile-model",
                "timeout_s": 7,
                "max_attempts": "2",
            },
        ),
        (
            {},
            {"STRATAGATE_BASE_URL": "http://env/v1", "STRATAGATE_API_KEY_ENV": "K"},
            {"base_url": "http://env/v1", "api_key_env": "K"},
        ),
    ],
    ids=["nothing", "blank", "profile", "environment", "profile wins whole", "env key var"],
)
def test_resolve_model_settings_profile_then_environment(
    settings: dict[str, Any], environ: dict[str, str], expected: dict[str, Any]
) -> None:
    assert resolve_model_settings(settings, environ) == expected


def test_model_from_settings_passes_timeout_and_retries_through() -> None:
    model = model_from_settings(
        {**PROFILE, "max_attempts": 2}, {"STRATAGATE_RETRY_MAX_TOTAL_S": "9"}
    )
    assert isinstance(model, HttpModel)
    config = model.config
    assert (config.timeout_s, config.max_attempts, config.retry_max_total_s) == (7, 2, 9)
    assert config.api_key_env is None


def test_model_from_settings_without_an_endpoint_is_offline() -> None:
    assert isinstance(model_from_settings({}, {"STRATAGATE_TIMEOUT_S": "5"}), OfflineModel)


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"base_url": "http://h/v1"}, "needs both a base URL and a model name"),
        ({**PROFILE, "timeout_s": "soon"}, "invalid model settings: timeout_s: "),
        ({**PROFILE, "temprature": 0}, "temprature: Extra inputs are not permitted"),
    ],
)
def test_model_from_settings_mistakes_are_one_value_error_line(
    settings: dict[str, Any], message: str
) -> None:
    with pytest.raises(ModelConfigError, match=message) as caught:
        model_from_settings(settings, {})
    assert isinstance(caught.value, ValueError) and "\n" not in str(caught.value)


def write_messages(path: Path, turns: int) -> Path:
    entries = []
    for i in range(turns):
        at = f"2025-01-01T10:{i:02d}:00Z"
        entries.append({"thread": "s1", "role": "user", "content": f"question {i}", "at": at})
        entries.append({"thread": "s1", "role": "assistant", "content": f"answer {i}", "at": at})
    path.write_text(json.dumps(entries))
    return path


@pytest.fixture
async def provider(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[FakeProvider]:
    async with fake_provider(monkeypatch, "STRATAGATE_TEST_UNUSED_KEY", "unused") as fake:
        yield fake


async def test_process_calls_the_model_the_default_profile_names(
    provider: FakeProvider, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = profile_path("default")
    path.parent.mkdir(parents=True)
    model = {"base_url": provider.base_url, "model": "profile-model", "timeout_s": 0.1}
    path.write_text(yaml.safe_dump({"plugins": [], "model": {**model, "max_attempts": 1}}))

    async def slow() -> Response:
        await asyncio.sleep(0.5)
        return Response("{}", media_type="application/json")

    provider.push(*[slow] * 4)
    db, messages = str(tmp_path / "m.db"), write_messages(tmp_path / "m.json", 6)
    ingest = ["ingest", str(messages), "--db", db, "--block-turns", "3"]
    assert await asyncio.to_thread(main, ingest) == 0
    assert provider.requests == []
    code = await asyncio.to_thread(main, ["process", "--db", db])
    _, err = capsys.readouterr()
    assert code == 0  # the offline model stood in for the slow one (issue 31), and says so
    assert "answered by the offline model because the model failed" in err
    assert provider.requests and provider.requests[0].body["model"] == "profile-model"
    assert "authorization" not in provider.requests[0].headers
    assert "did not answer within 0.1 s; gave up after 1 attempt" in err


async def test_plugin_runtime_derives_with_the_profile_model_and_its_timeout(
    tmp_path: Path,
) -> None:
    settings = {**DEFAULT_SETTINGS, "database": str(tmp_path / "m.db"), "model": PROFILE}
    runtime = await MemoryRuntime.start(settings, tmp_path)
    try:
        model = runtime.memory.model
        assert isinstance(model, HttpModel)
        assert (model.config.model, model.config.timeout_s) == ("profile-model", 7)
    finally:
        await runtime.stop(grace_s=0)


async def test_chat_uses_the_environments_model_like_every_other_command(
    provider: FakeProvider, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("STRATAGATE_BASE_URL", provider.base_url)
    monkeypatch.setenv("STRATAGATE_MODEL", "env-model")
    monkeypatch.setenv("STRATAGATE_API_KEY", "sk-env-key-0000")
    reply = {"choices": [{"message": {"content": "From the server."}, "finish_reason": "stop"}]}
    provider.push(*[JSONResponse(reply)] * 4)
    code = await asyncio.to_thread(main, ["chat", "--message", "hello"])
    out, err = capsys.readouterr()
    assert code == 0 and "From the server." in out and "model env-model" in err
    assert provider.requests[0].body["model"] == "env-model"


async def test_process_uses_the_memory_plugins_own_model_like_its_derivation_does(
    provider: FakeProvider, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``settings: {stratagate-memory: {model: …}}`` is the endpoint the plugin derives with
    (its startup prefers it to the profile's chat ``model:``); ``process`` must agree."""
    path = profile_path("default")
    path.parent.mkdir(parents=True)
    own = {"base_url": provider.base_url, "model": "memory-model", "max_attempts": 1}
    chat = {"base_url": "http://127.0.0.1:9/v1", "model": "chat-model"}
    body = {"plugins": [], "model": chat, "settings": {"stratagate-memory": {"model": own}}}
    path.write_text(yaml.safe_dump(body))
    provider.push(*[Response("{}", media_type="application/json")] * 4)
    db, messages = str(tmp_path / "m.db"), write_messages(tmp_path / "m.json", 6)
    ingest = ["ingest", str(messages), "--db", db, "--block-turns", "3"]
    assert await asyncio.to_thread(main, ingest) == 0
    await asyncio.to_thread(main, ["process", "--db", db])
    capsys.readouterr()
    assert provider.requests and provider.requests[0].body["model"] == "memory-model"
