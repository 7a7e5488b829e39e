"""Screenshots that do not change between runs (issue 27): the browser tests' server runs
with a fixed clock and fixed ids (``tests/fixed_world.py``), two such servers doing the
same things render the same pages, and a screenshot of a server without them fails."""

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from browser import App, http_client, screenshot, start, stop
from fixed_world import START, SteppingClock, fix_the_world, unfix_the_world
from playwright.sync_api import Browser

from stratagate_plugin.core import clock, ids
from stratagate_plugin.harness import clock as harness_clock
from stratagate_plugin.harness.sessions import new_session_id

FACT = "My sister Ana moved to Porto in March."


@pytest.fixture
def fixed_here() -> Iterator[None]:
    """The seams on in this process for one test, and off again after it."""
    fix_the_world()
    try:
        yield
    finally:
        unfix_the_world()


def made_in_a_fixed_world() -> list[str]:
    fix_the_world()
    return [ids.new_id("evt"), ids.new_id("blk"), ids.new_id("evt"), new_session_id()]


def test_the_seams_repeat_ids_and_times(fixed_here: None) -> None:
    first = made_in_a_fixed_world()
    again = made_in_a_fixed_world()
    assert first == again
    assert len(set(first)) == 4
    assert first[0] < first[2], "ids of one kind still sort in the order they were made"
    assert re.fullmatch(r"evt_[0-9a-f]{28}", first[0])
    assert clock.utc_now() < clock.utc_now()  # moving, as the real clock does
    assert abs(clock.utc_now() - START).total_seconds() < 1


def test_two_commands_on_one_database_never_share_an_id(fixed_here: None) -> None:
    """``ingest`` before ``serve`` on one file: each its own ids, or rows would collide."""
    fix_the_world("ingest")
    ingested = [ids.new_id("msg") for _ in range(3)]
    fix_the_world("serve")
    served = [ids.new_id("msg") for _ in range(3)]
    assert not set(ingested) & set(served)


def test_without_the_seams_ids_and_times_are_the_real_ones() -> None:
    assert not clock.clock_is_fixed() and not ids.ids_are_fixed()
    assert harness_clock.utc_now().year >= 2026 and harness_clock.utc_now() != START
    assert ids.new_id("evt") != ids.new_id("evt")
    assert clock.utc_now().year >= 2026 and clock.utc_now() != START
    assert re.fullmatch(r"\d{8}-\d{6}-[0-9a-f]{6}", new_session_id())


def test_the_stepping_clock_moves_a_millisecond_a_reading() -> None:
    tick = SteppingClock()
    assert [(tick() - START).total_seconds() for _ in range(3)] == [0.0, 0.001, 0.002]


def first_conversation(app: App) -> str:
    """A first message from the chat page's box, and the conversation page it opens, with
    the server's folder spelt the same way whichever folder it is."""
    with http_client(app, follow_redirects=True) as client:
        page = client.post("/chat/start", data={"text": FACT}, headers={"origin": app.url})
        assert page.status_code == 200, page.text
        html = page.text
    for folder in sorted({str(app.home.parent), str(app.home.parent.resolve())}, key=len)[::-1]:
        html = html.replace(folder, "ROOT")
    return str(page.url).rsplit("/", 1)[-1] + "\n" + re.sub(r":\d{4,5}\b", ":PORT", html)


def test_two_fixed_servers_render_the_same_conversation(tmp_path: Path) -> None:
    pages = []
    for name in ("one", "two"):
        app = start(tmp_path / name, "--port", "0", fixed=True)
        try:
            assert app.fixed
            pages.append(first_conversation(app))
        finally:
            assert stop(app) == 0
    assert FACT in pages[0]
    assert pages[0] == pages[1]


def test_a_screenshot_of_a_server_without_the_seams_fails(
    browser: Browser, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SCREENSHOTS_DIR", str(tmp_path / "shots"))
    app = start(tmp_path / "plain", "--port", "0")
    try:
        assert not app.fixed
        page = browser.new_context(base_url=app.url).new_page()
        page.goto("/chat")
        with pytest.raises(pytest.fail.Exception, match="without the fixed clock and ids"):
            screenshot(page, "unfixed")
        page.context.close()
    finally:
        assert stop(app) == 0
    assert not (tmp_path / "shots").exists()
