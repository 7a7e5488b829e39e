"""Fault row "key after CJK" (issue 24): a key pasted right after Chinese text never shows.

The user says ``我的OpenAI密钥是sk-proj-…，请记住`` and a proxy URL with its password in the
web chat of a fresh plugin (offline model), puts a key in a profile field, lets the worker
derive, then reads every page the app links to from its start pages (chat, L1–L5 views,
events, raw JSON, export, profile), each answer once. A document showing a secret counts in
``crashes`` (the must-be-zero column this row has for a leak; ``details["leaks"]`` names
the page and the secret), a 5xx answer in ``tracebacks``; ``fuzz`` is the documents read.
"""

import asyncio
import os
import re
import tempfile
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urljoin, urlsplit

import httpx

from benchmarks.fault_parts.results import Row

KEY = "sk-proj-ZZZZYYYYXXXXWWWW9999"
PASSWORD = "Tr0ub4dor3xyz"
PROFILE_KEY = "ghp_" + "Q7" * 18
SECRETS = (KEY, "ZZZZYYYYXXXXWWWW9999", PASSWORD, PROFILE_KEY)
SECRET_NAMES = ("key after CJK", "key after CJK", "URL password", "key in the profile")
MESSAGES = (
    f"我的OpenAI密钥是{KEY}，请记住",
    f"代理地址：https://alice:{PASSWORD}@proxy.example.com:8080 用于测试",
)
BASE_URL = "http://127.0.0.1:8377"
SAME_ORIGIN = {"sec-fetch-site": "same-origin", "origin": BASE_URL}
START_PAGES = (
    "/",
    "/chat",
    "/memory/",
    "/memory/blocks",
    "/memory/events",
    "/memory/audit",
    "/memory/profile",
    "/memory/graph",
    "/memory/graph.json",
    "/memory/topics",
    "/memory/jobs",
    "/memory/settings",
    "/memory/import",
    "/memory/export.json?profile=1",
)
MAX_DOCUMENTS = 400
_HREF = re.compile(r"""(?:href|hx-get)="([^"#]+)""")
_SKIPPED = re.compile(r"^/(?:static|assets)/|\.(?:css|js|png|svg|ico|woff2?)(?:\?|$)")


def rows(folder: Path) -> list[Row]:
    """The one row: every document the app serves after the key was said, scanned."""
    folder.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    with _own_home(folder):
        row = asyncio.run(_key_after_cjk(folder))
    row.seconds = time.perf_counter() - started
    return [row]


async def _key_after_cjk(folder: Path) -> Row:
    row = Row("key after CJK", acknowledged=0, fuzz_cases=0, crashes=0, tracebacks=0)
    async with _app(folder) as (host, client):
        await _say_secrets(host, client, row)
        showing = dict.fromkeys(SECRET_NAMES, 0)
        for url, body in await _crawl(client, row):
            named = zip(SECRETS, SECRET_NAMES, strict=True)
            found = [name for secret, name in named if secret in body]
            for name in dict.fromkeys(found):
                showing[name] += 1
            if found:
                row.add("crashes")
                row.example("leaks", f"{url}: {found[0]}")
        row.details["documents_showing"] = showing
    return row


async def _say_secrets(host: Any, client: httpx.AsyncClient, row: Row) -> None:
    """The two messages through the web chat, a key in the profile, derivation waited for."""
    runtime = host.pm.get_plugin("stratagate-memory").runtime
    await runtime.memory.spaces.set_block_turn_size(runtime.default_space(), 1)  # L0–L5 at once
    created = await client.post("/chat/new", headers=SAME_ORIGIN)
    session = str(created.headers["location"]).rsplit("/", 1)[-1]
    for text in MESSAGES:
        answer = await client.post(
            f"/chat/{session}/messages",
            data={"text": text},
            headers={**SAME_ORIGIN, "hx-request": "true"},
        )
        if answer.status_code < 400:
            row.add("acknowledged")
    await runtime.memory.profile.update("response_preferences", f"部署用{PROFILE_KEY}令牌")
    for _ in range(3):  # the tail seals, its summary, then the events from it
        runtime.kick()
        await asyncio.wait_for(runtime.idle.wait(), timeout=120)


async def _crawl(client: httpx.AsyncClient, row: Row) -> list[tuple[str, str]]:
    """Every same-origin page reachable from the start pages (GET only, each once)."""
    queue, seen, read = list(START_PAGES), set(START_PAGES), []
    while queue and len(read) < MAX_DOCUMENTS:
        url = queue.pop(0)
        answer = await client.get(url)
        row.add("fuzz_cases")
        if answer.status_code >= 500:
            row.add("tracebacks")
            row.example("server_errors", f"{url}: {answer.status_code}")
        body = answer.text
        read.append((url, body))
        for link in _links(url, body):
            if link not in seen:
                seen.add(link)
                queue.append(link)
    return read


def _links(url: str, body: str) -> list[str]:
    found = []
    for href in _HREF.findall(body):
        target = urlsplit(urljoin(BASE_URL + url, href.replace("&amp;", "&")))
        if target.netloc != urlsplit(BASE_URL).netloc or _SKIPPED.search(target.path):
            continue
        found.append(target.path + (f"?{target.query}" if target.query else ""))
        if target.path.endswith("/view"):  # a block's preview: every level of it
            found += [f"{target.path}?level=L{level}" for level in range(6)]
    return found


@asynccontextmanager
async def _app(folder: Path) -> AsyncIterator[tuple[Any, httpx.AsyncClient]]:
    from stratagate_plugin.harness.profiles import load_profile
    from stratagate_plugin.harness.runtime import Host
    from stratagate_plugin.memory_plugin.offline_agent import create_chat_model
    from stratagate_plugin.web.shell.app import build_app

    host = Host.from_profile(load_profile("default"), folder)
    await host.start()
    try:
        app = await build_app(host, create_chat_model(host), None)
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url=BASE_URL) as client:
            yield host, client
    finally:
        await host.stop()


@contextmanager
def _own_home(folder: Path) -> Iterator[None]:
    """Profiles and the database live under ``$STRATAGATE_HOME``: a fresh one for the row."""
    before = os.environ.get("STRATAGATE_HOME")
    os.environ["STRATAGATE_HOME"] = tempfile.mkdtemp(prefix="home-", dir=folder)
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("STRATAGATE_HOME", None)
        else:
            os.environ["STRATAGATE_HOME"] = before


if __name__ == "__main__":
    from benchmarks.fault_parts.results import table

    measured = rows(Path(tempfile.mkdtemp(prefix="r24-secrets-")))
    print(table(measured))
    print(measured[0].details)
