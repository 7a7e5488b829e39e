"""A started host with the memory plugin, its web app, and an HTTP client for route tests.

``web_app(home)`` yields ``(app, host, client)``; the client talks to the app in process
through ``httpx.ASGITransport`` with a loopback Host header, as a browser on 127.0.0.1."""

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx

from stratagate_plugin.harness.profiles import load_profile
from stratagate_plugin.harness.runtime import Host
from stratagate_plugin.memory_plugin.offline_agent import create_chat_model
from stratagate_plugin.web.shell.app import build_app
from stratagate_plugin.web.shell.security import GuardPolicy

BASE_URL = "http://127.0.0.1:8377"
SAME_ORIGIN = {"sec-fetch-site": "same-origin", "origin": BASE_URL}


@asynccontextmanager
async def web_app(
    cwd: Path, policy: GuardPolicy | None = None, profile: str = "default"
) -> AsyncIterator[tuple[Any, Host, httpx.AsyncClient]]:
    """The app over a fresh host (``$STRATAGATE_HOME`` is the test's, see conftest)."""
    host = Host.from_profile(load_profile(profile), cwd)
    await host.start()
    try:
        model = create_chat_model(host)
        app = await build_app(host, model, policy)
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url=BASE_URL) as client:
            yield app, host, client
    finally:
        await host.stop()


async def post(client: httpx.AsyncClient, url: str, **kwargs: Any) -> httpx.Response:
    """A same-origin form post, as the browser sends it from one of the app's pages."""
    headers = {**SAME_ORIGIN, **kwargs.pop("headers", {})}
    return await client.post(url, headers=headers, **kwargs)


async def worker_on_request(host: Host) -> Any:
    """The plugin's runtime once its worker runs only when asked (``kick``: a turn, a
    retry), its pass under way over: its polls for idle tails and for other processes'
    jobs are off, so work a test leaves pending stays so however slow the machine (a poll
    every 3 s can derive a block a test sealed to show it pending, or run beside a pass of
    the test's own, which then returns while the worker still holds a job)."""
    runtime = host.pm.get_plugin("stratagate-memory").runtime
    runtime.job_poll_s = runtime.idle_check_s = 3600.0
    runtime.kick()  # ends the wait under way: the next one takes the new intervals
    await asyncio.wait_for(runtime.idle.wait(), timeout=60)
    return runtime


def memory_of(host: Host) -> Any:
    """The memory plugin's running engine (a ``StrataGate``)."""
    return host.pm.get_plugin("stratagate-memory").runtime.memory


async def new_chat(client: httpx.AsyncClient) -> str:
    """A new web chat session; its id."""
    response = await post(client, "/chat/new")
    return str(response.headers["location"]).rsplit("/", 1)[-1]


async def say(client: httpx.AsyncClient, session_id: str, text: str) -> httpx.Response:
    """One chat turn through the web chat, as the page's form sends it (htmx)."""
    url = f"/chat/{session_id}/messages"
    return await post(client, url, data={"text": text}, headers={"hx-request": "true"})
