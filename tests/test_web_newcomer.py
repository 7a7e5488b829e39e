"""A newcomer's first hour in the web app (issue 27): times in the reader's terms with the
ISO value on hover, a favicon, an unknown ``?space=`` refused by name, the Chinese UI's
redirect keeping its language."""

import re
from pathlib import Path

from stratagate_plugin.core.clock import iso
from stratagate_plugin.web.shell.i18n import translate_note
from stratagate_plugin.web.shell.templating import WebState
from tests.overview_data import quiet
from tests.test_web_events import World
from tests.webapp import new_chat, post, say, web_app

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


async def test_the_root_redirect_keeps_the_language(tmp_path: Path) -> None:
    async with web_app(tmp_path) as (_app, _host, client):
        response = await client.get("/?lang=zh")
        assert response.status_code == 307
        assert response.headers["location"] == "/chat?lang=zh"


def test_a_chat_note_is_shown_in_the_pages_language() -> None:
    assert translate_note("memory used: 2 events · 1 message", "zh") == (
        "使用的记忆：2 个事件 · 1 条消息"
    )
    assert translate_note("block sealed: turns 1–3", "zh") == "区块已封存：第 1–3 轮"
    assert translate_note("block ready: turn 2", "zh") == "区块已就绪：第 2 轮"
    assert translate_note("memory used: 1 message", "en") == "memory used: 1 message"


async def test_the_chinese_chat_shows_its_note_and_answer_in_chinese(tmp_path: Path) -> None:
    async with web_app(tmp_path) as (_app, _host, client):
        session_id = await new_chat(client)
        await say(client, session_id, "请记住：我的妹妹住在波尔图。")
        await say(client, session_id, "我的妹妹住在哪里？")
        page = (await client.get(f"/chat/{session_id}?lang=zh")).text
        assert "根据你之前告诉我的" in page and "From what you told me before" not in page
        assert "使用的记忆：" in page and "memory used" not in page
        assert "Noted." not in page


async def test_the_chinese_event_and_status_pages_translate_their_values(tmp_path: Path) -> None:
    async with web_app(tmp_path) as (_app, host, client):
        world = World(host, client)
        await world.fill()
        card = await world.event("spring sale")
        page = (await client.get(f"/memory/events/{card.id}?lang=zh")).text
        facts = page[page.index('<dl class="facts">') : page.index("</dl>")]
        for english in ("planned", "routine", "occurred", "relative", "explicit", ">day<"):
            assert english not in facts, english
        assert "日常" in facts
        status = (await client.get("/memory/?lang=zh")).text
        assert "kind_graph_projection" not in status and ">graph_projection<" not in status


async def test_the_chinese_import_page_translates_source_format_and_reasons(
    tmp_path: Path,
) -> None:
    async with web_app(tmp_path) as (_app, host, client):
        text = "- I prefer tea to coffee.\n- My dentist is Dr. Lee.\n"
        answer = await post(client, "/memory/import", data={"text": text, "format": "auto"})
        assert answer.status_code == 303, answer.text
        await quiet(host)
        page = (await client.get(str(answer.headers["location"]) + "&lang=zh")).text
        assert "来自 未知来源 的导入" in page and "unknown" not in page
        assert "<code>lines</code>" not in page
        assert "no overlapping memory" not in page and "没有重叠的记忆" in page


def test_a_chat_notes_times_are_in_the_readers_terms() -> None:
    """Plugins write notes with ISO times in them (``block … · 2026-12-02T02:45:28.45+00:00``)."""
    env = WebState(host=None).env  # type: ignore[arg-type]
    note = "block blk_1 · 2026-12-02T02:45:28.451795+00:00"
    shown = env.from_string("{{ note|times_in }}").render(note=note, lang="en")
    assert shown == "block blk_1 · 2 Dec 2026, 02:45"
    zh = env.from_string("{{ note|times_in }}").render(note=note, lang="zh")
    assert zh == "block blk_1 · 2026年12月2日 02:45"
