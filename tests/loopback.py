"""A real HTTP server on 127.0.0.1 for tests of HTTP clients (nothing leaves the machine)."""

import asyncio
import socket
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import pytest
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

PROXY_VARS = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")


def no_proxies(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in PROXY_VARS:
        monkeypatch.delenv(var, raising=False)


@asynccontextmanager
async def loopback_server(make_app: Callable[[str], Starlette]) -> AsyncIterator[str]:
    """Serve ``make_app(base_url)`` on a free loopback port; yields ``http://127.0.0.1:N/v1``."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    base_url = f"http://127.0.0.1:{sock.getsockname()[1]}/v1"
    server = uvicorn.Server(uvicorn.Config(make_app(base_url), log_level="warning", lifespan="off"))
    serving = asyncio.create_task(server.serve(sockets=[sock]))
    for _ in range(500):
        if server.started or serving.done():
            break
        await asyncio.sleep(0.01)
    assert server.started, "loopback server did not start"
    try:
        yield base_url
    finally:
        server.should_exit = server.force_exit = True
        await serving
        sock.close()


Reply = Response | Callable[[], Awaitable[Response]]


class Recorded(NamedTuple):
    """One request the fake provider received."""

    headers: dict[str, str]
    body: dict[str, Any]


@dataclass
class FakeProvider:
    """A scripted OpenAI-compatible server's state: replies to give, requests received."""

    base_url: str = ""
    replies: deque[Reply] = field(default_factory=deque)
    requests: list[Recorded] = field(default_factory=list)

    def push(self, *replies: Reply) -> None:
        self.replies.extend(replies)

    def app(self, base_url: str) -> Starlette:
        self.base_url = base_url

        async def chat(request: Request) -> Response:
            self.requests.append(Recorded(dict(request.headers), await request.json()))
            if not self.replies:
                return JSONResponse({"error": {"message": "no scripted reply"}}, status_code=500)
            reply = self.replies.popleft()
            return reply if isinstance(reply, Response) else await reply()

        return Starlette(routes=[Route("/v1/chat/completions", chat, methods=["POST"])])


@asynccontextmanager
async def fake_provider(
    monkeypatch: pytest.MonkeyPatch, key_env: str, key: str
) -> AsyncIterator[FakeProvider]:
    """A scripted provider on loopback, with proxies unset and the API key in ``key_env``."""
    no_proxies(monkeypatch)
    monkeypatch.setenv(key_env, key)
    fake = FakeProvider()
    async with loopback_server(fake.app):
        yield fake
