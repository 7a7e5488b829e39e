"""The graph page in headless Chromium: people told about in the web chat become nodes,
the Cytoscape canvas draws them (no CSP violation: the harness fails on any), and a node
from the list opens in the side panel with its source events; screenshotted for the README."""

from browser import App, screenshot
from playwright.sync_api import Page, expect
from test_browser_memory import send, set_block_turns, tell, wait_for

FACTS = (
    "Caroline: I live in Paris and I love painting landscapes.",
    "Melanie: I work at Google as an engineer.",
)


def test_facts_told_in_chat_become_a_drawn_graph_whose_nodes_open(page: Page, app: App) -> None:
    set_block_turns(page, 1)
    conversation = tell(page, FACTS[0])
    page.goto(conversation)
    send(page, FACTS[1])

    links = page.locator("ul.graph-nodes a.node-link")
    wait_for(page, "/memory/graph", lambda: links.count() >= 4, timeout_s=60)
    expect(page.locator("#graph[data-ready='1']")).to_have_count(1)
    assert page.locator("#graph canvas").count() > 0

    page.locator("ul.graph-nodes a.node-link", has_text="Caroline").click()
    panel = page.locator("#node-panel")
    expect(panel.locator("h1.node-name")).to_contain_text("Caroline")
    expect(panel).to_contain_text("lives_in")
    source = panel.locator("a.source-event").first
    expect(source).to_be_visible()
    screenshot(page, "memory-graph")

    source.click()
    page.wait_for_url("**/memory/events/**")
    expect(page.locator(".event-head h1")).to_be_visible()
