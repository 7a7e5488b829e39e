"""The conflicts queue through the real app: pairs with both sides and their sources,
resolved by keeping both or by one superseding the other, each with a receipt."""

import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from stratagate_plugin.core.events.cards import EventCard
from tests.test_web_events import World, hostile
from tests.webapp import post, web_app


@pytest.fixture
async def world(tmp_path: Path) -> AsyncIterator[World]:
    """The three events of ``TURNS`` and an agent memory contradicting the studio hours."""
    async with web_app(tmp_path) as (_app, host, client):
        found = World(host, client)
        await found.fill()
        said = "The studio opens at 11am on Saturdays, not 10am."
        remembered = await found.memory.remember.save(found.space, "monday", said)
        assert remembered.action == "CONFLICT_MARKED"
        yield found


async def sides(world: World) -> tuple[EventCard, EventCard]:
    return await world.event("11am"), await world.event("studio opens at 10am")


def pair_ids(page: str) -> list[str]:
    return re.findall(r'name="event_id" value="([^"]+)"', page)


async def test_the_queue_shows_both_sides_with_their_sources(world: World) -> None:
    newer, older = await sides(world)
    response = await world.client.get("/memory/conflicts")
    assert response.status_code == 200 and "Conflicts" in response.text
    page = response.text
    assert page.count('class="conflict-pair"') == 1
    assert newer.title in page and older.title in page
    assert "Remember that the studio opens at 10am on Saturdays." in page  # a source message
    assert f"/memory/events/{newer.id}?" in page and f"/memory/events/{older.id}?" in page
    assert 'hx-confirm="' in page


async def test_keep_both_clears_the_link_on_both_sides(world: World) -> None:
    newer, older = await sides(world)
    response = await post(
        world.client,
        "/memory/conflicts/resolve",
        data={"event_id": newer.id, "other_id": older.id, "action": "keep_both"},
    )
    assert response.status_code == 303
    page = (await world.client.get(response.headers["location"])).text
    [action] = await world.memory.curation.actions(newer.id)
    assert f"kept both (receipt {action.id})" in page
    assert "No conflicts to resolve." in page
    for card in (newer, older):
        stored = await world.memory.events.get(card.id)
        assert stored.status == "active" and "conflicts_with_event_ids" not in stored.temporal
    assert action.kind == "resolve" and action.detail["other_id"] == older.id


async def test_supersedes_makes_the_other_side_history(world: World) -> None:
    newer, older = await sides(world)
    await post(
        world.client,
        "/memory/conflicts/resolve",
        data={"event_id": newer.id, "other_id": older.id, "action": "supersedes"},
    )
    before = await world.memory.events.get(older.id)
    assert (before.status, before.superseded_by) == ("superseded", newer.id)
    assert older.id in (await world.memory.events.get(newer.id)).temporal["supersedes_event_ids"]
    assert pair_ids((await world.client.get("/memory/conflicts")).text) == []
    detail = (await world.client.get(f"/memory/events/{newer.id}")).text
    assert "supersedes" in detail and f"/memory/events/{older.id}?" in detail


@pytest.mark.parametrize(
    "data",
    [
        {"action": "merge"},
        {"other_id": ""},
        {"event_id": "evt_x", "other_id": "evt_y", "action": "keep_both"},
    ],
)
async def test_a_bad_resolution_is_refused(world: World, data: dict[str, str]) -> None:
    newer, older = await sides(world)
    form = {"event_id": newer.id, "other_id": older.id, "action": "keep_both"} | data
    response = await post(world.client, "/memory/conflicts/resolve", data=form)
    assert response.status_code in (400, 404) and "Traceback" not in response.text
    assert len(pair_ids((await world.client.get("/memory/conflicts")).text)) == 3


async def test_unlinked_events_are_not_resolved(world: World) -> None:
    newer, _ = await sides(world)
    other = await world.event("glaze")
    form = {"event_id": newer.id, "other_id": other.id, "action": "keep_both"}
    assert (await post(world.client, "/memory/conflicts/resolve", data=form)).status_code == 400
    assert (await world.client.get("/memory/conflicts?offset=-3")).status_code == 400


async def test_conflicting_text_is_escaped_and_the_page_speaks_chinese(world: World) -> None:
    _, older = await sides(world)
    await world.store(hostile(world.space, temporal={"conflicts_with_event_ids": [older.id]}))
    page = (await world.client.get("/memory/conflicts", params={"lang": "zh"})).text
    assert "<script>alert(1)</script>" not in page and "<img src=x" not in page
    assert "&lt;img src=x onerror=alert(1)&gt;" in page
    assert "都保留" in page and "以这一条取代另一条" in page and "来源" in page
