"""A model reply is read only up to ``max_reply_bytes``: a runaway 30 MB answer fails the call
with one line, nothing huge is stored, and the user's turn is kept (issue 24)."""

import asyncio
import gzip
import os
import sqlite3
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from loopback import FakeProvider, fake_provider
from starlette.responses import Response, StreamingResponse
from test_llm_http import SUMMARY, _summary_task, _tool_reply

from stratagate_plugin.core.llm.base import ModelError
from stratagate_plugin.core.llm.http import HttpModel, HttpModelConfig
from stratagate_plugin.core.llm.select import model_from_settings
from stratagate_plugin.core.store.db import stratagate_home
from stratagate_plugin.harness.profiles import profile_path
from stratagate_plugin.harness.sessions import session_path

ROOT = Path(__file__).resolve().parents[1]
KEY_ENV = "STRATAGATE_TEST_CAP_KEY"
HUGE = 30 * 1024 * 1024
CHUNK = 64 * 1024


@pytest.fixture
async def provider(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[FakeProvider]:
    async with fake_provider(monkeypatch, KEY_ENV, "sk-cap-test-0123456789") as fake:
        yield fake


class HugeReply:
    """A 30 MB chat-completions body, streamed in chunks; counts what the server sent."""

    def __init__(self, size: int = HUGE) -> None:
        self.size, self.sent = size, 0

    def chunks(self) -> Iterator[bytes]:
        head = b'{"choices":[{"index":0,"message":{"role":"assistant","content":"'
        yield head
        self.sent = len(head)
        while self.sent < self.size:
            self.sent += CHUNK
            yield b"x" * CHUNK
        yield b'"},"finish_reason":"stop"}]}'

    def response(self) -> Response:
        return StreamingResponse(self.chunks(), media_type="application/json")


def config(provider: FakeProvider, **overrides: Any) -> HttpModelConfig:
    values = {"base_url": provider.base_url, "model": "m", "api_key_env": KEY_ENV, "timeout_s": 60}
    return HttpModelConfig(**(values | overrides))


async def test_a_30_mb_reply_fails_the_call_with_one_line(provider: FakeProvider) -> None:
    huge = HugeReply()
    provider.push(huge.response())
    async with HttpModel(config(provider)) as model:
        with pytest.raises(ModelError) as failure:
            await model.complete(_summary_task())
    message = str(failure.value)
    assert type(failure.value).__name__ == "ModelReplyTooLargeError" and "\n" not in message
    assert message.startswith("model reply exceeded 512 KB; raise model.max_reply_bytes")
    assert len(provider.requests) == 1  # not tried again: the same reply would come back
    assert huge.sent < HUGE  # the read stopped, so the server never got to send it all


async def test_the_cap_is_a_setting_and_a_reply_under_it_is_read(provider: FakeProvider) -> None:
    provider.push(HugeReply(20_000).response(), _tool_reply(SUMMARY))
    async with HttpModel(config(provider, max_reply_bytes=16_384)) as model:
        with pytest.raises(ModelError, match="exceeded 16 KB"):
            await model.complete(_summary_task())
        summary = await model.complete(_summary_task())
    assert summary.title == SUMMARY["title"]


async def test_a_compressed_reply_is_capped_by_its_decoded_size(provider: FakeProvider) -> None:
    body = b"".join(HugeReply(2 * 1024 * 1024).chunks())
    packed = gzip.compress(body)
    assert len(packed) < 64 * 1024  # small on the wire, 2 MB once read
    provider.push(Response(packed, media_type="application/json",
                           headers={"content-encoding": "gzip"}))  # fmt: skip
    async with HttpModel(config(provider)) as model:
        with pytest.raises(ModelError, match="exceeded 512 KB"):
            await model.complete(_summary_task())


def test_max_reply_bytes_comes_from_the_profile_or_the_environment() -> None:
    endpoint = {"base_url": "http://127.0.0.1:9/v1", "model": "m"}
    assert HttpModelConfig(**endpoint).max_reply_bytes == 512 * 1024
    from_profile = model_from_settings({**endpoint, "max_reply_bytes": 65536})
    from_env = model_from_settings(None, {"STRATAGATE_BASE_URL": endpoint["base_url"],
                                          "STRATAGATE_MODEL": "m",
                                          "STRATAGATE_MAX_REPLY_BYTES": "8192"})  # fmt: skip
    assert isinstance(from_profile, HttpModel) and isinstance(from_env, HttpModel)
    assert (from_profile.config.max_reply_bytes, from_env.config.max_reply_bytes) == (65536, 8192)


async def test_a_chat_turn_with_a_huge_reply_keeps_the_turn_and_stores_nothing_huge(
    provider: FakeProvider,
) -> None:
    provider.push(HugeReply().response())
    path = profile_path("cap")
    path.parent.mkdir(parents=True)
    model = {"base_url": provider.base_url, "model": "m", "api_key_env": KEY_ENV}
    path.write_text(yaml.safe_dump({"plugins": ["stratagate-memory"], "model": model}))
    argv = ["-m", "stratagate_plugin.cli.main", "chat", "--profile", "cap", "--session", "c1"]
    process = await asyncio.create_subprocess_exec(
        sys.executable, *argv, "--message", "Remember the kiln fires at 1240 C.", cwd=ROOT,
        env=dict(os.environ), stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await asyncio.wait_for(process.communicate(), timeout=120)
    errors = [line for line in err.decode().splitlines() if "turn failed" in line]
    assert process.returncode == 1 and out == b""
    assert len(errors) == 1 and "model reply exceeded 512 KB" in errors[0]
    database = stratagate_home() / "memory.db"
    conn = sqlite3.connect(database)
    recorded = [row[0] for row in conn.execute("SELECT content FROM messages ORDER BY position")]
    biggest = conn.execute("SELECT max(length(content)) FROM messages").fetchone()[0]
    conn.close()
    assert recorded[0] == "Remember the kiln fires at 1240 C."
    assert biggest < 10_000
    assert database.stat().st_size < 5 * 1024 * 1024
    assert session_path("c1").stat().st_size < 100_000
