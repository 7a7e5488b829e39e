"""The import wizard says what a commit will ignore before it commits (issue 23): unsure
items are listed first on the job page, the page and the commit's confirmation give the
count of items to be ignored, and the CLI's preview and commit print it too."""

import json
import re
from pathlib import Path

import pytest
from import_data import KNOWN, NEW_FACT, UNSURE, export_text
from test_web_import import analysed, item_cards, known_space
from webapp import memory_of, post, web_app

from stratagate_plugin.cli.main import main

# an unsure item after two that need no choice, then a duplicate (a sure IGNORE)
THIRD = [NEW_FACT, {**NEW_FACT, "title": "Walks the dog at six"}, UNSURE, KNOWN[0]]


async def test_unsure_items_come_first_and_the_page_says_how_many_are_ignored(
    tmp_path: Path,
) -> None:
    async with web_app(tmp_path) as (_, host, client):
        space, _ = await known_space(host, client)
        job = await analysed(host, client, export_text(THIRD))
        unsure = [item.index for item in job.items if item.requires_confirmation]
        sure = [item.index for item in job.items if not item.requires_confirmation]
        assert unsure == [2] and sure == [0, 1, 3]  # the premise: one unsure, in the middle
        page = await client.get(f"/memory/import/{job.id}?space={space}")
        shown = [int(re.search(r'id="item-(\d+)"', card)[1]) for card in item_cards(page.text)]
        assert shown == [*unsure, *sure]
        plan = await memory_of(host).imports.commit_plan(job.id)
        assert (plan.total, plan.written, plan.ignored, plan.unsure_ignored) == (4, 2, 2, 1)
        assert "Committing now writes 2 and ignores 2 of 4 items (1 of them unsure" in page.text
        assert "Taking every proposal writes 3 and ignores 1." in page.text
        assert (
            'hx-confirm="Write these memories now? Unless you chose otherwise on this page, '
            "2 of 4 items will be ignored." in page.text
        )
        chinese = await client.get(f"/memory/import/{job.id}?space={space}&lang=zh")
        assert "4 条中将忽略 2 条" in chinese.text
        committed = await post(client, f"/memory/import/{job.id}/commit")
        assert committed.status_code == 303
        [batch, _] = await memory_of(host).imports.batches(space)
        assert (batch.imported_count, batch.ignored_count) == (plan.written, plan.ignored)


async def test_the_plan_follows_the_choices(tmp_path: Path) -> None:
    async with web_app(tmp_path) as (_, host, client):
        await known_space(host, client)
        job = await analysed(host, client, export_text(THIRD))
        memory = memory_of(host)
        chosen = await memory.imports.commit_plan(job.id, {2: "ADD"})
        assert (chosen.written, chosen.ignored, chosen.unsure_ignored) == (3, 1, 0)
        overruled = await memory.imports.commit_plan(job.id, {0: "IGNORE"})
        assert (overruled.written, overruled.ignored, overruled.unsure_ignored) == (1, 3, 1)


def test_the_cli_says_how_many_are_ignored_before_it_commits(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    db, first, second = tmp_path / "m.db", tmp_path / "known.json", tmp_path / "third.json"
    first.write_text(export_text(KNOWN), encoding="utf-8")
    second.write_text(export_text(THIRD), encoding="utf-8")
    base = ["--db", str(db), "--space", "s"]
    assert main(["import", str(first), "--commit", *base]) == 0
    capsys.readouterr()
    assert main(["import", str(second), *base]) == 0
    out = capsys.readouterr().out
    assert "commit now would write 2 and ignore 2 of 4 items (1 unsure items left as IGNORE)" in out
    job = re.search(r"import (imp_\w+)", out)
    assert job is not None
    choices = tmp_path / "choices.json"
    choices.write_text(json.dumps({"2": "ADD"}), encoding="utf-8")
    argv = ["import", "--commit", "--job", job[1], "--choices", str(choices), *base]
    assert main(argv) == 0
    said, done = capsys.readouterr().out.splitlines()
    assert said == "committing: write 3 and ignore 1 of 4 items"
    assert "3 events written, 1 ignored" in done


async def test_a_merge_shows_the_text_it_writes_keeping_both_sides(tmp_path: Path) -> None:
    restated = {"title": "Studio hours", "summary": "The pottery studio opens on Saturdays."}
    async with web_app(tmp_path) as (_, host, client):
        space, _ = await known_space(host, client)
        job = await analysed(host, client, export_text([{**restated, "category": "project"}]))
        [item] = job.items
        assert item.action == "MERGE" and item.merged_summary is not None
        assert "10am" in item.merged_summary  # the local detail the import lacks
        page = await client.get(f"/memory/import/{job.id}?space={space}")
        assert "A merge writes:" in page.text and "10am" in page.text.split("A merge writes:")[1]
