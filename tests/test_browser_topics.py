"""The topics page in headless Chromium: facts told in the web chat become long-term events,
the background pass files them into chapters, a chapter opens in place to its ``N.0``
overview and sections, and an event is one click away; screenshotted for the README."""

from browser import App, screenshot
from playwright.sync_api import Page, expect
from test_browser_memory import send, set_block_turns, tell, wait_for

FACTS = (
    "My sister Ana moved to Porto in March.",
    "Ana started a new job at a bakery in Porto last week.",
    "I decided to learn the guitar with my friend Tom this summer.",
)


def all_filed(page: Page) -> bool:
    """Every fact's event is in a ready chapter and none waits outside one: the book has
    settled (a screenshot taken while the pass still runs would differ run to run)."""
    counts = page.locator("details.chapter.status-ready > summary > span.muted")
    filed = sum(int(text.split()[0]) for text in counts.all_inner_texts())
    return filed == len(FACTS) and page.locator(".topic-entry.fallback").count() == 0


def test_facts_told_in_chat_become_chapters_of_the_topic_book(page: Page, app: App) -> None:
    set_block_turns(page, 1)
    conversation = tell(page, FACTS[0])
    page.goto(conversation)
    for fact in FACTS[1:]:
        send(page, fact)

    chapters = page.locator("details.chapter.status-ready")
    wait_for(page, "/memory/topics", lambda: all_filed(page), timeout_s=60)
    expect(page.locator("pre.directory")).to_contain_text("[StrataGate memory directory]")
    expect(page.locator(".topics-page")).to_contain_text("estimated tokens of 400")

    chapter = chapters.first
    chapter.locator("summary").click()
    overview = chapter.locator(".topic-section.overview")
    expect(overview).to_contain_text("Overview")
    expect(overview.locator(".number")).to_have_text("1.0")
    expect(chapter.locator(".topic-section").nth(1).locator(".number")).to_have_text("1.1")
    first_event = chapter.locator(".section-events a.topic-event").first
    title = first_event.inner_text()
    screenshot(page, "memory-topics")

    first_event.click()
    page.wait_for_url("**/memory/events/**")
    expect(page.locator(".event-head h1")).to_have_text(title)
