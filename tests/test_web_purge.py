"""Purging from the web app: the plan on a confirmation page, then the purge; a cross-site,
replayed or stale confirm changes nothing (issue 25)."""

import re
from pathlib import Path

from tests.test_web_events import derived
from tests.webapp import memory_of, post, web_app

SECRET = "QX7734ZR"
TURNS = [
    ("My mother lives in Montpellier and visits every spring.", "Noted."),
    (f"My licence plate is {SECRET}, please remember it.", "Noted."),
    ("I hate cilantro in my tacos.", "Noted."),
]


def confirm_fields(page: str) -> dict[str, str]:
    token = re.search(r'name="token" value="([^"]+)"', page)
    print_ = re.search(r'name="fingerprint" value="([^"]+)"', page)
    assert token and print_, page
    return {"token": token.group(1), "fingerprint": print_.group(1)}


async def stored(memory: object) -> list[str]:
    rows = await memory.db.read(  # type: ignore[attr-defined]
        lambda raw: raw.execute("SELECT content FROM messages ORDER BY pk").fetchall()
    )
    return [row[0] for row in rows]


async def filled(host: object) -> tuple[object, str]:
    memory = memory_of(host)
    space = host.pm.get_plugin("stratagate-memory").runtime.default_space()  # type: ignore[attr-defined]
    for user, assistant in TURNS:
        await memory.blocks.append_turn(space, "monday", user=user, assistant=assistant)
    await memory.blocks.seal_tail(space, "monday")
    await derived(memory, space, 3)
    return memory, space


async def test_an_events_purge_shows_its_plan_then_erases_only_its_words(tmp_path: Path) -> None:
    async with web_app(tmp_path) as (_app, host, client):
        memory, space = await filled(host)
        [card] = [c for c in await memory.events.cards(space) if SECRET in c.title]
        page = (await client.get(f"/memory/events/{card.id}")).text
        assert 'action="/memory/purge/plan' in page and f'value="{card.id}"' in page
        plan = await post(client, "/memory/purge/plan", data={"event_id": card.id})
        assert plan.status_code == 200 and SECRET not in plan.text and "[…]" in plan.text
        assert card.id in plan.text and "Purge for good" in plan.text
        before = await stored(memory)
        assert any(SECRET in text for text in before)  # nothing changed by the plan

        fields = confirm_fields(plan.text)
        refused = await client.post(
            "/memory/purge/confirm", data=fields, headers={"sec-fetch-site": "cross-site"}
        )
        assert refused.status_code == 403 and await stored(memory) == before
        stale = await post(client, "/memory/purge/confirm", data={**fields, "fingerprint": "0"})
        assert stale.status_code == 409 and await stored(memory) == before

        replan = await post(client, "/memory/purge/plan", data={"event_id": card.id})
        done = await post(client, "/memory/purge/confirm", data=confirm_fields(replan.text))
        assert done.status_code == 200 and "purged the words from" in done.text
        after = await stored(memory)
        assert not any(SECRET in text for text in after)
        assert TURNS[0][0] in after and TURNS[2][0] in after
        again = await post(client, "/memory/purge/confirm", data=confirm_fields(replan.text))
        assert again.status_code == 409  # a token is used once


async def test_the_raw_page_purges_a_text(tmp_path: Path) -> None:
    async with web_app(tmp_path) as (_app, host, client):
        memory, _space = await filled(host)
        raw = (await client.get("/memory/raw")).text
        assert 'action="/memory/purge/plan' in raw and 'name="text"' in raw
        nowhere = await post(client, "/memory/purge/plan", data={"text": "never-said-words"})
        assert "nothing to purge" in nowhere.text and 'name="token"' not in nowhere.text
        plan = await post(client, "/memory/purge/plan", data={"text": SECRET.lower()})
        assert SECRET.lower() not in plan.text.lower()
        done = await post(client, "/memory/purge/confirm", data=confirm_fields(plan.text))
        assert done.status_code == 200
        assert not any(SECRET in text for text in await stored(memory))
        short = await post(client, "/memory/purge/plan", data={"text": "ab"})
        assert short.status_code == 400


async def test_the_settings_page_deletes_the_space_after_its_plan(tmp_path: Path) -> None:
    async with web_app(tmp_path) as (_app, host, client):
        memory, space = await filled(host)
        settings = (await client.get("/memory/settings")).text
        assert 'action="/memory/spaces/delete/plan' in settings and f'value="{space}"' in settings
        plan = await post(client, "/memory/spaces/delete/plan", data={"namespace": space})
        assert plan.status_code == 200 and "messages" in plan.text and SECRET not in plan.text
        assert await memory.spaces.names() == [space]
        fields = confirm_fields(plan.text)
        stale = await post(
            client, "/memory/spaces/delete/confirm", data={**fields, "fingerprint": "0"}
        )
        assert stale.status_code == 409 and await memory.spaces.names() == [space]
        replan = await post(client, "/memory/spaces/delete/plan", data={"namespace": space})
        done = await post(client, "/memory/spaces/delete/confirm", data=confirm_fields(replan.text))
        assert done.status_code == 200 and "receipt act_" in done.text
        assert space not in await memory.spaces.names()
        assert not any(SECRET in text for text in await stored(memory))
        missing = await post(client, "/memory/spaces/delete/plan", data={"namespace": "sg:none"})
        assert missing.status_code == 404
