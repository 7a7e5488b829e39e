"""The import wizard in headless Chromium, as a person moves memory from another AI: copy
the prompt, paste its answer, watch the analysis, choose for the unsure item, commit, see
the events, undo the batch and see them gone; the export downloads, and uploaded back it is
all Ignore. Screenshots for the README: the start page, the job page, the batches page."""

import json
from pathlib import Path

from browser import App, screenshot
from import_data import KNOWN, NEW_FACT, SECOND, UNSURE, export_text
from playwright.sync_api import Page, expect


def accept_dialogs(page: Page) -> None:
    """``hx-confirm`` asks with the browser's confirm(): the person clicks OK."""
    page.on("dialog", lambda dialog: dialog.accept())


def paste_and_preview(page: Page, text: str) -> None:
    page.goto("/memory/import")
    page.locator("#import-text").fill(text)
    page.get_by_role("button", name="Preview").click()
    page.wait_for_url("**/memory/import/imp_*")


def commit(page: Page) -> None:
    page.get_by_role("button", name="Commit the import").click()
    expect(page.locator(".notice.committed")).to_contain_text("Committed as batch")


def test_paste_preview_choose_commit_and_undo(page: Page, app: App) -> None:
    accept_dialogs(page)
    paste_and_preview(page, export_text(KNOWN, source="claude"))
    expect(page.locator("#import-job")).to_have_attribute("data-status", "ready")
    commit(page)

    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    page.goto("/memory/import")
    copy = page.locator("button[data-copy]")
    expect(copy).to_have_text("Copy the prompt")
    copy.click()
    expect(copy).to_have_text("Copied")
    prompt = page.locator("#export-prompt").input_value()
    assert page.evaluate("navigator.clipboard.readText()") == prompt
    assert prompt.startswith("Please export everything you remember about me")
    page.locator("#import-text").fill(export_text(SECOND))
    screenshot(page, "memory-import")
    page.get_by_role("button", name="Preview").click()
    page.wait_for_url("**/memory/import/imp_*")

    job = page.locator("#import-job")
    expect(job).to_have_attribute("data-status", "awaiting_confirmation")  # polled, no reload
    expect(job).to_contain_text("3 of 3 memories analysed")
    new, duplicate, unsure = (page.locator(f"#item-{n}") for n in range(3))
    expect(new).to_contain_text(NEW_FACT["title"])
    expect(new.locator(".auto")).to_have_text("Will be applied when you commit")
    expect(duplicate).to_contain_text("exact duplicate")
    expect(duplicate.locator(".matches a")).to_have_count(1)
    expect(unsure.locator("input[type=radio]")).to_have_count(5)
    expect(unsure.get_by_label("Ignore")).to_be_checked()
    unsure.get_by_label("Add").check()
    screenshot(page, "memory-import-job")
    commit(page)
    expect(page.locator(".notice.committed")).to_contain_text("2 memories imported, 1 ignored")

    page.get_by_role("link", name="See the events").click()
    events = page.locator("main")
    expect(events).to_contain_text(NEW_FACT["title"])
    expect(events).to_contain_text(UNSURE["title"])
    expect(events.get_by_text(KNOWN[0]["title"])).to_have_count(1)

    page.goto("/memory/import/batches")
    batches = page.locator("table.import-batches tbody tr")
    expect(batches).to_have_count(2)
    expect(batches.first).to_contain_text("chatgpt")
    screenshot(page, "memory-import-batches")
    batches.first.get_by_role("button", name="Undo").click()
    expect(page.locator(".notice.undone")).to_contain_text("2 memories removed")
    expect(batches.first.get_by_role("button", name="Undo")).to_have_count(0)

    page.goto("/memory/events")
    expect(page.locator("main")).to_contain_text(KNOWN[0]["title"])
    expect(page.locator("main")).not_to_contain_text(NEW_FACT["title"])
    expect(page.locator("main")).not_to_contain_text(UNSURE["title"])


def test_the_export_downloads_a_v2_file(page: Page, app: App) -> None:
    page.goto("/memory/import")
    with page.expect_download() as download:
        page.get_by_role("link", name="Download the events").click()
    file = download.value
    assert file.suggested_filename.startswith("stratagate-export-")
    assert file.suggested_filename.endswith(".json")
    document = json.loads(Path(file.path()).read_text(encoding="utf-8"))
    assert document["schemaVersion"] == "stratagate.external-memory.v2"
    assert {c["title"] for c in document["candidates"]} == {c["title"] for c in KNOWN}
    page.goto("/memory/import")  # the file uploaded back: every memory is already here
    page.locator("input[type=file]").set_input_files(file.path())
    page.get_by_role("button", name="Preview").click()
    page.wait_for_url("**/memory/import/imp_*")
    expect(page.locator("#import-job")).to_have_attribute("data-status", "ready")
    expect(page.locator(".import-item")).to_have_count(len(KNOWN))
    expect(page.locator(".import-item[data-action=IGNORE]")).to_have_count(len(KNOWN))
