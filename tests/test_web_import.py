"""The import wizard's routes: the prompt and the form, preview → the job page (polled while
the worker reads and analyses), per-item choices, commit, the batches page with undo, the
export download; bad input refused with one line and nothing written."""

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import httpx
from import_data import KNOWN, NEW_FACT, SECOND, UNSURE, export_text
from overview_data import quiet
from webapp import memory_of, post, web_app

from stratagate_plugin.core.importer.formats.prompts import EXPORT_PROMPT_EN, EXPORT_PROMPT_ZH
from stratagate_plugin.core.llm.base import ModelError
from stratagate_plugin.harness.runtime import Host

FOUR_MB = 4 * 1024 * 1024


async def preview(client: httpx.AsyncClient, text: str, fmt: str = "auto") -> httpx.Response:
    return await post(client, "/memory/import", data={"text": text, "format": fmt})


def job_id_of(answer: httpx.Response) -> str:
    assert answer.status_code == 303, answer.text
    found = re.match(r"/memory/import/(imp_\w+)\?space=", answer.headers["location"])
    assert found, answer.headers["location"]
    return found.group(1)


async def analysed(host: Host, client: httpx.AsyncClient, text: str) -> Any:
    """Preview ``text`` through the page, let the worker analyse it: the job."""
    job_id = job_id_of(await preview(client, text))
    await quiet(host)
    return await memory_of(host).imports.job(job_id)


async def known_space(host: Host, client: httpx.AsyncClient) -> tuple[str, list[str]]:
    """The default space holding KNOWN, imported and committed through the pages."""
    job = await analysed(host, client, export_text(KNOWN, source="claude"))
    assert (await post(client, f"/memory/import/{job.id}/commit")).status_code == 303
    batch = (await memory_of(host).imports.batches(job.namespace))[0]
    return job.namespace, batch.event_ids


async def active_titles(host: Host, space: str) -> list[str]:
    exported = await memory_of(host).imports.export_space(space)
    return sorted(candidate["title"] for candidate in exported["candidates"])


async def test_start_page_offers_the_prompt_the_form_and_the_formats(tmp_path: Path) -> None:
    async with web_app(tmp_path) as (_, _host, client):
        page = await client.get("/memory/import")
        assert page.status_code == 200
        assert 'aria-current="page">Import</a>' in page.text
        first_line = EXPORT_PROMPT_EN.splitlines()[0]
        assert first_line in page.text and 'id="export-prompt"' in page.text
        assert "readonly" in page.text and 'data-copy="export-prompt"' in page.text
        assert 'src="/static/memory-import.js"' in page.text
        assert (
            'enctype="multipart/form-data"' in page.text and 'type="file" name="file"' in page.text
        )
        for fmt in ("auto", "v2", "lines", "mem0", "mcp-memory", "letta"):
            assert f'<option value="{fmt}"' in page.text
        assert "export.json" not in page.text  # nothing to export from an empty space yet
        chinese = await client.get("/memory/import?lang=zh")
        assert EXPORT_PROMPT_ZH.splitlines()[0] in chinese.text
        assert first_line not in chinese.text
        assert "导入" in chinese.text and "预览" in chinese.text and "自动识别" in chinese.text


async def test_the_job_page_shows_each_candidate_beside_its_matches(tmp_path: Path) -> None:
    async with web_app(tmp_path) as (_, host, client):
        space, known_ids = await known_space(host, client)
        job = await analysed(host, client, export_text(SECOND))
        assert job.status == "awaiting_confirmation"
        new, duplicate, unsure = job.items
        assert (new.action, duplicate.action) == ("ADD", "IGNORE")
        assert unsure.requires_confirmation and not new.requires_confirmation
        page = await client.get(f"/memory/import/{job.id}?space={space}")
        assert page.status_code == 200
        asked, *applied = item_cards(page.text)  # the unsure item first
        cards = [*applied, asked]
        assert 'id="item-2"' in asked and 'id="item-0"' in applied[0]
        assert (
            NEW_FACT["title"] in cards[0] and "preference" in cards[0] and "2025-04-02" in cards[0]
        )
        assert "Will be applied when you commit" in cards[0] and 'type="radio"' not in cards[0]
        assert f'href="/memory/events/{known_ids[0]}?' in cards[1]
        [twin] = duplicate.matches  # the duplicated event is shown by its title
        assert twin.id == known_ids[0] and f">{twin.title}</a>" in cards[1]
        assert "exact duplicate" in cards[1] and "Will be applied when you commit" in cards[1]
        assert UNSURE["title"] in cards[2] and unsure.reason in cards[2]
        assert f"confidence {unsure.confidence:.2f}" in cards[2]
        assert all(f'href="/memory/events/{m.id}?' in cards[2] for m in unsure.matches)
        assert f"link to “{unsure.matches[0].title}”" in cards[2]
        radios = re.findall(r'name="choice-2" value="(\w+)"( checked)?', cards[2])
        assert [value for value, _ in radios] == ["ADD", "MERGE", "SUPERSEDE", "CONFLICT", "IGNORE"]
        assert [value for value, checked in radios if checked] == ["IGNORE"]
        assert "Needs your choices" in page.text and "3 of 3 memories analysed" in page.text
        assert 'hx-trigger="every' not in page.text  # analysis done: no more polling
        assert (
            f'action="/memory/import/{job.id}/commit?' in page.text and "hx-confirm=" in page.text
        )


def item_cards(html: str) -> list[str]:
    return re.findall(
        r'<li class="import-item.*?</li>\s*(?=<li class="import-item|</ol>)', html, re.S
    )


async def test_commit_writes_the_batch_and_undo_takes_it_back(tmp_path: Path) -> None:
    async with web_app(tmp_path) as (_, host, client):
        space, _ = await known_space(host, client)
        job = await analysed(host, client, export_text(SECOND))
        answer = await post(client, f"/memory/import/{job.id}/commit", data={"choice-2": "ADD"})
        assert (
            answer.status_code == 303 and f"/memory/import/{job.id}?" in answer.headers["location"]
        )
        wanted = sorted([*(c["title"] for c in KNOWN), NEW_FACT["title"], UNSURE["title"]])
        assert await active_titles(host, space) == wanted  # the duplicate was not written twice
        [batch, first] = await memory_of(host).imports.batches(space)
        assert (batch.imported_count, batch.ignored_count) == (2, 1)
        page = await client.get(answer.headers["location"])
        assert f"Committed as batch {batch.id}: 2 memories imported, 1 ignored." in page.text
        assert 'action="/memory/import/' not in page.text.split('id="import-job"')[1]
        listing = await client.get(f"/memory/import/batches?space={space}")
        assert listing.status_code == 200
        assert f'href="/memory/blocks/{batch.id}/view?level=L5' in listing.text
        source = await client.get(f"/memory/blocks/{batch.id}/view?level=L5&space={space}")
        assert source.status_code == 200 and UNSURE["title"] in source.text
        assert f'action="/memory/import/batches/{batch.id}/undo?' in listing.text
        assert "chatgpt" in listing.text and "claude" in listing.text
        assert f'href="/memory/import/{job.id}?' in listing.text and "Committed" in listing.text
        undone = await post(client, f"/memory/import/batches/{batch.id}/undo")
        assert undone.status_code == 303
        assert await active_titles(host, space) == sorted(c["title"] for c in KNOWN)
        notice = await client.get(undone.headers["location"])
        assert f"Batch {batch.id} undone: 2 memories removed, 0 restored." in notice.text
        assert f'action="/memory/import/batches/{batch.id}/undo?' not in notice.text
        assert f'action="/memory/import/batches/{first.id}/undo?' in notice.text
        again = await post(client, f"/memory/import/batches/{batch.id}/undo")
        assert again.status_code == 409 and "already undone" in again.text
        missing = await post(client, "/memory/import/batches/blk_nope/undo")
        assert missing.status_code == 404 and "blk_nope" in missing.text
        assert await active_titles(host, space) == sorted(c["title"] for c in KNOWN)


async def test_take_every_proposal_commits_the_unsure_items_as_proposed(tmp_path: Path) -> None:
    async with web_app(tmp_path) as (_, host, client):
        space = (await quiet(host)).default_space()
        job = await analysed(host, client, "Likes hiking. Has a dog named Rex.\n")
        assert job.recovered and all(i.requires_confirmation for i in job.items)
        page = await client.get(f"/memory/import/{job.id}")
        assert 'name="accept" value="proposed"' in page.text
        fields = {"choice-0": "IGNORE", "choice-1": "IGNORE", "accept": "proposed"}
        answer = await post(client, f"/memory/import/{job.id}/commit", data=fields)
        assert answer.status_code == 303
        [batch] = await memory_of(host).imports.batches(space)
        assert batch.imported_count == 2  # both proposals were ADD
        assert await active_titles(host, space) == ["Has a dog named Rex", "Likes hiking"]


async def test_a_long_import_shows_its_unsure_items_and_pages_the_others(tmp_path: Path) -> None:
    async with web_app(tmp_path) as (_, host, client):
        space, _ = await known_space(host, client)
        listed = "\n".join(f"- Saved memory number {i} about kiln glaze {i * 7}" for i in range(60))
        job = await analysed(host, client, listed)
        assert job.format == "lines" and len(job.items) == 60
        first = item_cards((await client.get(f"/memory/import/{job.id}?space={space}")).text)
        assert len(first) == 50
        page = await client.get(f"/memory/import/{job.id}?space={space}")
        assert "Items needing no choice: 1–50 of 60." in page.text
        assert re.search(rf'href="/memory/import/{job.id}\?space=[^"]+&amp;auto=50"', page.text)
        rest = await client.get(f"/memory/import/{job.id}", params={"space": space, "auto": 50})
        titles = [c.candidate.title for c in job.items[50:]]
        assert len(item_cards(rest.text)) == 10 and all(t in rest.text for t in titles)
        assert "51–60 of 60" in rest.text and "auto=0" in rest.text
        polled = await client.get(
            f"/memory/import/{job.id}/progress?auto=50", headers={"hx-request": "true"}
        )
        assert len(item_cards(polled.text)) == 10
        bad = await client.get(f"/memory/import/{job.id}", params={"auto": "x"})
        assert bad.status_code == 400


class HeldModel:
    """A model that answers only once released, and then fails (recovery falls back to the
    offline reader): while it is held the worker keeps the job in ``extracting``."""

    name = "held"

    def __init__(self) -> None:
        self.asked = asyncio.Event()
        self.release = asyncio.Event()

    async def complete(self, task: Any) -> Any:
        self.asked.set()
        await self.release.wait()
        raise ModelError("the endpoint is down")


async def test_the_page_polls_while_reading_and_commit_waits_for_the_analysis(
    tmp_path: Path,
) -> None:
    async with web_app(tmp_path) as (_, host, client):
        memory = memory_of(host)
        await quiet(host)
        held = HeldModel()
        model, memory.model = memory.model, held
        try:
            broken = '{"candidates": [ {"title": "Green tea", "summary": "Drinks green tea"'
            job_id = job_id_of(await preview(client, broken))
            await asyncio.wait_for(held.asked.wait(), timeout=10)
            fragment = await client.get(f"/memory/import/{job_id}/progress")
            assert fragment.status_code == 200 and fragment.text.lstrip().startswith("<div")
            assert (
                'data-status="extracting"' in fragment.text and "Reading the text" in fragment.text
            )
            assert (
                f'hx-get="/memory/import/{job_id}/progress?auto=0" hx-trigger="every 1s"'
                in fragment.text
            )
            refused = await post(client, f"/memory/import/{job_id}/commit")
            assert refused.status_code == 409 and "still extracting" in refused.text
            assert "Traceback" not in refused.text
            space = (await memory.imports.job(job_id)).namespace
            assert await memory.imports.batches(space) == []
        finally:
            held.release.set()
            await quiet(host)
            memory.model = model
        done = await client.get(f"/memory/import/{job_id}/progress")
        assert 'data-status="awaiting_confirmation"' in done.text and "hx-trigger" not in done.text
        assert "every item needs your confirmation" in done.text
        radios = re.findall(r'name="choice-(\d+)" value="(\w+)"', done.text)
        assert radios and {action for _, action in radios} == {"ADD", "IGNORE"}  # nothing to link
        assert (
            await post(client, f"/memory/import/{job_id}/commit", data={"choice-0": "add"})
        ).status_code == 303
        twice = await post(client, f"/memory/import/{job_id}/commit", data={"choice-0": "ADD"})
        assert twice.status_code == 409 and "already committed" in twice.text


async def test_unknown_ids_and_bad_parameters_are_refused(tmp_path: Path) -> None:
    async with web_app(tmp_path) as (_, host, client):
        memory = memory_of(host)
        for url in ("/memory/import/imp_nope", "/memory/import/imp_nope/progress"):
            missing = await client.get(url)
            assert missing.status_code == 404 and "imp_nope" in missing.text
        assert (await post(client, "/memory/import/imp_nope/commit")).status_code == 404
        bogus = await preview(client, export_text([NEW_FACT]), fmt="bogus")
        assert bogus.status_code == 400 and "format must be one of" in bogus.text
        empty = await preview(client, "   ")
        assert empty.status_code == 400 and "paste the other AI" in empty.text
        too_many = export_text(
            [{"title": f"Fact {n}", "summary": f"Fact {n}."} for n in range(201)]
        )
        refused = await preview(client, too_many)
        assert refused.status_code == 400 and "at most 200" in refused.text
        assert "The import was refused" in refused.text and "Fact 200" in refused.text  # kept
        space = (await quiet(host)).default_space()
        assert await memory.imports.jobs(space) == []
        job = await analysed(host, client, export_text([NEW_FACT, UNSURE]))
        for fields, words in (
            ({"choice-x": "ADD"}, "whole number"),
            ({"choice-0": "DELETE"}, "unknown action"),
            ({"choice-9": "ADD"}, "item 9 is not in import"),
        ):
            answer = await post(client, f"/memory/import/{job.id}/commit", data=fields)
            assert answer.status_code == 400 and words in answer.text, fields
        assert (await memory.imports.job(job.id)).status == "ready"
        assert (await client.get(f"/memory/export.json?space={space}&profile=2")).status_code == 400
        gone = await client.get("/memory/export.json?space=nowhere")
        assert gone.status_code == 404 and "nowhere" in gone.text


async def test_candidate_text_is_shown_as_text(tmp_path: Path) -> None:
    async with web_app(tmp_path) as (_, host, client):
        hostile = {
            "title": "<script>alert(1)</script> launch",
            "summary": 'We launch <img src=x onerror="alert(2)"> on Monday.',
            "tags": ["<b>bold</b>"],
        }
        job = await analysed(host, client, export_text([hostile], source="<i>evil</i>"))
        for url in (f"/memory/import/{job.id}", f"/memory/import/{job.id}/progress"):
            page = await client.get(url)
            assert "&lt;script&gt;alert(1)&lt;/script&gt; launch" in page.text
            assert "&lt;img src=x onerror=&#34;alert(2)&#34;&gt;" in page.text
            assert "<script>alert" not in page.text and "<img src=x" not in page.text
            assert "<b>bold</b>" not in page.text
        listing = await client.get("/memory/import/batches")
        assert "&lt;i&gt;evil&lt;/i&gt;" in listing.text and "<i>evil</i>" not in listing.text


async def test_a_file_is_uploaded_and_binary_or_mixed_input_refused(tmp_path: Path) -> None:
    async with web_app(tmp_path) as (_, host, client):
        memory = memory_of(host)
        space = (await quiet(host)).default_space()

        async def upload(data: bytes, text: str = "") -> httpx.Response:
            files = {"file": ("memory.json", data, "application/json")}
            return await post(client, "/memory/import", data={"text": text}, files=files)

        for data, words in (
            (b"PK\x03\x04\x14\x00\x00\x00\x08\x00rest-of-a-zip", "looks binary"),
            (b"\x89PNG\r\n\x1a\n\x00\x00", "looks binary"),
            (b"caf\xe9 au lait", "not UTF-8 text"),
        ):
            answer = await upload(data)
            assert answer.status_code == 400 and words in answer.text, data
        both = await upload(export_text([NEW_FACT]).encode(), text="- something pasted")
        assert both.status_code == 400 and "not both" in both.text
        assert await memory.imports.jobs(space) == []
        sample = "\ufeff" + export_text([NEW_FACT, UNSURE])
        job_id = job_id_of(await upload(sample.encode("utf-8")))
        await quiet(host)
        job = await memory.imports.job(job_id)
        assert [item.candidate.title for item in job.items] == [NEW_FACT["title"], UNSURE["title"]]


async def test_an_import_up_to_4_mb_is_taken_and_a_larger_one_is_413(tmp_path: Path) -> None:
    padding = " " * (2 * 1024 * 1024)  # over the app's 1 MB limit for other routes
    roomy = export_text([NEW_FACT]) + padding
    big = export_text([{"title": "Big", "summary": "x" * 1000}]) + " " * FOUR_MB
    async with web_app(tmp_path) as (_, host, client):
        files = {"file": ("roomy.json", roomy.encode(), "application/json")}
        taken = await post(client, "/memory/import", files=files)
        assert taken.status_code == 303
        files = {"file": ("big.json", big.encode(), "application/json")}
        uploaded = await post(client, "/memory/import", files=files)
        assert uploaded.status_code == 413 and "larger than 4 MB" in uploaded.text
        assert "The import was refused" in uploaded.text
        pasted = await preview(client, big)
        assert pasted.status_code == 413 and "larger than 4 MB" in pasted.text
        assert len(pasted.text) < FOUR_MB  # the text is not sent back
        huge = await preview(client, big + big)
        assert huge.status_code == 413  # the app's limit for this route, before the view
        other = await post(client, "/memory/settings", data={"x": padding})
        assert other.status_code == 413  # every other route keeps 1 MB
        space = (await quiet(host)).default_space()
        [job] = await memory_of(host).imports.jobs(space)
        assert [item.candidate.title for item in job.items] == [NEW_FACT["title"]]


async def test_a_cross_site_preview_is_refused(tmp_path: Path) -> None:
    async with web_app(tmp_path) as (_, host, client):
        headers = {"sec-fetch-site": "cross-site", "origin": "https://evil.example"}
        data = {"text": export_text([NEW_FACT])}
        answer = await client.post("/memory/import", data=data, headers=headers)
        assert answer.status_code == 403
        space = (await quiet(host)).default_space()
        assert await memory_of(host).imports.jobs(space) == []


async def test_the_export_downloads_the_space_as_v2(tmp_path: Path) -> None:
    async with web_app(tmp_path) as (_, host, client):
        space, _ = await known_space(host, client)
        start = await client.get("/memory/import")
        assert "/memory/export.json?space=" in start.text and "&amp;profile=1" in start.text
        answer = await client.get("/memory/export.json", params={"space": space})
        assert answer.status_code == 200 and answer.headers["content-type"] == "application/json"
        name = re.fullmatch(
            r'attachment; filename="stratagate-export-([A-Za-z0-9_.-]+)-(\d{4}-\d{2}-\d{2})\.json"',
            answer.headers["content-disposition"],
        )
        assert name and name.group(1).startswith("sg-project-")
        document = json.loads(answer.text)
        assert document["schemaVersion"] == "stratagate.external-memory.v2"
        assert name.group(2) == document["exportedAt"][:10]
        assert sorted(c["title"] for c in document["candidates"]) == sorted(
            c["title"] for c in KNOWN
        )
        assert "profile" not in document
        with_profile = await client.get(
            "/memory/export.json", params={"space": space, "profile": "1"}
        )
        assert "profile" in json.loads(with_profile.text)
        again = await analysed(host, client, answer.text)  # importing it back changes nothing
        assert {item.action for item in again.items} == {"IGNORE"}


async def test_the_wizard_in_chinese(tmp_path: Path) -> None:
    async with web_app(tmp_path) as (_, host, client):
        space, _ = await known_space(host, client)
        job = await analysed(host, client, export_text(SECOND))
        page = await client.get(f"/memory/import/{job.id}?lang=zh")
        for words in (
            "需要你选择",
            "来自另一个 AI",
            "这里相似的记忆",
            "提交时应用",
            "提交导入",
            "新增",
            "忽略",
        ):
            assert words in page.text, words
        listing = await client.get(f"/memory/import/batches?space={space}&lang=zh")
        for words in ("已导入的批次", "导入任务", "撤销", "已提交"):
            assert words in listing.text, words
