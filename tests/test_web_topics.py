"""The topics page: the book of chapters (``N.0`` overview then sections of linked events),
fallback entries last and paged, the directory exactly as injected, a failed topic batch
retried, filters, 404/400, escaping and the Chinese page; through the real app."""

import html
import json
import re
import sqlite3
from collections import deque
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import httpx
from cards import event_card
from topic_data import EN_TURNS, TopicScript, add_events, at, new_space

from stratagate_plugin.core.events.documents import EVENT_RULES
from stratagate_plugin.core.llm.base import ModelError
from stratagate_plugin.core.store import event_rows
from stratagate_plugin.core.text.token_budget import estimate_tokens
from stratagate_plugin.web.memory import topics as topics_page
from tests.test_web_blocks import derive, runtime_of
from tests.webapp import memory_of, post, web_app, worker_on_request

HX = {"hx-request": "true"}


async def told(host: Any) -> tuple[Any, str]:
    """The four English conversation turns, one block each, derived by the plugin's worker
    (events, then topics: a "Caroline" and a "Melanie" chapter)."""
    memory, space = memory_of(host), runtime_of(host).default_space()
    await memory.spaces.set_block_turn_size(space, 1)
    for n, (user, assistant) in enumerate(EN_TURNS):
        await memory.blocks.append_turn(
            space, "t1", user=user, assistant=assistant, receipt_id=f"r{n}"
        )
    await derive(host)
    return memory, space


async def book_page(client: httpx.AsyncClient, space: str, **params: Any) -> str:
    response = await client.get("/memory/topics", params={"space": space, **params})
    assert response.status_code == 200, response.text
    return response.text


def chapter_titles(page: str) -> list[tuple[str, str]]:
    found = re.findall(
        r'<span class="number">(\d+)\.</span>\s*<span class="chapter-title">([^<]*)</span>', page
    )
    return [(number, html.unescape(title)) for number, title in found]


def event_links(page: str) -> list[str]:
    return [unquote(i) for i in re.findall(r'href="/memory/events/([^"?]+)\?space=', page)]


async def test_the_book_lists_chapters_with_their_overview_and_linked_events(
    tmp_path: Path,
) -> None:
    async with web_app(tmp_path) as (_, host, client):
        memory, space = await told(host)
        book = await memory.topics.book(space)
        assert [c["title"] for c in book["chapters"]] == ["Caroline", "Melanie"]
        page = await book_page(client, space)
        assert chapter_titles(page) == [("1", "Caroline"), ("2", "Melanie")]
        assert html.escape(book["chapters"][0]["description"]) in page
        assert 'aria-current="page">Topics</a>' in page
        caroline = book["chapters"][0]
        url = f"/memory/topics/{caroline['id']}"
        assert f'hx-get="{url}?space=' in page and 'hx-trigger="toggle once"' in page

        fragment = (await client.get(url, params={"space": space}, headers=HX)).text
        assert "<html" not in fragment
        overview = fragment[: fragment.index('data-number="1.1"')]
        assert '<span class="number">1.0</span> Overview' in overview
        [paragraph] = caroline["overview"]
        assert html.escape(paragraph["text"]) in overview
        assert event_links(overview) == paragraph["event_ids"]
        section = fragment[fragment.index('data-number="1.1"') :]
        assert event_links(section) == caroline["sections"][0]["eventIds"]
        cards = await memory.topics.events_of(space, caroline["id"])
        for card in cards:
            assert f">{html.escape(card.title)}</a>" in section

        whole = (await client.get(url, params={"space": space})).text
        assert "<html" in whole and "Back to the book" in whole and "1.</span> Caroline" in whole
        event = await client.get(f"/memory/events/{cards[0].id}", params={"space": space})
        assert event.status_code == 200 and html.escape(cards[0].title) in event.text


async def test_an_overview_paragraph_without_a_title_opens(tmp_path: Path) -> None:
    """A model's paragraph may have no title (the schema allows it): the chapter still
    opens, showing its text (the page used to fail with a 500)."""
    async with web_app(tmp_path) as (_, host, client):
        memory, space = await told(host)
        caroline = (await memory.topics.book(space))["chapters"][0]

        def untitled(raw: sqlite3.Connection) -> None:
            row = raw.execute("SELECT overview_json FROM topics WHERE id = ?", (caroline["id"],))
            paragraphs = [{**p, "title": None} for p in json.loads(row.fetchone()[0])]
            raw.execute(
                "UPDATE topics SET overview_json = ? WHERE id = ?",
                (json.dumps(paragraphs), caroline["id"]),
            )

        await memory.db.write(untitled)
        url = f"/memory/topics/{caroline['id']}"
        page = await client.get(url, params={"space": space})
        assert page.status_code == 200
        assert html.escape(caroline["overview"][0]["text"]) in page.text


async def test_the_directory_is_shown_exactly_as_injected_with_its_estimate(
    tmp_path: Path,
) -> None:
    async with web_app(tmp_path) as (_, host, client):
        memory, space = await told(host)
        page = await book_page(client, space)
        [shown] = re.findall(r'<pre class="directory">(.*?)</pre>', page, re.S)
        directory = await memory.topics.directory(space)
        assert directory and html.unescape(shown) == directory
        assert f"{estimate_tokens(directory)} estimated tokens of 400" in page


async def test_an_empty_space_says_it_has_no_topics(tmp_path: Path) -> None:
    async with web_app(tmp_path) as (_, host, client):
        space = runtime_of(host).default_space()
        page = await book_page(client, space)
        assert "This space has no topics yet" in page
        assert '<details class="chapter' not in page and 'class="directory"' not in page
        assert '<form class="filters"' not in page


async def test_fallback_entries_come_last_and_the_book_pages(tmp_path: Path) -> None:
    async with web_app(tmp_path) as (_, host, client):
        memory, space = await told(host)
        spare = await add_events(memory, space, 25, distinct=True)  # no topic pass runs
        first = await book_page(client, space)
        assert chapter_titles(first) == [("1", "Caroline"), ("2", "Melanie")]
        assert "25 events are not in a chapter yet." in first
        entries = first[first.index("Not in a chapter yet") :]
        page_one = [e for e in event_links(entries) if e in spare]
        assert len(page_one) == 18  # 20 a page: the two chapters, then 18 fallback entries
        [older] = re.findall(r'<a href="([^"]+)" rel="next"', first)
        second = (await client.get(html.unescape(older))).text
        assert chapter_titles(second) == [] and 'rel="prev"' in second
        page_two = [e for e in event_links(second) if e in spare]
        assert len(page_two) == 7 and sorted(page_one + page_two) == sorted(spare)
        assert 'rel="next"' not in second


async def test_a_query_or_a_category_lists_what_list_topics_finds(tmp_path: Path) -> None:
    async with web_app(tmp_path) as (_, host, client):
        memory, space = await told(host)
        melanie = (await memory.topics.book(space))["chapters"][1]
        found = await book_page(client, space, q="Melanie")
        assert f'data-topic-id="{melanie["id"]}"' in found and "1 entries found." in found
        assert ">Caroline</a>" not in found
        other = await book_page(client, space, category="other")
        assert other.count('<li class="topic-entry"') == 2
        assert '<option value="other" selected>' in other
        work = await book_page(client, space, category="work")
        assert "No topic matches." in work


async def test_bad_parameters_are_400_and_unknown_topics_404(tmp_path: Path) -> None:
    async with web_app(tmp_path) as (_, host, client):
        _, space = await told(host)
        for params in ({"category": "gossip"}, {"offset": "-1"}, {"offset": "two"}):
            response = await client.get("/memory/topics", params={"space": space, **params})
            assert response.status_code == 400, params
        for topic_id in ("topic_nope", "fallback:evt_nope"):
            response = await client.get(f"/memory/topics/{topic_id}", params={"space": space})
            assert response.status_code == 404 and "Traceback" not in response.text


async def test_a_failed_topic_batch_is_retried_from_the_page(tmp_path: Path) -> None:
    async with web_app(tmp_path) as (_, host, client):
        memory, space = memory_of(host), runtime_of(host).default_space()
        await worker_on_request(host)  # no pass of the worker's may take the script
        working, config = memory.model, memory.config
        # the failure path itself: no offline grouper standing in (issue 31's fallback)
        memory.config = config.model_copy(
            update={"topic_projector": "model", "offline_fallback": False}
        )
        memory.model = TopicScript(answers=deque([ModelError("timeout")] * 3))
        await new_space(memory, space)
        await add_events(memory, space, 3)
        for minutes in (0, 0.5, 2):  # three tries, 30 s then 60 s apart: attempts run out
            memory.topics.clock = lambda m=minutes: at(m)
            await memory.topics.process()
        page = await book_page(client, space)
        assert "ModelError: timeout" in page and "Failed</span>" in page
        assert "Retry failed batches (1)" in page

        memory.model, memory.config = working, config
        response = await post(client, f"/memory/topics/retry?space={space}")
        assert response.status_code == 303
        location = response.headers["location"]
        assert "retried=1" in location
        await derive(host)
        book = await memory.topics.book(space)
        assert book["pending"] == [] and book["chapters"] and book["fallbackEntries"] == 0
        after = (await client.get(location)).text
        assert "1 topic batch(es) queued again" in after and "Retry failed" not in after
        again = await post(client, f"/memory/topics/retry?space={space}")
        assert "retried=0" in again.headers["location"]


async def test_script_in_an_event_title_stays_text_in_chapters_and_entries(
    tmp_path: Path,
) -> None:
    async with web_app(tmp_path) as (_, host, client):
        memory, space = memory_of(host), runtime_of(host).default_space()
        await worker_on_request(host)  # the test's own topic pass runs the batch
        attack = "<script>alert(1)</script><img src=x onerror=alert(2)>"
        await new_space(memory, space)
        cards = [
            event_card(
                f"evt_attack_{n}",
                namespace=space,
                title=f"{attack} plan {n}",
                summary=f"{attack} happened",
                tags=[attack],
                temporal={"participants": [attack]},
            )
            for n in range(2)
        ]

        def write(raw: sqlite3.Connection) -> None:
            for card in cards:
                event_rows.insert_event(raw, card, EVENT_RULES)

        await memory.db.write(write)
        await add_events(memory, space, 1, start=900)  # a fallback entry beside the chapter
        page = await book_page(client, space)  # before the pass: fallback entries only
        assert "<script>alert" not in page and "&lt;script&gt;alert(1)" in page
        await memory.topics.process()
        book = await memory.topics.book(space)
        assert any(attack in c["title"] or attack in c["description"] for c in book["chapters"])
        page = await book_page(client, space)
        chapter = book["chapters"][0]["id"]
        fragment = (await client.get(f"/memory/topics/{chapter}", params={"space": space})).text
        for shown in (page, fragment):
            assert "<script>alert" not in shown and "<img src=x" not in shown
            assert "&lt;script&gt;alert(1)" in shown


async def test_the_chinese_page_and_the_status_stage(tmp_path: Path) -> None:
    async with web_app(tmp_path) as (_, host, client):
        memory, space = await told(host)
        page = await book_page(client, space, lang="zh")
        assert ">主题目录</a>" in page and "章节" in page and "智能体看到的目录" in page
        chapter = (await memory.topics.book(space))["chapters"][0]["id"]
        fragment = await client.get(
            f"/memory/topics/{chapter}", params={"space": space, "lang": "zh"}, headers=HX
        )
        assert "1.0</span> 总览" in fragment.text and "引用：" in fragment.text
        status = (await client.get("/memory/", params={"space": space, "lang": "en"})).text
        assert "Topic organisation" in status
        assert "主题整理" in (await client.get("/memory/", params={"lang": "zh"})).text


async def test_a_long_section_shows_nine_events_and_links_the_next_page(tmp_path: Path) -> None:
    async with web_app(tmp_path) as (_, host, client):
        memory, space = memory_of(host), runtime_of(host).default_space()
        await new_space(memory, space)
        cards = [
            event_card(
                f"evt_pot_{n:02d}", namespace=space, title=f"Pottery class {n}", tags=["pottery"]
            )
            for n in range(20)
        ]
        await memory.db.write(
            lambda raw: [event_rows.insert_event(raw, c, EVENT_RULES) for c in cards]
        )
        await derive(host)  # the plugin's worker runs the topic pass
        [chapter] = (await memory.topics.book(space))["chapters"]
        [long] = [s for s in chapter["sections"] if len(s["eventIds"]) > 9]
        number = chapter["sections"].index(long) + 1
        url = f"/memory/topics/{chapter['id']}"
        seen: list[str] = []
        params: dict[str, Any] = {"space": space}
        while True:
            fragment = (await client.get(url, params=params, headers=HX)).text
            part = fragment[fragment.index(f'data-number="1.{number}"') :]
            part = part[: part.index("</section>")]
            links = event_links(part)
            assert 0 < len(links) <= 9
            seen += links
            found = re.findall(r'class="section-next" href="([^"]+)" hx-get="\1"', part)
            if not found:
                break
            assert 'hx-target="closest .topic-body"' in part
            params = dict(httpx.URL(html.unescape(found[0])).params)
        assert seen == long["eventIds"]  # every event once, in order, nine a page
        assert (
            f"Events 10–18 of {len(seen)}."
            in (await client.get(url, params={"space": space, "section": number, "offset": 9})).text
        )
        zh = await client.get(url, params={"space": space, "lang": "zh"}, headers=HX)
        assert f"第 1–9 个事件，共 {len(seen)} 个。" in zh.text and "下一页事件" in zh.text
        bad = await client.get(url, params={"space": space, "section": "x"})
        assert bad.status_code == 400


async def test_the_page_reads_one_page_of_batches_and_counts_them_all(
    tmp_path: Path, monkeypatch: Any
) -> None:
    monkeypatch.setattr(topics_page, "PAGE_SIZE", 5)
    async with web_app(tmp_path) as (_, host, client):
        memory, space = memory_of(host), runtime_of(host).default_space()
        await worker_on_request(host)  # no pass of the worker's may run the batches
        memory.config = memory.config.model_copy(
            update={"topic_projector": "model", "offline_fallback": False}
        )
        memory.model = TopicScript(answers=deque([ModelError("timeout")] * 100))
        await new_space(memory, space)
        await add_events(memory, space, 120, distinct=True)
        memory.topics.clock = lambda: at(0)
        await memory.topics.process()
        every = await memory.topics.book(space)
        assert len(every["pending"]) == sum(every["pendingCounts"].values()) > 5
        first = await memory.topics.book(space, pending_limit=5)
        assert [b["jobId"] for b in first["pending"]] == [b["jobId"] for b in every["pending"][:5]]
        page = await book_page(client, space)
        assert page.count('<tr class="batch batch-') == 5
        total = len(every["pending"])
        assert f"The oldest 5 of {total} batches are shown." in page
        assert f"Retry failed batches ({total})" in page
