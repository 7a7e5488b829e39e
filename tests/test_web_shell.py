"""The harness's web app: a plugin's section through ``register_web``, the chat pages, and
the guard (Host names, cross-site writes, token, body size, CSP, redaction, errors)."""

from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route
from webapp import BASE_URL, SAME_ORIGIN, new_chat, post, say, web_app

from stratagate_plugin.core.text.secrets import redact_secrets
from stratagate_plugin.harness.chat import EchoChatModel
from stratagate_plugin.harness.hookspecs import hookimpl
from stratagate_plugin.harness.pm import make_plugin_manager
from stratagate_plugin.harness.profiles import Profile
from stratagate_plugin.harness.runtime import Host
from stratagate_plugin.harness.sessions import read_session, session_path
from stratagate_plugin.harness.types import NavLink, WebSection
from stratagate_plugin.web.shell import security
from stratagate_plugin.web.shell.app import build_app
from stratagate_plugin.web.shell.security import GuardPolicy, policy_for
from stratagate_plugin.web.shell.templating import render

SECRET = "sk-proj-abcdefghijklmnopqrstuvwx1234"


class Pages:
    """A tiny plugin with one page, one JSON route and one route that fails."""

    @hookimpl
    def register_web(self, register: Any) -> None:
        async def hello(request: Request) -> Response:
            return render(request, "shell/error.html", {"status": 200, "message": "hello"})

        async def leak(request: Request) -> Response:
            return JSONResponse({"key": SECRET, "note": f"api_key={SECRET}"})

        async def broken(request: Request) -> Response:
            raise RuntimeError("boom")

        async def echo_body(request: Request) -> Response:
            return PlainTextResponse(str(len(await request.body())))

        routes = [
            Route("/hello", hello),
            Route("/leak", leak),
            Route("/broken", broken),
            Route("/echo", echo_body, methods=["POST"]),
            Route("/upload", echo_body, methods=["POST"]),
        ]
        register(
            WebSection(
                id="demo",
                path="/demo",
                routes=routes,
                nav=[NavLink("/demo/hello", {"en": "Demo", "zh": "演示"})],
                strings={"en": {"demo.x": "x"}, "zh": {"demo.x": "叉"}},
                body_limits={"/upload": 3_000_000},
            )
        )


async def demo_client(tmp_path: Path, policy: GuardPolicy | None = None) -> Any:
    host = Host(make_plugin_manager([("demo", Pages())]), Profile(name="t"), cwd=tmp_path)
    await host.start()
    app = await build_app(host, EchoChatModel(), policy)
    client = httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=BASE_URL)
    return host, client


@pytest.fixture
async def demo(tmp_path: Path) -> Any:
    host, client = await demo_client(tmp_path)
    async with client:
        yield client
    await host.stop()


async def test_hook_register_web_mounts_routes_nav_and_strings(demo: httpx.AsyncClient) -> None:
    page = await demo.get("/demo/hello")
    assert page.status_code == 200
    assert 'href="/demo/hello"' in page.text and ">Demo<" in page.text
    chinese = await demo.get("/demo/hello?lang=zh")
    assert ">演示<" in chinese.text and ">对话<" in chinese.text
    assert chinese.cookies.get("sg_lang") == "zh"


async def test_hook_register_web_body_limits_raise_the_limit_of_named_routes_only(
    demo: httpx.AsyncClient,
) -> None:
    body = b"x" * 2_000_000
    upload = await demo.post("/demo/upload", content=body, headers=SAME_ORIGIN)
    assert upload.status_code == 200 and upload.text == str(len(body))
    echo = await demo.post("/demo/echo", content=body, headers=SAME_ORIGIN)
    assert echo.status_code == 413
    over = await demo.post("/demo/upload", content=body * 2, headers=SAME_ORIGIN)
    assert over.status_code == 413 and "3000000" in over.text

    async def chunks() -> Any:
        for _ in range(4):
            yield b"y" * 1_000_000

    chunked = await demo.post("/demo/upload", content=chunks(), headers=SAME_ORIGIN)
    assert chunked.status_code == 413


async def test_secrets_are_redacted_from_json_and_html(demo: httpx.AsyncClient) -> None:
    leaked = await demo.get("/demo/leak")
    assert SECRET not in leaked.text and "[redacted secret]" in leaked.text
    assert int(leaked.headers["content-length"]) == len(leaked.content)


def test_a_body_scanned_clean_is_not_scanned_again_and_one_with_a_secret_always_is(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The redaction's cache of clean bodies (by digest) never lets a secret through."""
    scans: list[str] = []

    def counted(text: str) -> str:
        scans.append(text)
        return redact_secrets(text)

    monkeypatch.setattr(security, "redact_secrets", counted)
    clean = b"<p>a page of block cards, 1,024 tokens each</p>"
    assert security.redacted_body(clean) == clean and security.redacted_body(clean) == clean
    leaking = f"<p>my key: {SECRET}</p>".encode()
    for _ in range(2):
        assert SECRET.encode() not in security.redacted_body(leaking)
    odd = b"<p>caf\xe9</p>"  # not UTF-8: replaced, each time
    assert security.redacted_body(odd) == security.redacted_body(odd) == "<p>caf\ufffd</p>".encode()
    assert len(scans) == 1 + 2 + 2


async def test_a_failing_view_is_a_500_page_without_traceback(demo: httpx.AsyncClient) -> None:
    page = await demo.get("/demo/broken")
    assert page.status_code == 500
    assert "Traceback" not in page.text and "boom" not in page.text
    assert "the server failed to answer this request" in page.text


async def test_unknown_paths_are_a_404_page_and_json_for_json_clients(
    demo: httpx.AsyncClient,
) -> None:
    page = await demo.get("/nothing/here")
    assert page.status_code == 404 and "<h1>404" in page.text
    as_json = await demo.get("/nothing/here", headers={"accept": "application/json"})
    assert as_json.status_code == 404 and "error" in as_json.json()


async def test_every_answer_carries_a_csp_without_inline_script(demo: httpx.AsyncClient) -> None:
    for url in ("/chat", "/demo/hello", "/static/stratagate.css", "/nothing"):
        headers = (await demo.get(url)).headers
        csp = headers["content-security-policy"]
        assert "script-src 'self'" in csp and "unsafe-inline" not in csp
        assert headers["x-content-type-options"] == "nosniff"


async def test_foreign_host_names_are_refused(demo: httpx.AsyncClient) -> None:
    for host in ("evil.example", "evil.example:8377", "127.0.0.1.evil.example"):
        answer = await demo.get("/chat", headers={"host": host})
        assert answer.status_code == 421, host
    for host in ("127.0.0.1:8377", "localhost:8377", "[::1]:8377"):
        assert (await demo.get("/chat", headers={"host": host})).status_code == 200, host


@pytest.mark.parametrize(
    "headers",
    [
        {"sec-fetch-site": "cross-site"},
        {"sec-fetch-site": "same-site"},
        {"origin": "https://evil.example"},
        {"origin": "null"},
        {"origin": "http://127.0.0.1:9999"},
    ],
)
async def test_cross_site_writes_are_refused(demo: httpx.AsyncClient, headers: Any) -> None:
    answer = await demo.post("/demo/echo", content=b"x", headers=headers)
    assert answer.status_code == 403
    assert answer.text.startswith("refused: a cross-site request")


async def test_same_origin_and_non_browser_writes_pass(demo: httpx.AsyncClient) -> None:
    assert (await demo.post("/demo/echo", content=b"abc", headers=SAME_ORIGIN)).text == "3"
    assert (await demo.post("/demo/echo", content=b"abc")).text == "3"  # curl: no Origin


async def test_bodies_over_the_limit_are_refused(demo: httpx.AsyncClient) -> None:
    big = b"x" * 1_000_001
    answer = await demo.post("/demo/echo", content=big, headers=SAME_ORIGIN)
    assert answer.status_code == 413

    async def chunks() -> Any:
        for _ in range(11):
            yield b"y" * 100_000

    streamed = await demo.post("/demo/echo", content=chunks(), headers=SAME_ORIGIN)
    assert streamed.status_code == 413


def test_another_bind_address_needs_a_token() -> None:
    with pytest.raises(ValueError, match="without an access token"):
        policy_for("0.0.0.0", None)
    assert "box.lan" in policy_for("box.lan", "t0ken-value", ["box.lan"]).hosts


async def test_a_token_is_required_and_kept_in_a_cookie(tmp_path: Path) -> None:
    policy = policy_for("127.0.0.1", "s3cret-token-value")
    host, client = await demo_client(tmp_path, policy)
    async with client:
        assert (await client.get("/demo/hello")).status_code == 401
        wrong = await client.get("/demo/hello?token=nope")
        assert wrong.status_code == 401
        accepted = await client.get("/demo/hello?token=s3cret-token-value&lang=zh")
        assert accepted.status_code == 303 and accepted.headers["location"] == "/demo/hello?lang=zh"
        assert (await client.get("/demo/hello")).status_code == 200  # the cookie
        client.cookies.clear()
        bearer = {"authorization": "Bearer s3cret-token-value"}
        assert (await client.get("/demo/hello", headers=bearer)).status_code == 200
    await host.stop()


# -- the chat pages, with the memory plugin and the offline agent -----------------------


async def test_chat_turn_is_answered_recorded_and_listed(tmp_path: Path) -> None:
    async with web_app(tmp_path) as (_app, _host, client):
        session_id = await new_chat(client)
        assert (await client.get(f"/chat/{session_id}")).status_code == 200
        fragment = await say(client, session_id, "My sister Ana lives in Porto.")
        assert fragment.status_code == 200
        assert 'class="turn"' in fragment.text and "Ana lives in Porto" in fragment.text
        assert "<html" not in fragment.text  # a fragment for htmx, not a page
        stored = read_session(session_path(session_id))
        assert [turn.user for turn in stored.completed] == ["My sister Ana lives in Porto."]
        listing = await client.get("/chat")
        assert f'href="/chat/{session_id}"' in listing.text and "My sister Ana" in listing.text


async def test_a_plain_form_post_is_redirected_back(tmp_path: Path) -> None:
    async with web_app(tmp_path) as (_app, _host, client):
        session_id = await new_chat(client)
        answer = await post(client, f"/chat/{session_id}/messages", data={"text": "hello there"})
        assert answer.status_code == 303 and answer.headers["location"] == f"/chat/{session_id}"
        page = await client.get(f"/chat/{session_id}")
        assert "hello there" in page.text


async def test_chat_text_is_escaped(tmp_path: Path) -> None:
    async with web_app(tmp_path) as (_app, _host, client):
        session_id = await new_chat(client)
        attack = "<script>alert(1)</script><img src=x onerror=alert(2)>"
        fragment = await say(client, session_id, attack)
        page = await client.get(f"/chat/{session_id}")
        for html in (fragment.text, page.text):
            assert "<script>alert" not in html and "<img src=x" not in html
            assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


@pytest.mark.parametrize(
    ("session_id", "status"), [("no-such-session", 404), ("..%2Fetc", 404), ("a%0A", 404)]
)
async def test_unknown_or_invalid_sessions_are_404(
    tmp_path: Path, session_id: str, status: int
) -> None:
    async with web_app(tmp_path) as (_app, _host, client):
        assert (await client.get(f"/chat/{session_id}")).status_code == status
        sent = await post(client, f"/chat/{session_id}/messages", data={"text": "x"})
        assert sent.status_code == status


async def test_empty_and_oversized_messages_are_400_and_413(tmp_path: Path) -> None:
    async with web_app(tmp_path) as (_app, _host, client):
        session_id = await new_chat(client)
        url = f"/chat/{session_id}/messages"
        assert (await post(client, url, data={"text": "   "})).status_code == 400
        assert (await post(client, url, data={})).status_code == 400
        assert (await post(client, url, data={"text": "x" * 20_001})).status_code == 413
        assert not session_path(session_id).exists()  # nothing was recorded


async def test_the_chinese_chat_page(tmp_path: Path) -> None:
    async with web_app(tmp_path) as (_app, _host, client):
        page = await client.get("/chat", headers={"accept-language": "zh-CN,zh;q=0.9"})
        assert "新对话" in page.text and 'lang="zh-CN"' in page.text
        english = await client.get("/chat?lang=en", headers={"accept-language": "zh-CN"})
        assert "New conversation" in english.text
