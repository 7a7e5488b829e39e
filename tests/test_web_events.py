"""The long-term events pages through the real app: the filtered timeline, one event's
story (sources, times, chain, adoptions, weight chart) and its actions."""

import asyncio
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from stratagate_plugin.core.events.cards import EventCard
from stratagate_plugin.core.events.documents import EVENT_RULES
from stratagate_plugin.core.store import event_rows
from tests.cards import event_card
from tests.webapp import memory_of, post, web_app

TURNS = [
    ("We decided to move the spring sale to 14 March.", "Noted."),
    ("The glaze supplier raised prices by 12% last week.", "That affects margins."),
    ("Remember that the studio opens at 10am on Saturdays.", "Noted."),
]


async def derived(memory: Any, space: str, count: int) -> None:
    """Until ``count`` events exist: the plugin's own worker may hold the job
    ``process_pending`` would run, so it can return before the events are written."""
    for _ in range(400):
        await memory.derivation.process_pending()
        if len(await memory.events.cards(space)) >= count:
            return
        await asyncio.sleep(0.025)
    raise AssertionError(f"fewer than {count} events were derived")


class World:
    """The app over a space holding the three offline-derived events of ``TURNS``."""

    def __init__(self, host: Any, client: httpx.AsyncClient) -> None:
        self.host, self.client = host, client
        self.memory = memory_of(host)
        self.space = host.pm.get_plugin("stratagate-memory").runtime.default_space()

    async def fill(self) -> None:
        for user, assistant in TURNS:
            await self.memory.blocks.append_turn(
                self.space, "monday", user=user, assistant=assistant
            )
        await self.memory.blocks.seal_tail(self.space, "monday")
        await derived(self.memory, self.space, 3)

    async def event(self, words: str) -> EventCard:
        cards = await self.memory.events.cards(self.space, include_hidden=True)
        [card] = [c for c in cards if words in c.title.lower()]
        return card

    async def store(self, card: EventCard) -> None:
        await self.memory.db.write(lambda raw: event_rows.insert_event(raw, card, EVENT_RULES))

    async def titles(self, **params: str) -> list[str]:
        response = await self.client.get("/memory/events", params=params)
        assert response.status_code == 200
        return re.findall(r'class="event-title"[^>]*>([^<]*)</a>', response.text)


@pytest.fixture
async def world(tmp_path: Path) -> AsyncIterator[World]:
    async with web_app(tmp_path) as (_app, host, client):
        found = World(host, client)
        await found.fill()
        yield found


async def test_the_timeline_lists_events_newest_first_with_weight_and_badges(
    world: World,
) -> None:
    response = await world.client.get("/memory/events")
    assert response.status_code == 200 and "Long-term events" in response.text
    titles = await world.titles()
    assert titles[0] == "Spring sale moved to 14 March"  # happens in March next year
    assert len(titles) == 3 and "Glaze supplier raised prices by 12%" in titles
    assert 'class="num mono">' in response.text and "memory-events.css" in response.text


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({"q": "glaze"}, ["Glaze supplier raised prices by 12%"]),
        (
            {"type": "other"},  # a fact, and a standing fact ("on Saturdays": every week)
            ["Studio opens at 10am on Saturdays", "Glaze supplier raised prices by 12%"],
        ),
        ({"since": "2027-01-01"}, ["Spring sale moved to 14 March"]),
        ({"status": "forgotten"}, []),
        ({"source": "agent"}, []),
    ],
)
async def test_each_filter_narrows_the_timeline(
    world: World, params: dict[str, str], expected: list[str]
) -> None:
    assert await world.titles(**params) == expected


async def test_participant_status_and_source_filters_find_what_they_name(world: World) -> None:
    await world.store(
        event_card(
            "evt_ada",
            namespace=world.space,
            title="Ada joined",
            temporal={"participants": ["Ada Lovelace"]},
        )
    )
    await world.memory.remember.save(world.space, "monday", "The kiln shelf is cracked.")
    await world.memory.curation.act("forget", (await world.event("glaze")).id)
    assert await world.titles(participant="ada") == ["Ada joined"]
    assert await world.titles(source="agent") == ["The kiln shelf is cracked."]
    assert await world.titles(status="forgotten") == ["Glaze supplier raised prices by 12%"]
    assert "Glaze supplier raised prices by 12%" not in await world.titles()


async def test_the_timeline_pages_forty_at_a_time(world: World) -> None:
    for i in range(45):
        day = f"2020-01-{1 + i % 28:02d}T{i % 24:02d}:00:00+00:00"
        await world.store(
            event_card(
                f"evt_{i:03d}",
                namespace=world.space,
                title=f"old {i:03d}",
                temporal={"happened_start": day},
            )
        )
    first = await world.titles()
    second = await world.client.get("/memory/events", params={"offset": "40"})
    assert len(first) == 40 and 'rel="next"' in (await world.client.get("/memory/events")).text
    later = re.findall(r'class="event-title"[^>]*>([^<]*)</a>', second.text)
    assert len(later) == 8 and not set(later) & set(first) and 'rel="prev"' in second.text


@pytest.mark.parametrize(
    "params",
    [
        {"since": "last week"},
        {"until": "2026-02-30"},
        {"offset": "-1"},
        {"offset": "x"},
        {"status": "deleted"},
        {"source": "import"},
        {"type": "party"},
    ],
)
async def test_bad_parameters_are_a_400_page(world: World, params: dict[str, str]) -> None:
    response = await world.client.get("/memory/events", params=params)
    assert response.status_code == 400 and "Traceback" not in response.text


async def test_an_unknown_event_is_a_404_page(world: World) -> None:
    assert (await world.client.get("/memory/events/evt_nope")).status_code == 404
    assert (await post(world.client, "/memory/events/evt_nope/pin")).status_code == 404
    response = await post(
        world.client, "/memory/events/evt_nope/correct", data={"title": "t", "summary": "s"}
    )
    assert response.status_code == 404


async def test_the_detail_shows_sources_times_adoptions_and_the_weight_chart(
    world: World,
) -> None:
    card = await world.event("spring sale")
    ref = f"event:{card.id}"
    memory = world.memory
    batch = await memory.gate.open_batch(
        world.space, "tue", "memory_search_events", [ref], {ref: card.title}
    )
    await memory.gate.assess(
        world.space, "tue", batch.id, "sufficient", [ref], "direct", None, "answer"
    )
    await memory.gate.record_use(world.space, "tue", batch.id, [ref], "receipt-1")
    page = (await world.client.get(f"/memory/events/{card.id}")).text
    assert "We decided to move the spring sale to 14 March." in page  # the source message
    assert "/memory/blocks?space=" in page and "thread=monday" in page
    assert card.temporal["mentioned_at"] in page and "2027-03-14" in page
    assert batch.id in page and "Not adopted yet." not in page
    assert re.search(r'<polyline class="weight-line" points="[\d., ]+"', page)
    assert '<circle class="adoption"' in page and "style=" not in page


async def test_forget_leaves_search_with_the_cli_receipt_and_restore_brings_it_back(
    world: World,
) -> None:
    card = await world.event("spring sale")
    response = await post(world.client, f"/memory/events/{card.id}/forget")
    assert response.status_code == 303
    page = (await world.client.get(response.headers["location"])).text
    [action] = await world.memory.curation.actions(card.id)
    assert f"forgot {card.id} (now forgotten) (receipt {action.id})" in page
    assert (await world.memory.events.get(card.id)).status == "forgotten"
    hits = await world.memory.events.search(world.space, "spring sale", track_retrieval=False)
    assert card.id not in {hit.card.id for hit in hits}
    live = await world.event("glaze")
    assert 'hx-confirm="' in (await world.client.get(f"/memory/events/{live.id}")).text
    await post(world.client, f"/memory/events/{card.id}/restore")
    hits = await world.memory.events.search(world.space, "spring sale", track_retrieval=False)
    assert card.id in {hit.card.id for hit in hits}


async def test_pin_and_unpin_toggle_the_flag(world: World) -> None:
    card = await world.event("glaze")
    await post(world.client, f"/memory/events/{card.id}/pin")
    assert (await world.memory.events.get(card.id)).pinned
    assert "pinned" in await _row_of(world, card.id)
    await post(world.client, f"/memory/events/{card.id}/unpin")
    assert not (await world.memory.events.get(card.id)).pinned
    assert [a.kind for a in await world.memory.curation.actions(card.id)] == ["pin", "unpin"]


async def _row_of(world: World, event_id: str) -> str:
    page = (await world.client.get("/memory/events")).text
    start = page.index(f"/memory/events/{event_id}")
    return page[start : page.index("</tr>", start)]


async def test_correct_writes_a_superseding_event_shown_with_its_chain_both_ways(
    world: World,
) -> None:
    old = await world.event("spring sale")
    response = await post(
        world.client,
        f"/memory/events/{old.id}/correct",
        data={
            "title": "Spring sale on 21 March",
            "summary": "Moved again.",
            "happened": "2027-03-21",
        },
    )
    assert response.status_code == 303
    new = await world.event("21 march")
    assert f"/memory/events/{new.id}?" in response.headers["location"]
    page = (await world.client.get(response.headers["location"])).text
    assert f"corrected {old.id}: {new.id} supersedes it" in page
    assert "supersedes" in page and f"/memory/events/{old.id}?" in page
    assert "a user correction" in page and "2027-03-21" in page
    before = await world.memory.events.get(old.id)
    assert (before.status, before.superseded_by) == ("superseded", new.id)
    assert new.source_message_ids == old.source_message_ids
    old_page = (await world.client.get(f"/memory/events/{old.id}")).text
    assert "superseded by" in old_page and f"/memory/events/{new.id}?" in old_page
    assert [a.kind for a in await world.memory.curation.actions(old.id)] == ["correct"]


async def test_a_bad_correction_is_a_400_page(world: World) -> None:
    card = await world.event("glaze")
    url = f"/memory/events/{card.id}/correct"
    empty = await post(world.client, url, data={"title": "", "summary": "s"})
    bad_date = await post(
        world.client, url, data={"title": "t", "summary": "s", "happened": "soon"}
    )
    assert empty.status_code == 400 and bad_date.status_code == 400
    assert (await world.memory.events.get(card.id)).status == "active"


def hostile(space: str, **fields: Any) -> EventCard:
    """An event whose title and summary are markup that would run if not escaped."""
    markup = {"title": "<script>alert(1)</script>", "summary": "<img src=x onerror=alert(1)>"}
    return event_card("evt_xss", namespace=space, **(markup | fields))


async def test_event_text_is_escaped(world: World) -> None:
    await world.store(hostile(world.space))
    for url in ("/memory/events", "/memory/events/evt_xss"):
        page = (await world.client.get(url)).text
        assert "<script>alert(1)</script>" not in page and "<img src=x" not in page
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page


async def test_the_pages_speak_chinese(world: World) -> None:
    card = await world.event("glaze")
    listing = (await world.client.get("/memory/events", params={"lang": "zh"})).text
    detail = (await world.client.get(f"/memory/events/{card.id}", params={"lang": "zh"})).text
    assert "长期记忆" in listing and "筛选" in listing and "参与者" in listing
    assert "来源：原始消息" in detail and "权重随轮次变化" in detail and "更正" in detail
