"""The graph page in headless Chromium: people told about in the web chat become nodes,
the Cytoscape canvas draws them (no CSP violation: the harness fails on any), and a node
from the list opens in the side panel with the events behind each fact and edge; the panel
reads at 1280 px and on a 390 px phone (no header or date broken one character a line).
Screenshotted for the README."""

from browser import App, screenshot
from playwright.sync_api import Locator, Page, expect
from test_browser_memory import send, set_block_turns, tell, wait_for

FACTS = (
    "Caroline: I live in Paris and I love painting landscapes.",
    "Melanie: I work at Google as an engineer.",
)
PHONE = {"width": 390, "height": 844}


def lines_of(element: Locator) -> float:
    """How many lines the element's text takes: its height over its line height."""
    return element.evaluate(
        """(e) => {
            const style = getComputedStyle(e);
            const line = parseFloat(style.lineHeight) || 1.2 * parseFloat(style.fontSize);
            return e.getBoundingClientRect().height / line;
        }"""
    )


def visible(locator: Locator) -> list[Locator]:
    return [item for item in locator.all() if item.is_visible()]


def assert_readable(panel: Locator) -> None:
    """The Confidence label (a column header, or each stacked row's label) and every date
    each on one line, and the sources of facts and edges shown as links."""
    expect(panel.locator("h1.node-name")).to_contain_text("Caroline")
    expect(panel).to_contain_text("lives_in")
    labels = visible(panel.locator("th, .cell-label").filter(has_text="Confidence"))
    assert labels
    for label in labels:
        assert lines_of(label) < 1.5, "the Confidence label wraps"
    dates = visible(panel.locator("time.date"))
    assert dates
    for date in dates:
        assert lines_of(date) < 1.5, date.inner_text()
    for kind in ("fact-source", "edge-source"):
        link = panel.locator(f"a.{kind}").first
        expect(link).to_be_visible()
        assert "/memory/events/evt_" in (link.get_attribute("href") or "")
    assert panel.evaluate("(e) => e.scrollWidth <= e.clientWidth + 1")  # nothing sticks out


def open_caroline(page: Page) -> Locator:
    page.locator("ul.graph-nodes a.node-link", has_text="Caroline").click()
    panel = page.locator("#node-panel")
    expect(panel.locator("h1.node-name")).to_contain_text("Caroline")
    return panel


def test_facts_told_in_chat_become_a_drawn_graph_whose_nodes_open(page: Page, app: App) -> None:
    set_block_turns(page, 1)
    conversation = tell(page, FACTS[0])
    page.goto(conversation)
    send(page, FACTS[1])

    links = page.locator("ul.graph-nodes a.node-link")
    wait_for(page, "/memory/graph", lambda: links.count() >= 4, timeout_s=60)
    expect(page.locator("#graph[data-ready='1']")).to_have_count(1)
    assert page.locator("#graph canvas").count() > 0

    panel = open_caroline(page)
    assert_readable(panel)
    source = panel.locator("ul.graph-sources a.source-event").first
    expect(source).to_be_visible()
    screenshot(page, "memory-graph")
    graph_url = page.url

    source.click()
    page.wait_for_url("**/memory/events/**")
    expect(page.locator(".event-head h1")).to_be_visible()

    page.goto(graph_url)  # the node's own page: the full-width table
    node_url = page.locator("ul.graph-nodes a.node-link", has_text="Caroline").get_attribute("href")
    page.goto(node_url or "")
    detail = page.locator("article.graph-node-detail")
    expect(detail.locator("table.graph-facts thead")).to_be_visible()
    assert_readable(detail)

    page.set_viewport_size(PHONE)
    page.goto(graph_url)
    assert_readable(open_caroline(page))
    screenshot(page, "memory-graph-phone")
