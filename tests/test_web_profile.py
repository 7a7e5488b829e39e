"""The resident profile page: the twelve fields grouped, one-field saves (htmx and plain),
stale edits refused with the stored value shown, bad input refused, the change history."""

import re
from pathlib import Path
from typing import Any

from webapp import memory_of, post, web_app

from stratagate_plugin.core.profile.fields import FIELD_NAMES, FIELDS

HTMX = {"hx-request": "true"}
LIMITS = {field.name: field.limit for field in FIELDS}


def field_html(html: str, name: str) -> str:
    match = re.search(rf'<div class="profile-field[^"]*" id="field-{name}".*?</form>', html, re.S)
    assert match, f"no row for {name}"
    return match.group(0)


async def save(client: Any, name: str, value: str, revision: int | str, **kw: Any) -> Any:
    data = {"value": value, "revision": str(revision)}
    return await post(client, f"/memory/profile/{name}", data=data, **kw)


async def test_the_page_shows_the_twelve_fields_in_their_groups(tmp_path: Path) -> None:
    async with web_app(tmp_path) as (_app, host, client):
        await memory_of(host).profile.update("current_city", "Lisbon", "user_explicit")
        page = await client.get("/memory/profile")
        zh = await client.get("/memory/profile?lang=zh")
    assert page.status_code == 200
    html = page.text
    assert all(f'id="field-{name}"' in html for name in FIELD_NAMES)
    legends = re.findall(r"<legend>(.*?)</legend>", html)
    assert legends == [
        "Identity and language",
        "Interaction preferences",
        "Places",
        "About the user",
        "Other",
    ]
    city = field_html(html, "current_city")
    assert 'value="Lisbon"' in city and "revision 1" in city and "updated <time datetime=" in city
    assert "6 / 100" in city
    assert "never set" in field_html(html, "home_city")
    assert "Total 6 / 6000 characters" in html
    assert 'href="/static/memory-profile.css"' in html
    assert "身份与语言" in zh.text and "常用地址" in zh.text and "当前城市" in zh.text
    assert "总字符 6 / 6000" in zh.text and "修改记录" in zh.text


async def test_an_htmx_save_swaps_the_row_and_is_recorded_as_settings(tmp_path: Path) -> None:
    async with web_app(tmp_path) as (_app, host, client):
        response = await save(client, "user_preferred_name", "  Ada  ", 0, headers=HTMX)
        memory = memory_of(host)
        profile = await memory.profile.get()
        [change] = await memory.profile.history()
        again = await save(
            client,
            "user_preferred_name",
            "Ada",
            profile.revisions["user_preferred_name"],
            headers=HTMX,
        )
    assert response.status_code == 200
    assert response.text.lstrip().startswith('<div class="profile-field"')  # a fragment
    assert "<html" not in response.text
    assert 'value="Ada"' in response.text and "Saved." in response.text
    assert 'id="profile-history" hx-swap-oob="true"' in response.text
    assert 'id="profile-total" hx-swap-oob="true"' in response.text
    assert profile.values["user_preferred_name"] == "Ada"
    assert profile.revisions["user_preferred_name"] == change.id
    assert (change.field, change.old_value, change.new_value) == ("user_preferred_name", "", "Ada")
    assert change.source == "settings"
    assert again.status_code == 200 and "No change" in again.text


async def test_a_plain_form_post_redirects_back_to_the_field(tmp_path: Path) -> None:
    async with web_app(tmp_path) as (_app, host, client):
        response = await save(client, "long_term_goals", "Run a marathon", 0)
        page = await client.get(response.headers["location"])
        profile = await memory_of(host).profile.get()
    assert response.status_code == 303
    assert response.headers["location"].startswith("/memory/profile?space=")
    assert response.headers["location"].endswith("#field-long_term_goals")
    assert profile.values["long_term_goals"] == "Run a marathon"
    assert "Run a marathon</textarea>" in field_html(page.text, "long_term_goals")


async def test_a_stale_edit_is_refused_with_the_newer_value_beside_the_typed_one(
    tmp_path: Path,
) -> None:
    async with web_app(tmp_path) as (_app, host, client):
        memory = memory_of(host)
        await memory.profile.update("standing_instructions", "Be brief.", "settings")
        page = await client.get("/memory/profile")
        rendered = int(
            re.search(
                r'name="revision" value="(\d+)"', field_html(page.text, "standing_instructions")
            )[1]  # type: ignore[index]
        )
        await memory.profile.update(
            "standing_instructions", "Be brief; cite sources.", "agent_tool"
        )
        stale = await save(
            client, "standing_instructions", "Be brief. Use metric.", rendered, headers=HTMX
        )
        plain = await save(client, "standing_instructions", "Be brief. Use metric.", rendered)
        stored = await memory.profile.get()
        merged = await save(
            client,
            "standing_instructions",
            "Be brief; cite sources. Use metric.",
            stored.revisions["standing_instructions"],
            headers=HTMX,
        )
        final = await memory.profile.get()
    assert stale.status_code == 409
    row = stale.text
    assert "just changed elsewhere" in row
    assert '<pre class="stored-value">Be brief; cite sources.</pre>' in row
    assert '<pre class="typed-value">Be brief. Use metric.</pre>' in row
    assert "Be brief. Use metric.</textarea>" in row  # what was typed stays in the box
    assert f'name="revision" value="{stored.revisions["standing_instructions"]}"' in row
    assert plain.status_code == 409 and "<html" in plain.text
    assert '<pre class="stored-value">Be brief; cite sources.</pre>' in plain.text
    assert stored.values["standing_instructions"] == "Be brief; cite sources."
    assert merged.status_code == 200
    assert final.values["standing_instructions"] == "Be brief; cite sources. Use metric."


async def test_unknown_fields_bad_values_and_bad_revisions_are_refused(tmp_path: Path) -> None:
    async with web_app(tmp_path) as (_app, host, client):
        unknown = await save(client, "favourite_colour", "blue", 0)
        too_long = await save(client, "user_preferred_name", "x" * 101, 0, headers=HTMX)
        plain_long = await save(client, "user_preferred_name", "x" * 101, 0)
        bad_revision = await save(client, "user_preferred_name", "Ada", "latest")
        no_value = await post(client, "/memory/profile/user_preferred_name", data={"revision": "0"})
        refused = await memory_of(host).profile.get()
        for name in FIELD_NAMES[:-1]:  # every field full but the last: 6,300 with it
            if name != "home_city":
                await memory_of(host).profile.update(name, "y" * LIMITS[name], "settings")
        over_total = await save(client, "persistent_notes", "z" * 1200, 0, headers=HTMX)
        bad_offset = await client.get("/memory/profile?offset=soon")
        profile = await memory_of(host).profile.get()
    assert unknown.status_code == 404 and "favourite_colour" in unknown.text
    assert too_long.status_code == 400
    assert "at most 100 characters (got 101)" in too_long.text
    assert 'class="field-error"' in too_long.text and "x" * 101 in too_long.text
    assert plain_long.status_code == 400 and "<html" in plain_long.text
    assert bad_revision.status_code == 400 and "revision" in bad_revision.text
    assert no_value.status_code == 400
    assert over_total.status_code == 400 and "at most 6000 characters in all" in over_total.text
    assert bad_offset.status_code == 400
    assert (
        refused.values["user_preferred_name"] == ""
        and refused.revisions["user_preferred_name"] == 0
    )
    assert profile.values["persistent_notes"] == ""


async def test_values_and_history_are_escaped(tmp_path: Path) -> None:
    attack = "<script>alert(1)</script><img src=x onerror=alert(2)>"
    async with web_app(tmp_path) as (_app, _host, client):
        saved = await save(client, "persistent_notes", attack, 0, headers=HTMX)
        page = await client.get("/memory/profile")
    for html in (saved.text, page.text):
        assert "<script>alert" not in html and "<img src=x" not in html
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    history = page.text[page.text.index('id="profile-history"') :]
    assert "&lt;img src=x onerror=alert(2)&gt;" in history


async def test_the_history_is_newest_first_fifty_a_page(tmp_path: Path) -> None:
    async with web_app(tmp_path) as (_app, host, client):
        memory = memory_of(host)
        for n in range(55):
            await memory.profile.update("current_city", f"city-{n:02d}", "user_explicit")
        first = await client.get("/memory/profile")
        second = await client.get("/memory/profile?offset=50")
        zh = await client.get("/memory/profile?offset=50&lang=zh")
    rows = re.findall(r'<tr class="change" data-change="(\d+)">', first.text)
    assert len(rows) == 50 and rows == sorted(rows, key=int, reverse=True)
    assert "city-54" in first.text and "city-04" not in first.text.split("profile-history")[1]
    assert "offset=50#profile-history" in first.text and "Older" in first.text
    older = re.findall(r'<tr class="change" data-change="(\d+)">', second.text)
    assert len(older) == 5 and "offset=0#profile-history" in second.text
    assert "user&#39;s request" in first.text
    assert "用户明确要求" in zh.text and "第 2 页" in zh.text
