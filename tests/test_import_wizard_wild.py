"""The import wizard's rough edges (issue 27): items in the file's order within each
section, a source name for a pasted list, "will be applied" before the commit, the unsure
item's wording, and one limit that the page shows and the engine enforces."""

import re
from pathlib import Path

from import_data import SECOND, export_text
from overview_data import quiet
from test_web_import import analysed, item_cards, job_id_of, known_space, preview
from webapp import memory_of, post, web_app

from stratagate_plugin.core.importer.external_format import MAX_CANDIDATES

# out of §11.1's category order on purpose: a preference, a career fact, an instruction
LISTED = (
    "- Prefers short answers\n"
    "- Works as a nurse in Leeds\n"
    "- Always answer in British English\n"
    "- Has a cat named Miso\n"
)


def shown_order(html: str) -> list[int]:
    return [int(re.search(r'id="item-(\d+)"', card)[1]) for card in item_cards(html)]  # type: ignore[index]


async def test_a_pasted_list_is_shown_in_its_own_order(tmp_path: Path) -> None:
    async with web_app(tmp_path) as (_, host, client):
        job = await analysed(host, client, LISTED)
        assert [item.candidate.summary for item in job.items] == [
            "Prefers short answers",
            "Works as a nurse in Leeds",
            "Always answer in British English",
            "Has a cat named Miso",
        ]
        page = await client.get(f"/memory/import/{job.id}?space={job.namespace}")
        assert shown_order(page.text) == [0, 1, 2, 3]


async def test_a_pasted_list_can_be_given_a_source_name(tmp_path: Path) -> None:
    async with web_app(tmp_path) as (_, host, client):
        start = await client.get("/memory/import")
        assert 'name="source"' in start.text
        answer = await post(
            client, "/memory/import", data={"text": LISTED, "format": "auto", "source": " ChatGPT "}
        )
        job_id = job_id_of(answer)
        await quiet(host)
        job = await memory_of(host).imports.job(job_id)
        assert job.source_system == "ChatGPT"
        page = await client.get(f"/memory/import/{job_id}?space={job.namespace}")
        assert "Import from ChatGPT" in page.text
        unnamed = await analysed(host, client, "- Likes rowing\n")
        assert unnamed.source_system == "unknown"
        too_long = await post(client, "/memory/import", data={"text": LISTED, "source": "x" * 81})
        assert too_long.status_code == 400 and "longer than 80 characters" in too_long.text
        assert LISTED.splitlines()[0] in too_long.text  # the text is kept


async def test_a_recovered_text_keeps_the_source_the_user_named(tmp_path: Path) -> None:
    async with web_app(tmp_path) as (_, host, client):
        prose = "Likes hiking. Has a dog named Rex.\n"
        answer = await post(client, "/memory/import", data={"text": prose, "source": "Gemini"})
        job_id = job_id_of(answer)
        await quiet(host)
        job = await memory_of(host).imports.job(job_id)
        assert job.recovered and job.source_system == "Gemini"


async def test_before_the_commit_items_will_be_applied_and_unsure_ones_are_suggestions(
    tmp_path: Path,
) -> None:
    async with web_app(tmp_path) as (_, host, client):
        space, _ = await known_space(host, client)
        job = await analysed(host, client, export_text(SECOND))
        page = await client.get(f"/memory/import/{job.id}?space={space}")
        assert "Applied automatically" not in page.text
        assert "Will be applied when you commit" in page.text
        assert "left as Ignore" not in page.text
        asked = [card for card in item_cards(page.text) if "needs-choice" in card]
        assert asked and all("Unsure; the analysis suggests" in card for card in asked)
        assert "ignored unless you choose an action" in page.text
        assert (await post(client, f"/memory/import/{job.id}/commit")).status_code == 303
        done = await client.get(f"/memory/import/{job.id}?space={space}")
        assert "Will be applied" not in done.text and ">Applied</span>" in done.text


async def test_the_limit_shown_is_the_limit_enforced(tmp_path: Path) -> None:
    async with web_app(tmp_path) as (_, host, client):
        start = await client.get("/memory/import")
        assert f"at most {MAX_CANDIDATES} memories" in start.text
        over = [{"title": f"Fact {n}", "summary": f"Fact {n}."} for n in range(MAX_CANDIDATES + 1)]
        refused = await preview(client, export_text(over))
        assert refused.status_code == 400 and f"at most {MAX_CANDIDATES}" in refused.text
        listed = "".join(f"- Owns notebook number {n}\n" for n in range(250))
        taken = await preview(client, listed)  # the other formats: any number, as the page says
        job = await memory_of(host).imports.job(job_id_of(taken))
        assert job.total == 250
