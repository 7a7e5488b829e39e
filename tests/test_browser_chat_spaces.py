"""A new web conversation picks its memory space (issue 27): the chat page offers the
spaces that hold memory and the default; the chosen one is where the conversation's turns
are recorded and recalled from, a fact told in one space is not recalled in another, the
space of a conversation is fixed once it exists, and an unknown space or a write from
another site changes nothing."""

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from browser import App, http_client, run, screenshot, start, stop
from playwright.sync_api import Page, expect

GARDEN = "sg:project:/srv/garden"  # a space another project already filled
FACT = "My sister Ana moved to Porto in March."
QUESTION = "Where did my sister Ana move?"


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[App]:
    """This module's server: its memory holds a second space (``GARDEN``, ingested by the
    CLI before it starts) beside the default one of its folder."""
    root = tmp_path_factory.mktemp("spaces")
    turns = [
        {"thread": "g1", "role": "user", "content": "I planted tomatoes by the shed."},
        {"thread": "g1", "role": "assistant", "content": "Noted."},
    ]
    for number, turn in enumerate(turns):
        turn["at"] = f"2026-03-01T10:00:0{number}+00:00"
    source = root / "garden.json"
    source.write_text(json.dumps(turns), encoding="utf-8")
    done = run(root, "ingest", str(source), "--space", GARDEN, fixed=True)
    assert done.returncode == 0, done.stderr
    app = start(root, "--port", "0", fixed=True)
    yield app
    assert stop(app) == 0
    assert "Traceback" not in app.stderr(), app.stderr()


def default_space(app: App) -> str:
    return f"sg:project:{app.cwd.resolve()}"


def stored(app: App, sql: str, *args: str) -> list[tuple[str, ...]]:
    """Rows as the database file holds them (a connection of the test's own)."""
    with sqlite3.connect(app.home / "memory.db") as db:
        return [tuple(row) for row in db.execute(sql, args)]


def spaces_holding(app: App, text: str) -> set[str]:
    rows = stored(app, "SELECT namespace FROM messages WHERE content LIKE ?", f"%{text}%")
    return {row[0] for row in rows}


def start_in(page: Page, space_label: str | None, text: str) -> str:
    """From the chat page: choose a space (None: leave the default), send ``text`` as the
    first message; the new conversation's agent answer."""
    page.goto("/chat")
    if space_label is not None:
        page.locator("select[name=space]").select_option(label=space_label)
    box = page.get_by_role("textbox")
    box.fill(text)
    box.press("Enter")
    page.wait_for_url("**/chat/*")
    answer = page.locator("#turns .message.agent .text").last
    expect(answer).not_to_be_empty()
    return answer.inner_text()


def test_a_fact_told_in_one_space_is_not_recalled_in_another(page: Page, app: App) -> None:
    page.goto("/chat")
    choice = page.locator("select[name=space]")
    expect(choice.locator("option")).to_have_count(2)
    expect(choice.locator("option:checked")).to_contain_text("default")
    expect(choice.locator("option", has_text="garden")).to_have_attribute("value", GARDEN)
    screenshot(page, "chat-new")

    start_in(page, "garden", FACT)
    expect(page.locator(".conversation .memory-space")).to_contain_text(GARDEN)
    expect(page.locator(".conversation select[name=space]")).to_have_count(0)  # fixed now

    elsewhere = start_in(page, None, QUESTION)
    expect(page.locator(".conversation .memory-space")).to_contain_text(default_space(app))
    assert "Porto" not in elsewhere

    in_garden = start_in(page, "garden", QUESTION)
    assert "Porto" in in_garden

    assert spaces_holding(app, FACT) == {GARDEN}
    assert spaces_holding(app, QUESTION) == {GARDEN, default_space(app)}
    per_space = dict(stored(app, "SELECT namespace, count(*) FROM messages GROUP BY namespace"))
    assert set(per_space) == {GARDEN, default_space(app)}
    assert per_space[default_space(app)] >= 2 and per_space[GARDEN] >= 6


def session_count(app: App) -> int:
    return len(list((app.home / "sessions").glob("*.jsonl")))


def space_names(app: App) -> list[tuple[str, ...]]:
    return stored(app, "SELECT namespace FROM namespaces ORDER BY namespace")


@pytest.mark.parametrize("path", ["/chat/start", "/chat/new"])
def test_an_unknown_space_is_a_404_and_creates_nothing(app: App, path: str) -> None:
    before = (session_count(app), space_names(app))
    with http_client(app) as client:
        form = {"text": FACT, "space": "sg:project:/nosuch"}
        answer = client.post(path, data=form, headers={"accept": "application/json"})
    assert answer.status_code == 404
    assert answer.json()["error"].startswith("no memory space called 'sg:project:/nosuch'")
    assert (session_count(app), space_names(app)) == before
    assert spaces_holding(app, "nosuch") == set()


def test_a_cross_site_post_cannot_start_a_conversation_in_a_space(app: App) -> None:
    before = (session_count(app), space_names(app))
    with http_client(app) as client:
        refused = client.post(
            "/chat/start",
            data={"text": "I was forged", "space": GARDEN},
            headers={"origin": "http://evil.example", "sec-fetch-site": "cross-site"},
        )
    assert refused.status_code == 403
    assert (session_count(app), space_names(app)) == before
    assert spaces_holding(app, "I was forged") == set()


def test_the_space_of_a_conversation_stays_what_it_was_started_with(app: App) -> None:
    with http_client(app) as client:
        started = client.post("/chat/start", data={"text": "I keep bees.", "space": GARDEN})
        assert started.status_code == 303
        conversation = started.headers["location"]
        later = {"text": "The bees swarmed today.", "space": default_space(app)}
        assert client.post(f"{conversation}/messages", data=later).status_code == 303
        page = client.get(conversation).text
    assert 'name="space"' not in page.split('class="conversation', 1)[1]
    assert spaces_holding(app, "bees") == {GARDEN}

    session_id = conversation.rsplit("/", 1)[-1]
    header = json.loads(app.session_file(session_id).read_text().splitlines()[0])
    assert header["memory_space"] == GARDEN
    root = app.home.parent  # `stratagate chat --session` goes on in the same space
    done = run(root, "chat", "--session", session_id, "--message", "The hive is by the shed.")
    assert done.returncode == 0, done.stderr
    assert spaces_holding(app, "The hive is by the shed") == {GARDEN}


def test_each_space_offered_is_one_that_exists(app: App, tmp_path: Path) -> None:
    with http_client(app) as client:
        html = client.get("/chat").text
    offered = [part.split('"', 1)[0] for part in html.split('<option value="')[1:]]
    existing = {row[0] for row in space_names(app)}
    assert offered[0] == ""  # the default: this folder's space, made with its first turn
    assert set(offered[1:]) <= existing and GARDEN in offered
