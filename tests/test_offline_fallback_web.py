"""The jobs page lists blocks derived offline because the model failed, with the model's
error, and its button (a same-origin POST) runs them on the model again (issue 31)."""

import html
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from test_offline_fallback import STATEMENTS, AlwaysFailing, Echoing
from test_web_blocks import derive, runtime_of

from stratagate_plugin.core.llm.base import ModelAuthError, ModelOutputError
from tests.webapp import memory_of, post, web_app, worker_on_request

GARBAGE = "the reply contained no tool call and no JSON object"


async def test_the_jobs_page_lists_offline_blocks_and_reruns_them_on_the_model(
    tmp_path: Path,
) -> None:
    async with web_app(tmp_path) as (_, host, client):
        memory, space = memory_of(host), runtime_of(host).default_space()
        await worker_on_request(host)  # no pass of the worker's but those asked for
        await memory.spaces.set_block_turn_size(space, 1)
        memory.model = AlwaysFailing(ModelOutputError(GARBAGE))
        for i, text in enumerate(STATEMENTS[:2]):
            await memory.blocks.append_turn(
                space, "web", user=text, assistant="ok", receipt_id=f"w{i}"
            )
        await derive(host)
        page = html.unescape((await client.get(f"/memory/jobs?space={space}")).text)
        assert "Derived offline: 2 block(s)" in page and page.count(GARBAGE) >= 2
        card = (await memory.events.cards(space))[0]
        shown = html.unescape((await client.get(f"/memory/events/{card.id}?space={space}")).text)
        assert "Derived by" in shown and "the offline model, after the model failed" in shown
        assert GARBAGE in shown  # the model's error, on the card's own page
        assert "misconfigured" not in page
        memory.model = Echoing()
        refused = await client.post(f"/memory/jobs/rederive-offline?space={space}",
                                    headers={"origin": "https://evil.example"})  # fmt: skip
        assert (
            refused.status_code == 403 and (await memory.derivation.offline_derived(space)).blocks
        )
        response = await post(client, f"/memory/jobs/rederive-offline?space={space}")
        assert response.status_code == 303
        query = parse_qs(urlsplit(response.headers["location"]).query)
        assert (query["asked"], query["done"], query["failed"]) == (["2"], ["2"], ["0"])
        page = html.unescape((await client.get(response.headers["location"])).text)
        assert "2 of 2 block(s) derived again by the model" in page
        assert "Derived offline:" not in page
        assert {e.derived_by for e in await memory.events.cards(space)} == {"good-model"}


async def test_a_misconfigured_endpoint_is_said_plainly_on_the_jobs_page(tmp_path: Path) -> None:
    async with web_app(tmp_path) as (_, host, client):
        memory, space = memory_of(host), runtime_of(host).default_space()
        await worker_on_request(host)  # no pass of the worker's but those asked for
        await memory.spaces.set_block_turn_size(space, 1)
        memory.model = AlwaysFailing(ModelAuthError("401: the API key was rejected"))
        await memory.blocks.append_turn(
            space, "web", user=STATEMENTS[0], assistant="ok", receipt_id="a"
        )
        await derive(host)
        page = html.unescape((await client.get(f"/memory/jobs?space={space}")).text)
        assert "The model endpoint is misconfigured" in page and "ModelAuthError: 401" in page
        assert await memory.events.cards(space)  # memory filled all the same
