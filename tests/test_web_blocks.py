"""The short-term page: the block rail, level previews, expand as the user, retry a failed
summary; through the real app over a fresh plugin."""

import asyncio
import dataclasses
import html
import re
from pathlib import Path
from typing import Any

import httpx

from stratagate_plugin.core.llm.base import ScriptedModel
from stratagate_plugin.web.memory.blocks import card_fingerprint
from tests.webapp import memory_of, post, web_app, worker_on_request

THREAD = "sess-rail"
HX = {"hx-request": "true"}


def runtime_of(host: Any) -> Any:
    return host.pm.get_plugin("stratagate-memory").runtime


async def derive(host: Any) -> None:
    """One derivation pass of the plugin's own worker, waited for (a pass of our own could
    run beside the worker's and return while the worker still holds jobs)."""
    runtime = runtime_of(host)
    runtime.kick()
    await asyncio.wait_for(runtime.idle.wait(), timeout=60)


async def turns(memory: Any, space: str, count: int, thread: str = THREAD, start: int = 0) -> None:
    """``count`` recorded turns, one block each (block size 1)."""
    for i in range(start, start + count):
        await memory.blocks.append_turn(
            space,
            thread,
            user=f"turn {i}: the kiln fires on Friday at {i} o'clock",
            assistant=f"noted, turn {i}",
            receipt_id=f"{thread}:{i}",
        )


async def rail_world(host: Any, count: int) -> tuple[Any, str]:
    """``count`` ready blocks in ``THREAD`` of the default space (the worker then derives
    only when asked)."""
    await worker_on_request(host)
    memory, space = memory_of(host), runtime_of(host).default_space()
    await memory.spaces.set_block_turn_size(space, 1)
    await turns(memory, space, count)
    await derive(host)
    return memory, space


def card_ids(page: str) -> list[str]:
    return re.findall(r'<article class="block-card status-\w+" id="block-([^"]+)"', page)


def level_rows(card: str) -> dict[str, tuple[int, int]]:
    rows = re.findall(
        r'data-level="(L\d)">.*?<td class="tokens">(\d+)</td>\s*<td class="percent">(\d+)%',
        card,
        re.S,
    )
    return {level: (int(tokens), int(percent)) for level, tokens, percent in rows}


def card_of(page: str, block_id: str) -> str:
    start = page.index(f'id="block-{block_id}"')
    return page[start : page.index("</article>", start)]


async def rail_page(client: httpx.AsyncClient, space: str, **params: Any) -> str:
    response = await client.get("/memory/blocks", params={"space": space, **params})
    assert response.status_code == 200, response.text
    return response.text


async def test_blocks_rail_runs_oldest_to_newest_with_the_open_tail(tmp_path: Path) -> None:
    async with web_app(tmp_path) as (_, host, client):
        memory, space = await rail_world(host, 3)
        await memory.spaces.set_block_turn_size(space, 3)
        await turns(memory, space, 1, start=3)  # one turn of three in the open tail
        page = await rail_page(client, space)
        blocks = [view.block for view in await memory.blocks.views(space, THREAD)]
        assert card_ids(page) == [block.id for block in blocks]
        assert page.index(f"block-{blocks[-1].id}") < page.index('id="open-tail"')
        assert "1 / 3 turns · 2 messages" in page
        assert THREAD in page and "4 turns" not in page  # the selector shows its counts
        assert "3 blocks · 8 messages" in page
        newest, oldest = card_of(page, blocks[-1].id), card_of(page, blocks[0].id)
        assert 'data-distance="0"' in newest and 'data-distance="2"' in oldest
        assert 'data-status="ready"' in newest and 'data-source="none"' in newest


async def test_blocks_cards_link_the_events_extracted_from_them(tmp_path: Path) -> None:
    async with web_app(tmp_path) as (_, host, client):
        memory, space = await rail_world(host, 2)
        events = await memory.events.cards()
        assert {event.source_block_id for event in events} == {
            view.block.id for view in await memory.blocks.views(space, THREAD)
        }
        page = await rail_page(client, space)
        for event in events:
            assert f'href="/memory/events/{event.id}"' in card_of(page, event.source_block_id)
        await memory.gate.forget_event(events[0].id)
        assert f"/memory/events/{events[0].id}" not in await rail_page(client, space)


async def test_blocks_rail_pages_by_40_newest_first(tmp_path: Path) -> None:
    async with web_app(tmp_path) as (_, host, client):
        memory, space = await rail_world(host, 43)
        ids = [view.block.id for view in await memory.blocks.views(space, THREAD)]
        newest = await rail_page(client, space, thread=THREAD)
        assert card_ids(newest) == ids[3:]
        assert "Blocks 4–43 of 43" in newest and 'id="open-tail"' in newest
        assert "offset=40" in newest and "offset=0" not in newest
        older = await rail_page(client, space, thread=THREAD, offset=40)
        assert card_ids(older) == ids[:3]
        assert 'id="open-tail"' not in older and "offset=0" in older
        assert 'data-distance="42"' in card_of(older, ids[0])


async def test_blocks_cards_show_each_levels_tokens_and_share_of_l5(tmp_path: Path) -> None:
    async with web_app(tmp_path) as (_, host, client):
        memory, space = await rail_world(host, 1)
        [view] = await memory.blocks.views(space, THREAD)
        page = await rail_page(client, space)
        rows = level_rows(card_of(page, view.block.id))
        raw = view.view_tokens["L5"]
        assert raw > 0 and rows["L5"] == (raw, 100)
        for level, tokens in view.view_tokens.items():
            assert rows[level] == (tokens, round(100 * tokens / raw))
        assert rows["L0"][0] > 0  # derived: the title and tags have a size
        assert f'class="block-title">{view.block.l0_title}<' in html.unescape(page)


async def test_blocks_current_level_follows_decay(tmp_path: Path) -> None:
    async with web_app(tmp_path) as (_, host, client):
        memory, space = await rail_world(host, 10)
        views = await memory.blocks.views(space, THREAD)
        page = await rail_page(client, space)
        for view in views:
            assert f'data-level="{view.current_level}"' in card_of(page, view.block.id)
        assert views[0].current_level < 5 and views[-1].current_level == 5


async def test_blocks_previews_every_level(tmp_path: Path) -> None:
    async with web_app(tmp_path) as (_, host, client):
        memory, space = await rail_world(host, 1)
        [view] = await memory.blocks.views(space, THREAD)
        for level in range(6):
            url = f"/memory/blocks/{view.block.id}/view?level=L{level}"
            fragment = await client.get(url, headers=HX)
            assert fragment.status_code == 200
            assert "<html" not in fragment.text and f'data-level="L{level}"' in fragment.text
            text = (await memory.blocks.view(view.block.id, level)).text
            assert f"<pre>{text}</pre>" in html.unescape(fragment.text)
        full = await client.get(f"/memory/blocks/{view.block.id}/view?level=3")
        assert full.status_code == 200 and "<html" in full.text and 'data-level="L3"' in full.text


async def test_blocks_preview_refuses_unknown_block_and_bad_level(tmp_path: Path) -> None:
    async with web_app(tmp_path) as (_, host, client):
        memory, space = await rail_world(host, 1)
        [view] = await memory.blocks.views(space, THREAD)
        assert (await client.get("/memory/blocks/blk_nope/view?level=L1")).status_code == 404
        for bad in ("L6", "x", "", "L-1"):
            url = f"/memory/blocks/{view.block.id}/view?level={bad}"
            assert (await client.get(url)).status_code == 400
        assert (await rail_page(client, space)) and (
            await client.get("/memory/blocks", params={"space": space, "offset": "-1"})
        ).status_code == 400
        unknown = await client.get("/memory/blocks", params={"space": space, "thread": "nope"})
        assert unknown.status_code == 404 and "Traceback" not in unknown.text


async def test_blocks_expand_stores_the_level_as_the_user(tmp_path: Path) -> None:
    async with web_app(tmp_path) as (_, host, client):
        memory, space = await rail_world(host, 10)
        oldest = (await memory.blocks.views(space, THREAD))[0].block
        url = f"/memory/blocks/{oldest.id}/expand"
        response = await post(client, url, data={"level": "L4"}, headers=HX)
        assert response.status_code == 200 and "<html" not in response.text
        assert f'id="block-{oldest.id}"' in response.text
        assert 'data-source="user"' in response.text and 'data-level="4"' in response.text
        stored = (await memory.blocks.view(oldest.id)).block
        assert (stored.pointer_anchor_level, stored.last_lifted_by) == (4, "user")
        plain = await post(client, url, data={"level": "L1"})
        assert plain.status_code == 303
        assert f"thread={THREAD}" in plain.headers["location"]
        assert plain.headers["location"].endswith(f"#block-{oldest.id}")
        assert (await memory.blocks.view(oldest.id)).current_level == 1


async def test_blocks_expand_refuses_bad_levels_unknown_and_pending_blocks(tmp_path: Path) -> None:
    async with web_app(tmp_path) as (_, host, client):
        memory, space = await rail_world(host, 1)
        [view] = await memory.blocks.views(space, THREAD)
        bad = await post(client, f"/memory/blocks/{view.block.id}/expand", data={"level": "L9"})
        assert bad.status_code == 400
        missing = await post(client, "/memory/blocks/blk_nope/expand", data={"level": "L1"})
        assert missing.status_code == 404
        await turns(memory, space, 1, start=1)  # sealed, not derived
        pending = (await memory.blocks.views(space, THREAD))[-1].block
        refused = await post(client, f"/memory/blocks/{pending.id}/expand", data={"level": "L5"})
        assert refused.status_code == 409 and "still being processed" in refused.text
        page = await rail_page(client, space)
        assert 'data-status="sealed"' in card_of(page, pending.id)


async def test_blocks_retry_queues_a_failed_summary_again(tmp_path: Path) -> None:
    async with web_app(tmp_path) as (_, host, client):
        memory, space = memory_of(host), runtime_of(host).default_space()
        await worker_on_request(host)  # no pass of the worker's may take the script
        await memory.spaces.set_block_turn_size(space, 1)
        working, memory.model = memory.model, ScriptedModel.of(["not json at all"])
        memory.config = memory.config.model_copy(update={"offline_fallback": False})
        await turns(memory, space, 1)
        await derive(host)
        memory.model = working
        [view] = await memory.blocks.views(space, THREAD)
        card = card_of(await rail_page(client, space), view.block.id)
        assert 'data-status="failed"' in card and "/retry" in card and "ModelOutputError" in card
        response = await post(client, f"/memory/blocks/{view.block.id}/retry", headers=HX)
        assert response.status_code == 200 and 'data-status="failed"' not in response.text
        await asyncio.wait_for(runtime_of(host).idle.wait(), timeout=60)
        assert (await memory.blocks.view(view.block.id)).block.processing_status == "ready"
        again = await post(client, f"/memory/blocks/{view.block.id}/retry")
        assert again.status_code == 409 and "no failed summary job" in again.text
        missing = await post(client, "/memory/blocks/blk_nope/retry")
        assert missing.status_code == 404


async def test_blocks_escape_script_in_block_text(tmp_path: Path) -> None:
    async with web_app(tmp_path) as (_, host, client):
        memory, space = memory_of(host), runtime_of(host).default_space()
        await memory.spaces.set_block_turn_size(space, 1)
        attack = "<script>alert(1)</script><img src=x onerror=alert(2)>"
        await memory.blocks.append_turn(
            space, THREAD, user=attack, assistant=attack, receipt_id="x"
        )
        await derive(host)
        [view] = await memory.blocks.views(space, THREAD)
        page = await rail_page(client, space)
        for level in range(6):
            url = f"/memory/blocks/{view.block.id}/view?level=L{level}"
            page += (await client.get(url, headers=HX)).text
        assert "<script>alert" not in page and "<img src=x" not in page
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page


async def test_blocks_page_in_chinese(tmp_path: Path) -> None:
    async with web_app(tmp_path) as (_, host, client):
        memory, space = await rail_world(host, 2)
        await memory.spaces.set_block_turn_size(space, 3)
        await turns(memory, space, 1, start=2)
        page = await rail_page(client, space, lang="zh")
        for label in (
            "短期记忆",
            "对话",
            "已整理",
            "当前层级",
            "占 L5 比例",
            "未封存的尾部",
            "展开到",
        ):
            assert label in page
        assert "1 / 3 轮" in page and "Current level" not in page


async def test_blocks_page_without_conversations(tmp_path: Path) -> None:
    async with web_app(tmp_path) as (_, host, client):
        page = await rail_page(client, runtime_of(host).default_space())
        assert "No conversation in this memory space yet." in page


async def test_blocks_cards_render_again_when_the_block_or_the_language_changes(
    tmp_path: Path,
) -> None:
    """Cards are kept rendered between requests (``templating.fragment``): a card whose
    block changed, a newer block's distance, or another language is rendered anew."""
    async with web_app(tmp_path) as (_, host, client):
        memory, space = await rail_world(host, 3)
        oldest = (await memory.blocks.views(space, THREAD))[0].block
        before = card_of(await rail_page(client, space), oldest.id)
        assert 'data-source="none"' in before and 'data-distance="2"' in before
        await memory.blocks.expand(oldest.id, "L4", source="user", strict=True)
        after = card_of(await rail_page(client, space), oldest.id)
        assert 'data-source="user"' in after and 'data-level="4"' in after
        await turns(memory, space, 1, start=3)
        await derive(host)
        assert 'data-distance="3"' in card_of(await rail_page(client, space), oldest.id)
        assert "当前层级" in card_of(await rail_page(client, space, lang="zh"), oldest.id)
        assert "Current level" in card_of(await rail_page(client, space, lang="en"), oldest.id)


async def test_a_cards_fingerprint_follows_every_field_it_shows(tmp_path: Path) -> None:
    """The fragment cache's key: the same for the same entry, another when the block's
    text, its status, level, distance, sizes, events or error changes."""
    async with web_app(tmp_path) as (_, host, _client):
        memory, space = await rail_world(host, 1)
        [entry] = (await memory.blocks.rail(space, THREAD, 0)).blocks
        same = card_fingerprint(space, dataclasses.replace(entry))
        assert same == card_fingerprint(space, entry)
        block = entry.block.model_copy(update={"l1_summary": f"{entry.block.l1_summary}!"})
        changed = [
            dataclasses.replace(entry, block=block),
            dataclasses.replace(entry, current_level=entry.current_level - 1),
            dataclasses.replace(entry, distance=entry.distance + 1),
            dataclasses.replace(entry, sizes=entry.sizes[1:]),
            dataclasses.replace(entry, events=()),
            dataclasses.replace(entry, error="the model timed out"),
        ]
        keys = {card_fingerprint(space, other) for other in changed}
        assert same not in keys and len(keys) == len(changed)
        assert card_fingerprint("other", entry) != same
