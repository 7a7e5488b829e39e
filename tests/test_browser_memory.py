"""The memory page in headless Chromium, as a person uses it after telling the agent a
fact: the block and the event appear, a block is expanded, the profile refuses a stale
edit, an event is corrected (the chain shows) and forgotten (gone from search); hostile
event text stays text; every view is screenshotted for the README."""

import json
import time
from collections.abc import Callable

import pytest
from browser import App, run, screenshot, send, start, stop
from playwright.sync_api import Browser, Page, expect

FACT = "My sister Ana moved to Porto in March."
HOSTILE = (
    "I decided to launch the <script>window.__pwned=1</script> "
    '<img src=x onerror="window.__pwned=2"> project with my sister Ana next Monday.'
)


def wait_for(page: Page, url: str, ready: Callable[[], bool], timeout_s: float = 30.0) -> None:
    """Reload ``url`` until ``ready()`` (the background worker derives between loads)."""
    deadline = time.monotonic() + timeout_s
    while True:
        page.goto(url)
        if ready():
            return
        if time.monotonic() > deadline:
            pytest.fail(f"{url} never showed what the test waited for")
        time.sleep(0.5)


WIDER_THAN = """(width) => [...document.querySelectorAll('body *')]
  .filter(e => e.getBoundingClientRect().right > width)
  .map(e => e.tagName + '.' + e.className).slice(0, 12)"""


def assert_fits(page: Page, width: int) -> None:
    """At ``width`` px the page scrolls down, never sideways."""
    page.set_viewport_size({"width": width, "height": 800})
    try:
        overflow = page.evaluate("document.documentElement.scrollWidth")
        wide = page.evaluate(WIDER_THAN, width + 2)
        assert overflow <= width, f"the page is {overflow} px wide at {width} px: {wide}"
    finally:
        page.set_viewport_size({"width": 1280, "height": 800})


# The status page once the background work this fact starts is all done: its four kinds of
# job (summary, extraction, graph, topics) none pending or running, no stage working.
SETTLED = """() => {
  const rows = [...document.querySelectorAll("table.job-counts tbody tr")];
  const idle = (row) => row.cells[1].textContent.trim() === "0"
    && row.cells[2].textContent.trim() === "0";
  return rows.length >= 4 && rows.every(idle)
    && document.querySelectorAll("tr.stage-working").length === 0;
}"""


def accept_dialogs(page: Page) -> None:
    """``hx-confirm`` asks with the browser's confirm(): the person clicks OK."""
    page.on("dialog", lambda dialog: dialog.accept())


def set_block_turns(page: Page, turns: int) -> None:
    page.goto("/memory/settings")
    page.locator("input[name=block_turn_size]").fill(str(turns))
    page.get_by_role("button", name="Save").click()
    page.wait_for_load_state()
    expect(page.locator("input[name=block_turn_size]")).to_have_value(str(turns))


def tell(page: Page, text: str) -> str:
    """A new conversation with one turn; its address."""
    page.goto("/chat")
    page.get_by_role("button", name="New conversation").click()
    page.wait_for_url("**/chat/*")
    send(page, text)
    return page.url


def test_a_fact_told_in_chat_is_managed_on_the_memory_page(page: Page, app: App) -> None:
    accept_dialogs(page)
    set_block_turns(page, 1)
    screenshot(page, "memory-settings")
    conversation = tell(page, FACT)

    ready = page.locator(".block-card [data-status=ready]")
    wait_for(page, "/memory/blocks", lambda: ready.count() > 0)
    card = page.locator(".block-card").first
    expect(card).to_contain_text("Porto")
    card.locator("select[name=level]").select_option("L5")
    card.get_by_role("button", name="Expand").click()
    expect(page.locator(".block-card").first.locator("[data-source]")).to_have_attribute(
        "data-source", "user"
    )
    page.locator(".block-card").first.get_by_role("button", name="L1").click()
    # the preview itself, not the card (whose summary already names Porto): a screenshot
    # taken before the swap came out without it
    preview = page.locator(".block-card").first.locator(".block-preview [data-level=L1]")
    expect(preview).to_contain_text("Porto")
    screenshot(page, "memory-blocks")

    wait_for(page, "/memory/", lambda: page.evaluate(SETTLED))
    expect(page.locator("main")).to_contain_text("1")
    screenshot(page, "memory-status")

    wait_for(page, "/memory/events?q=Porto", lambda: page.locator(".event-row").count() > 0)
    screenshot(page, "memory-events")
    assert_fits(page, 390)  # a phone

    page.goto(conversation)
    send(page, "Where did my sister Ana move?")
    answer = page.locator("#turns article.turn").last
    expect(answer.locator(".message.agent .text")).to_contain_text("Porto")
    tail = answer.locator("details.citations")
    tail.locator("summary").first.click()
    expect(tail.locator("a[href^='/memory/events/']").first).to_contain_text("Porto")
    tail.locator("details.checked summary").click()
    screenshot(page, "chat-citations")

    page.goto("/memory/events?q=Porto")
    page.locator(".event-row a.event-title").first.click()
    expect(page.locator(".event-head h1")).to_contain_text("Porto")
    old_url = page.url

    form = page.locator(".correct-form")
    form.locator("input[name=title]").fill("Ana moved to Lisbon in March")
    form.locator("textarea[name=summary]").fill("The user's sister Ana moved to Lisbon in March.")
    form.get_by_role("button", name="Correct").click()
    page.wait_for_url(lambda url: url != old_url)
    expect(page.locator(".event-head h1")).to_have_text("Ana moved to Lisbon in March")
    expect(page.locator("ol.versions li strong")).to_have_text("Ana moved to Lisbon in March")
    expect(page.locator("ol.versions")).to_contain_text("Porto")
    expect(page.locator("li.link-supersedes")).to_contain_text("Porto")
    screenshot(page, "memory-event")

    # the correction's receipt is already on the page: wait for the forget's own line, or
    # the next goto can cancel the POST before it reaches the server (a CI flake under load)
    page.get_by_role("button", name="Forget").click()
    expect(page.locator(".receipt")).to_contain_text("forgot")
    page.goto("/memory/events?q=Lisbon")
    expect(page.locator(".event-row")).to_have_count(0)
    page.goto("/memory/events?q=Porto&status=all")
    expect(page.locator(".event-row")).not_to_have_count(0)  # history kept, as superseded

    page.goto("/memory/audit")
    screenshot(page, "memory-audit")
    page.goto("/memory/jobs")
    screenshot(page, "memory-jobs")
    page.goto("/memory/conflicts")
    screenshot(page, "memory-conflicts")


def test_a_stale_profile_edit_is_refused_with_the_newer_value(
    browser: Browser, page: Page, app: App
) -> None:
    other = browser.new_context(base_url=app.url).new_page()
    page.goto("/memory/profile")
    other.goto("/memory/profile")
    mine = page.locator("#field-user_preferred_name")
    mine.locator("input[name=value]").fill("Sam")
    mine.get_by_role("button", name="Save").click()
    expect(page.locator("#field-user_preferred_name .field-saved")).to_be_visible()

    theirs = other.locator("#field-user_preferred_name")
    theirs.locator("input[name=value]").fill("Samuel")
    theirs.get_by_role("button", name="Save").click()
    refused = other.locator("#field-user_preferred_name .conflict-box")
    expect(refused).to_be_visible()
    expect(refused.locator(".stored-value")).to_have_text("Sam")
    expect(refused.locator(".typed-value")).to_have_text("Samuel")
    screenshot(other, "memory-profile-stale")
    other.context.close()
    page.goto("/memory/profile")
    expect(page.locator("#field-user_preferred_name input[name=value]")).to_have_value("Sam")
    screenshot(page, "memory-profile")


def test_the_raw_view_and_the_chinese_memory_page(page: Page, app: App) -> None:
    page.goto("/memory/raw?kind=event&id=evt_nothing")
    expect(page.locator("main")).to_contain_text("evt_nothing")
    page.goto("/memory/?lang=zh")
    expect(page.locator("html")).to_have_attribute("lang", "zh-CN")
    expect(page.locator(".subnav")).to_contain_text("常驻画像")
    expect(page.locator(".subnav")).to_contain_text("短期记忆")
    expect(page.locator(".subnav")).to_contain_text("长期记忆")
    screenshot(page, "memory-status-zh")


@pytest.fixture(scope="module")
def hostile_app(tmp_path_factory: pytest.TempPathFactory) -> App:
    """A server whose memory already holds an event made of hostile text (ingested and
    derived by the CLI before the server starts, in the space the server shows)."""
    root = tmp_path_factory.mktemp("hostile")
    space = f"sg:project:{(root / 'cwd').resolve()}"
    (root / "cwd").mkdir(parents=True)
    turns = [
        {"thread": "t1", "role": "user", "content": HOSTILE, "at": "2026-03-01T10:00:00+00:00"},
        {
            "thread": "t1",
            "role": "assistant",
            "content": "Noted.",
            "at": "2026-03-01T10:00:05+00:00",
        },
    ]
    source = root / "hostile.json"
    source.write_text(json.dumps(turns), encoding="utf-8")
    for args in (("ingest", str(source), "--space", space, "--block-turns", "1"), ("process",)):
        done = run(root, *args)
        assert done.returncode == 0, done.stderr
    app = start(root, "--port", "0")
    yield app
    assert stop(app) == 0


def test_hostile_event_text_renders_inert(hostile_app: App, browser: Browser) -> None:
    page = browser.new_context(base_url=hostile_app.url).new_page()
    for url in ("/memory/events", "/memory/blocks"):
        page.goto(url)
        expect(page.locator("main")).to_contain_text("<script>window.__pwned=1</script>")
        assert page.locator("main img[src=x]").count() == 0
        assert page.evaluate("typeof window.__pwned") == "undefined"
    page.goto("/memory/events")
    page.locator(".event-row a.event-title").first.click()
    expect(page.locator(".event-head h1")).to_contain_text("<script>")
    assert page.evaluate("typeof window.__pwned") == "undefined"
    page.context.close()
