"""A real HTTP server on 127.0.0.1 for tests of HTTP clients (nothing leaves the machine)."""

import asyncio
import socket
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

import pytest
import uvicorn
from starlette.applications import Starlette

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
