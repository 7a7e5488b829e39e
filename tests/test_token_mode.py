"""Token mode (``serve --host 0.0.0.0 --token T``): the names the server is really reached
by are accepted, every other Host is still refused (DNS rebinding), and the token cookie
is found beside cookies Python's strict parser dislikes."""

import re
import socket
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from browser import serve

from stratagate_plugin.web.shell.security import (
    GuardPolicy,
    answered_names,
    cookie_values,
    policy_for,
)
from tests.webapp import web_app

TOKEN = "t0ken-for-tests"
PORT = 8377


def machine_addresses() -> set[str]:
    found = socket.getaddrinfo(socket.gethostname(), None, type=socket.SOCK_STREAM)
    return {str(address[0]).split("%")[0] for *_, address in found}


def as_host(name: str) -> str:
    return f"[{name}]:{PORT}" if ":" in name else f"{name}:{PORT}"


@pytest.fixture
async def wildcard(tmp_path: Path) -> AsyncIterator[httpx.AsyncClient]:
    """The app as ``serve --host 0.0.0.0 --token T --allowed-host memory.example.org``
    builds it, asked with the bearer token."""
    policy = policy_for("0.0.0.0", TOKEN, ["memory.example.org"])
    async with web_app(tmp_path, policy) as (_, _, client):
        client.headers["authorization"] = f"Bearer {TOKEN}"
        yield client


async def status(client: httpx.AsyncClient, host: str, **headers: str) -> int:
    return (await client.get("/chat", headers={"host": host, **headers})).status_code


async def test_a_wildcard_bind_answers_to_loopback_and_the_machines_own_names(
    wildcard: httpx.AsyncClient,
) -> None:
    names = ["127.0.0.1", "localhost", "::1", "0.0.0.0", socket.gethostname()]
    for name in [*names, *sorted(machine_addresses())]:
        assert await status(wildcard, as_host(name)) == 200, name
    assert await status(wildcard, "LOCALHOST") == 200  # no port, any case


async def test_allowed_hosts_are_accepted_and_every_other_name_still_refused(
    wildcard: httpx.AsyncClient,
) -> None:
    assert await status(wildcard, "memory.example.org:8377") == 200
    for host in ("evil.example", "evil.example:8377", "127.0.0.1.evil.example", "[::2]:8377"):
        answer = await wildcard.get("/chat", headers={"host": host})
        assert answer.status_code == 421, host
        assert "--allowed-host" in answer.text


def test_a_specific_bind_answers_to_itself_and_loopback_also_to_localhost() -> None:
    assert answered_names("192.0.2.10") == {"192.0.2.10"}
    assert answered_names("127.0.0.2") >= {"127.0.0.2", "localhost"}
    assert answered_names("::1") >= {"::1", "localhost", "127.0.0.1"}
    assert "localhost" not in policy_for("192.0.2.10", TOKEN).hosts
    assert policy_for("box.lan", TOKEN, ["Proxy.Example:443"]).hosts == {"box.lan", "proxy.example"}
    with pytest.raises(ValueError, match="without an access token"):
        policy_for("0.0.0.0", None)


@pytest.mark.parametrize(
    "cookie",
    [
        f"theme=dark mode; sg_token={TOKEN}",
        f'sg_token={TOKEN}; note="unterminated',
        f"a=b=c; sg_token={TOKEN}; lang=zh",
        f"sg_token=wrong; sg_token={TOKEN}",  # one per path: any may be ours
        f'sg_token="{TOKEN}"',
    ],
)
async def test_the_token_cookie_is_read_beside_cookies_the_strict_parser_refuses(
    tmp_path: Path, cookie: str
) -> None:
    policy = policy_for("127.0.0.1", TOKEN)
    async with web_app(tmp_path, policy) as (_, _, client):
        assert await status(client, "127.0.0.1:8377", cookie=cookie) == 200


@pytest.mark.parametrize(
    "cookie", ["theme=dark mode; sg_token=wrong", "sg_token_x=" + TOKEN, "x" + TOKEN, ""]
)
async def test_a_wrong_or_missing_token_cookie_is_still_refused(
    tmp_path: Path, cookie: str
) -> None:
    policy = GuardPolicy(frozenset({"127.0.0.1"}), TOKEN)
    async with web_app(tmp_path, policy) as (_, _, client):
        assert await status(client, "127.0.0.1:8377", cookie=cookie) == 401


def test_cookie_values_reads_each_pair_on_its_own() -> None:
    headers = ["theme=dark mode; sg_token=a", "sg_token = b ;junk; =c"]
    assert cookie_values(headers, "sg_token") == ["a", "b"]


def test_serve_on_every_interface_is_reached_by_loopback_names_and_allowed_hosts(
    tmp_path: Path,
) -> None:
    args = ("--host", "0.0.0.0", "--port", "0", "--token", TOKEN, "--allowed-host", "box.example")
    with serve(tmp_path, *args) as app:
        port = int(re.findall(r":(\d+)/", app.printed)[0])
        auth = {"authorization": f"Bearer {TOKEN}"}
        with httpx.Client(trust_env=False, timeout=30, headers=auth) as client:
            for host in ("127.0.0.1", "localhost", "box.example", socket.gethostname()):
                url = f"http://127.0.0.1:{port}/chat"
                answer = client.get(url, headers={"host": f"{host}:{port}"})
                assert answer.status_code == 200, host
            assert client.get(f"http://localhost:{port}/chat").status_code == 200
            evil = client.get(f"http://127.0.0.1:{port}/chat", headers={"host": "evil.example"})
            assert evil.status_code == 421
    assert "box.example" in app.stderr() and "localhost" in app.stderr()
