"""The chat page in headless Chromium against a real ``stratagate serve``, as a person uses it:
telling a fact, the Chinese UI, a hostile message shown as text, and writes from other sites
or other Host names refused."""

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from browser import App, http_client, screenshot, send
from playwright.sync_api import Page, expect

FACT = "My sister Ana moved to Porto in March."
HOSTILE = '<script>window.__pwned=1</script><img src=x onerror="window.__pwned=2">'


def new_conversation(page: Page) -> str:
    """From the chat page, a click on "New conversation"; the new conversation's id."""
    page.get_by_role("button", name="New conversation").click()
    page.wait_for_url("**/chat/*")
    return page.url.rsplit("/", 1)[-1]


def turns_on_disk(app: App, session_id: str) -> int:
    path = app.session_file(session_id)
    if not path.exists():
        return 0
    lines = path.read_text().splitlines()
    return sum(1 for line in lines if line and json.loads(line).get("kind") == "turn")


def test_telling_a_fact_answers_in_place_and_persists(page: Page, app: App) -> None:
    page.goto("/")
    assert page.url == app.url + "/chat"
    expect(page.get_by_role("heading", name="Conversations")).to_be_visible()
    session_id = new_conversation(page)
    page.evaluate("window.__sameDocument = true")  # gone if the page were reloaded

    send(page, FACT)

    turn = page.locator("#turns article.turn").last
    expect(turn.locator(".message.user .text")).to_have_text(FACT)
    assert page.evaluate("window.__sameDocument") is True, "sending reloaded the page"
    expect(page.get_by_role("textbox")).to_have_value("")
    assert turns_on_disk(app, session_id) == 1

    page.reload()
    listed = page.locator(".session-list li.current a")
    expect(listed).to_have_text(FACT)
    assert listed.get_attribute("href") == f"/chat/{session_id}"
    expect(page.locator(".session-list li.current")).to_contain_text("1 turn")
    expect(page.locator("#turns .message.user .text")).to_have_text([FACT])
    expect(page.locator("#turns .message.agent .text")).not_to_be_empty()
    screenshot(page, "chat")


def test_the_chinese_ui(page: Page) -> None:
    page.goto("/chat")
    new_conversation(page)
    send(page, FACT)
    page.get_by_role("link", name="中文").click()
    page.wait_for_url("**?lang=zh")

    expect(page.locator("html")).to_have_attribute("lang", "zh-CN")
    expect(page.locator(".mainnav")).to_contain_text("对话")
    expect(page.get_by_role("heading", name="对话列表")).to_be_visible()
    expect(page.get_by_role("button", name="新对话")).to_be_visible()
    expect(page.get_by_role("button", name="发送")).to_be_visible()
    expect(page.locator("#turns .message.user .who")).to_have_text(["你"])
    expect(page.get_by_role("link", name="English")).to_be_visible()
    screenshot(page, "chat-zh")

    page.goto("/chat")  # the choice is remembered without ?lang
    expect(page.get_by_role("button", name="新对话")).to_be_visible()


def test_a_hostile_message_is_shown_as_text(page: Page, app: App) -> None:
    response = page.goto("/chat")
    assert response is not None
    script_src = csp_directive(response.headers["content-security-policy"], "script-src")
    assert script_src == ["'self'"], script_src
    new_conversation(page)

    send(page, HOSTILE)
    assert_inert(page)

    page.reload()  # the server-rendered page too
    expect(page.locator("#turns .message.user .text")).to_have_text([HOSTILE])
    assert_inert(page)


def assert_inert(page: Page) -> None:
    expect(page.locator("#turns .message.user .text").last).to_have_text(HOSTILE)
    assert page.locator("img[src=x]").count() == 0
    assert page.locator("#turns script").count() == 0
    assert page.evaluate("typeof window.__pwned") == "undefined"


def csp_directive(policy: str, name: str) -> list[str]:
    directives = {}
    for part in policy.split(";"):
        words = part.split()
        if words:
            directives[words[0]] = words[1:]
    assert "'unsafe-inline'" not in policy and "'unsafe-eval'" not in policy, policy
    return directives.get(name, directives.get("default-src", []))


@dataclass
class Attacker:
    """Another site on loopback: it serves ``html`` at every path and lists the paths asked."""

    port: int = 0
    html: str = ""
    seen: list[str] = field(default_factory=list)


@pytest.fixture
def attacker() -> Iterator[Attacker]:
    site = Attacker()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            site.seen.append(self.path)
            body = site.html.encode()
            self.send_response(200)
            self.send_header("content-type", "text/html; charset=utf-8")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    site.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield site
    server.shutdown()
    server.server_close()
    thread.join()


@pytest.mark.parametrize("site", ["127.0.0.1", "localhost"])
def test_a_cross_site_form_post_is_refused(
    page: Page, app: App, attacker: Attacker, site: str
) -> None:
    """Another port is another origin (same site); ``localhost`` is another site."""
    page.goto("/chat")
    session_id = new_conversation(page)
    send(page, FACT)
    target = f"{app.url}/chat/{session_id}/messages"
    attacker.html = (
        f'<form method="post" action="{target}"><input name="text" value="I was forged">'
        "</form><script>document.forms[0].submit()</script>"
    )

    with page.expect_response(target) as answer:
        page.goto(f"http://{site}:{attacker.port}/attack")
    assert attacker.seen == ["/attack"]
    assert answer.value.status == 403
    expect(page.locator("body")).to_contain_text("refused: a cross-site request")
    assert turns_on_disk(app, session_id) == 1


def test_a_foreign_host_name_is_refused(app: App) -> None:
    with http_client(app) as client:
        assert client.get("/chat").status_code == 200
        refused = client.get("/chat", headers={"host": "evil.example"})
        assert refused.status_code == 421
        assert "Host name" in refused.text
        forged = client.post(
            "/chat/new", headers={"host": f"evil.example:{app.url.rsplit(':', 1)[1]}"}
        )
        assert forged.status_code == 421


def test_enter_sends_and_shift_enter_adds_a_newline(page: Page, app: App) -> None:
    page.goto("/chat")
    session_id = new_conversation(page)
    box = page.get_by_role("textbox")
    box.fill("first line")
    box.press("Shift+Enter")
    box.press_sequentially("second line")
    expect(box).to_have_value("first line\nsecond line")
    assert turns_on_disk(app, session_id) == 0

    box.press("Enter")

    turn = page.locator("#turns article.turn").last
    expect(turn.locator(".message.user .text")).to_have_text("first line\nsecond line")
    expect(box).to_have_value("")
    assert turns_on_disk(app, session_id) == 1


def test_the_first_page_has_a_message_box(page: Page, app: App) -> None:
    """No "New conversation" click needed: the first message starts one."""
    page.goto("/chat")
    box = page.get_by_role("textbox")
    expect(box).to_be_visible()
    box.fill("I keep bees on the roof.")
    box.press("Enter")

    page.wait_for_url("**/chat/*")
    session_id = page.url.rsplit("/", 1)[-1]
    expect(page.locator("#turns .message.user .text")).to_have_text(["I keep bees on the roof."])
    assert turns_on_disk(app, session_id) == 1


def test_the_sidebar_follows_the_conversation_without_reload(page: Page, app: App) -> None:
    page.goto("/chat")
    session_id = new_conversation(page)
    for number in range(1, 4):
        send(page, f"Message number {number} about my garden.")
    current = page.locator(".session-list li.current")
    expect(current.locator("a")).to_have_text("Message number 1 about my garden.")
    expect(current).to_contain_text("3 turns")
    assert current.locator("a").get_attribute("href") == f"/chat/{session_id}"


def test_a_conversation_is_titled_by_its_first_message(page: Page) -> None:
    page.goto("/chat")
    session_id = new_conversation(page)
    send(page, FACT)
    page.reload()
    heading = page.locator(".conversation-head h2")
    expect(heading).to_have_text(FACT)
    assert session_id not in (heading.text_content() or "")


def test_the_chat_shows_its_memory_space(page: Page) -> None:
    page.goto("/chat")
    expect(page.locator(".memory-space")).to_contain_text("memory space")
    new_conversation(page)
    expect(page.locator(".memory-space")).to_contain_text("memory space")
