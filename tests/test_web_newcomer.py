"""A newcomer's first hour in the web app (issue 27): times in the reader's terms with the
ISO value on hover, a favicon, an unknown ``?space=`` refused by name, the Chinese UI's
redirect keeping its language."""

import re
from pathlib import Path

from stratagate_plugin.core.clock import iso
from tests.test_web_events import World
from tests.webapp import web_app

ISO_WITH_MICROSECONDS = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+")


def visible_text(html: str) -> str:
    return re.sub(r"<[^>]*>", " ", html)


async def test_times_are_shown_in_the_readers_terms_with_iso_on_hover(tmp_path: Path) -> None:
    async with web_app(tmp_path) as (_app, host, client):
        world = World(host, client)
        await world.fill()
        card = await world.event("spring sale")
        page = (await client.get(f"/memory/events/{card.id}")).text
        stamp = iso(card.created_at)
        shown = card.created_at.strftime("%-d %b %Y, %H:%M")
        assert f'<time datetime="{stamp}" title="{stamp}">{shown}</time>' in page
        assert not ISO_WITH_MICROSECONDS.search(visible_text(page)), "an ISO time is shown"

        zh = (await client.get(f"/memory/events/{card.id}?lang=zh")).text
        day = card.created_at
        assert f">{day.year}年{day.month}月{day.day}日 {day.strftime('%H:%M')}</time>" in zh


async def test_the_favicon_is_served(tmp_path: Path) -> None:
    async with web_app(tmp_path) as (_app, _host, client):
        response = await client.get("/favicon.ico")
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("image/")
        assert '<link rel="icon"' in (await client.get("/chat")).text


async def test_an_unknown_space_is_a_404_naming_it(tmp_path: Path) -> None:
    async with web_app(tmp_path) as (_app, _host, client):
        for path in ("/memory/events", "/memory/", "/memory/blocks", "/memory/topics"):
            response = await client.get(path, params={"space": "nosuch"})
            assert response.status_code == 404, path
            assert "nosuch" in response.text
            assert 'value="nosuch"' not in response.text
        assert (await client.get("/memory/events")).status_code == 200
