"""Purging a text in headless Chromium, as a person who pasted something private would:
the raw-data page's "Purge a text" shows the plan (ids, times, the words as ``[…]``), the
confirm button erases them from the conversation, memory and the session file, and what was
said beside them stays (issue 25)."""

from browser import App, screenshot, send
from playwright.sync_api import Page, expect

PRIVATE = "4471-KESTREL"
SAID = f"My locker code at the gym is {PRIVATE}, and I hate cilantro in my tacos."
BESIDE = "My sister Ana moved to Porto in March."


def test_a_pasted_text_is_purged_from_the_raw_data_page(page: Page, app: App) -> None:
    page.goto("/chat")
    page.get_by_role("button", name="New conversation").click()
    page.wait_for_url("**/chat/*")
    conversation = page.url
    send(page, SAID)
    send(page, BESIDE)
    session = app.session_file(conversation.rsplit("/", 1)[-1])
    assert PRIVATE.encode() in session.read_bytes()

    page.goto("/memory/raw")
    page.locator(".purge-form input[name=text]").fill(PRIVATE)
    page.get_by_role("button", name="Show what would be erased").click()
    plan = page.locator(".purge-plan")
    expect(plan).to_contain_text("Purge: what will be erased")
    expect(plan).to_contain_text("[…]")
    expect(plan.locator(".purge-items li").first).to_contain_text("msg_")
    assert PRIVATE not in page.content()
    screenshot(page, "memory-purge-plan")

    page.get_by_role("button", name="Purge for good").click()
    expect(page.locator(".purge-plan h1")).to_have_text("Purged")
    expect(page.locator(".receipt")).to_contain_text("act_")
    assert PRIVATE not in page.content()

    page.goto(conversation)
    expect(page.locator("#turns")).to_contain_text("[purged]")
    expect(page.locator("#turns")).to_contain_text("I hate cilantro in my tacos.")
    expect(page.locator("#turns")).to_contain_text(BESIDE)
    assert PRIVATE not in page.content()
    assert PRIVATE.encode() not in session.read_bytes()

    page.goto("/memory/raw")
    page.locator(".purge-form input[name=text]").fill(PRIVATE)
    page.get_by_role("button", name="Show what would be erased").click()
    expect(page.locator(".purge-plan")).to_contain_text("nothing to purge")
