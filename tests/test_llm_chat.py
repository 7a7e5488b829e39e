"""Chat models against a real loopback server with scripted replies (nothing leaves 127.0.0.1)."""

import asyncio
import json
import os
import sqlite3
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from loopback import FakeProvider, fake_provider
from starlette.responses import JSONResponse, Response

from stratagate_plugin.core.llm.base import ModelAuthError, ModelError
from stratagate_plugin.core.llm.http import HttpModelConfig
from stratagate_plugin.core.store.db import stratagate_home
from stratagate_plugin.harness.agent import Agent
from stratagate_plugin.harness.chat import (
    ChatMessage,
    ChatModelError,
    EchoChatModel,
    ToolCall,
    ToolSpec,
)
from stratagate_plugin.harness.hookspecs import hookimpl
from stratagate_plugin.harness.pm import make_plugin_manager
from stratagate_plugin.harness.profiles import Profile, profile_path
from stratagate_plugin.harness.runtime import Host
from stratagate_plugin.harness.sessions import open_session, read_session, session_path
from stratagate_plugin.memory_plugin.chat_model import HttpChatModel

ROOT = Path(__file__).resolve().parents[1]
KEY_ENV = "STRATAGATE_TEST_CHAT_KEY"
KEY = "sk-chat-DO-NOT-LEAK-0123456789abcdef"
WEATHER = ToolSpec(
    name="weather",
    description="Weather for a city.",
    parameters={"type": "object", "properties": {"city": {"type": "string"}}},
)


@pytest.fixture
async def provider(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[FakeProvider]:
    async with fake_provider(monkeypatch, KEY_ENV, KEY) as fake:
        yield fake


def config(provider: FakeProvider) -> HttpModelConfig:
    return HttpModelConfig(base_url=provider.base_url, model="chat-model", api_key_env=KEY_ENV)


def reply(message: dict[str, Any], finish: str = "stop") -> Response:
    return JSONResponse({"choices": [{"index": 0, "message": message, "finish_reason": finish}]})


def call_reply(name: str, arguments: Any, call_id: str = "call_1") -> Response:
    function = {"name": name, "arguments": arguments}
    calls = [{"id": call_id, "type": "function", "function": function}]
    return reply({"role": "assistant", "content": None, "tool_calls": calls}, "tool_calls")


async def test_http_chat_sends_messages_and_tools_and_parses_tool_calls(
    provider: FakeProvider,
) -> None:
    provider.replies.append(call_reply("weather", '{"city": "Leeds"}'))
    messages = [
        ChatMessage(role="system", content="be brief"),
        ChatMessage(role="user", content="weather?", source="user"),
    ]
    async with HttpChatModel(config(provider)) as model:
        answer = await model.chat(messages, [WEATHER])
    assert answer.tool_calls == (
        ToolCall(id="call_1", name="weather", arguments='{"city": "Leeds"}'),
    )
    assert answer.finish_reason == "tool_calls"
    [(headers, body)] = provider.requests
    assert headers["authorization"] == f"Bearer {KEY}"
    assert body["messages"] == [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "weather?"},
    ]
    assert body["tools"] == [{"type": "function", "function": WEATHER.model_dump()}]
    assert (body["tool_choice"], body["model"]) == ("auto", "chat-model")


async def test_http_chat_round_trips_tool_results_and_reasoning(provider: FakeProvider) -> None:
    provider.replies.append(
        reply({"role": "assistant", "content": "Sunny.", "reasoning_content": "think"})
    )
    call = ToolCall(id="c1", name="weather", arguments='{"city": "Leeds"}')
    messages = [
        ChatMessage(role="user", content="weather?", source="user"),
        ChatMessage(role="assistant", tool_calls=(call,), reasoning="hidden"),
        ChatMessage(role="tool", content='{"sky": "clear"}', tool_call_id="c1", name="weather"),
    ]
    async with HttpChatModel(config(provider)) as model:
        answer = await model.chat(messages, [])
    assert (answer.text, answer.reasoning, answer.finish_reason) == ("Sunny.", "think", "stop")
    body = provider.requests[0][1]
    assert "tools" not in body
    assert body["messages"][1] == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "weather", "arguments": '{"city": "Leeds"}'},
            }
        ],
    }
    assert body["messages"][2] == {
        "role": "tool",
        "content": '{"sky": "clear"}',
        "tool_call_id": "c1",
        "name": "weather",
    }


async def test_http_chat_dict_arguments_are_turned_into_json_text(provider: FakeProvider) -> None:
    provider.replies.append(call_reply("weather", {"city": "York"}))
    async with HttpChatModel(config(provider)) as model:
        answer = await model.chat([ChatMessage(role="user", content="?")], [WEATHER])
    assert json.loads(answer.tool_calls[0].arguments) == {"city": "York"}


async def test_http_chat_auth_error_never_shows_the_key(provider: FakeProvider) -> None:
    provider.replies.append(JSONResponse({"error": {"message": f"bad key {KEY}"}}, status_code=401))
    async with HttpChatModel(config(provider)) as model:
        with pytest.raises(ModelAuthError) as caught:
            await model.chat([ChatMessage(role="user", content="?")], [])
    assert KEY not in str(caught.value) and "rejected the API key" in str(caught.value)


async def test_http_chat_unexpected_reply_is_a_model_error(provider: FakeProvider) -> None:
    provider.replies.append(JSONResponse({"choices": []}))
    async with HttpChatModel(config(provider)) as model:
        with pytest.raises(ModelError, match="unexpected reply"):
            await model.chat([ChatMessage(role="user", content="?")], [])


async def test_http_chat_errors_are_the_harness_error_and_keep_their_kind(
    provider: FakeProvider,
) -> None:
    """The agent loop catches the harness's ``ChatModelError``; core's kinds still hold."""
    provider.replies.append(JSONResponse({"error": {"message": "no"}}, status_code=401))
    async with HttpChatModel(config(provider)) as model:
        with pytest.raises(ChatModelError, match="rejected the API key") as caught:
            await model.chat([ChatMessage(role="user", content="?")], [])
    assert isinstance(caught.value, ModelAuthError)
    assert type(caught.value).__name__ == "ModelAuthError"


async def test_http_chat_drives_the_agent_loop(provider: FakeProvider, tmp_path: Path) -> None:
    def weather(city: str) -> dict[str, str]:
        """Weather for a city."""
        return {"city": city, "sky": "clear"}

    class Tools:
        @hookimpl
        def register_tools(self, register: Any) -> None:
            register(weather)

    provider.replies.extend(
        [call_reply("weather", '{"city": "Leeds"}'), reply({"content": "Clear."})]
    )
    host = Host(make_plugin_manager([("tools", Tools())]), Profile(name="t"), cwd=tmp_path)
    async with host, HttpChatModel(config(provider)) as model:
        result = await Agent(host, model).run_turn(open_session("s1", "t", tmp_path), "Leeds?")
    assert result.answer == "Clear."
    tool_message = provider.requests[1][1]["messages"][-1]
    assert json.loads(tool_message["content"]) == {"city": "Leeds", "sky": "clear"}


async def test_http_chat_malformed_reply_fails_the_turn_and_keeps_the_message(
    provider: FakeProvider, tmp_path: Path
) -> None:
    provider.replies.append(JSONResponse({"choices": [{"message": "just a string"}]}))
    host = Host(make_plugin_manager([]), Profile(name="t"), cwd=tmp_path)
    async with host, HttpChatModel(config(provider)) as model:
        session = open_session("bad1", "t", tmp_path)
        result = await Agent(host, model).run_turn(session, "Are you there?")
    assert not result.ok and result.error is not None
    assert result.error.startswith("model call failed: ")
    assert "choices.0.message should be an object, not a string" in result.error
    assert provider.base_url in result.error
    stored = read_session(session_path("bad1"))
    assert stored.turns == 1
    assert [m.text for m in stored.history if m.role == "user"] == ["Are you there?"]


async def test_echo_chat_repeats_the_human_message() -> None:
    messages = [ChatMessage(role="user", content="hi", source="user")]
    assert (await EchoChatModel().chat(messages, [])).text.endswith("You said: hi")


async def test_chat_command_message_is_recorded_before_exit(provider: FakeProvider) -> None:
    provider.replies.append(reply({"role": "assistant", "content": "Hello from the model."}))
    path = profile_path("t")
    path.parent.mkdir(parents=True)
    model = {"base_url": provider.base_url, "model": "chat-model", "api_key_env": KEY_ENV}
    path.write_text(yaml.safe_dump({"plugins": [], "model": model}))
    argv = ["-m", "stratagate_plugin.cli.main", "chat", "--profile", "t", "--session", "cli1"]
    process = await asyncio.create_subprocess_exec(
        sys.executable, *argv, "--message", "hi", cwd=ROOT, env=dict(os.environ),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await asyncio.wait_for(process.communicate(), timeout=60)
    assert process.returncode == 0, err.decode()
    assert out.decode() == "Hello from the model.\n" and KEY not in err.decode()
    lines = [json.loads(line) for line in session_path("cli1").read_text().splitlines()]
    assert [line["kind"] for line in lines] == ["session", "message", "message", "turn"]
    folded = lines[-1]["folded"]
    assert (folded["user"], folded["assistant"]) == ("hi", "Hello from the model.")
    assert provider.requests[0][0]["authorization"] == f"Bearer {KEY}"


async def test_chat_subprocess_with_the_memory_plugin_runs_the_gate(provider: FakeProvider) -> None:
    provider.replies.extend([
        call_reply("memory_search_raw", json.dumps({"query": "kiln"}), "c1"),
        call_reply("memory_record_use", json.dumps({"batch_id": "batch_1", "evidence_refs": []}),
                   "c2"),
        reply({"role": "assistant", "content": "I have no memory of the kiln yet."}),
    ])  # fmt: skip
    path = profile_path("mem")
    path.parent.mkdir(parents=True)
    model = {"base_url": provider.base_url, "model": "chat-model", "api_key_env": KEY_ENV}
    path.write_text(yaml.safe_dump({"plugins": ["stratagate-memory"], "model": model}))
    argv = ["-m", "stratagate_plugin.cli.main", "chat", "--profile", "mem", "--session", "m1"]
    process = await asyncio.create_subprocess_exec(
        sys.executable, *argv, "--message", "What about the kiln?", cwd=ROOT,
        env=dict(os.environ), stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await asyncio.wait_for(process.communicate(), timeout=60)
    assert process.returncode == 0, err.decode()
    assert out.decode() == "I have no memory of the kiln yet.\n" and KEY not in err.decode()
    first = provider.requests[0][1]
    assert "memory_search_events" in {tool["function"]["name"] for tool in first["tools"]}
    assert "[StrataGate memory protocol]" in first["messages"][0]["content"]
    conn = sqlite3.connect(stratagate_home() / "memory.db")
    batches = conn.execute("SELECT id, status FROM batches").fetchall()
    recorded = conn.execute("SELECT content FROM messages ORDER BY position").fetchall()
    conn.close()
    assert batches == [("batch_1", "recorded")]
    assert [row[0] for row in recorded] == [
        "What about the kiln?",
        "I have no memory of the kiln yet.",
    ]
