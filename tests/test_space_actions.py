"""Every web action names its memory space and acts only on an item of that space.

``?space=`` used to choose only what a page shows: a page opened on space A could pin,
forget, correct, expand, retry, resolve, commit or undo an item of space B (303, redirect
to B). Now an id of another space is refused as unknown (404, one line, nothing changed),
as the MCP gate refuses it; the same action naming the item's own space goes through.
"""

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit

import httpx
import pytest
from import_data import KNOWN, export_text

from stratagate_plugin.core.importer.jobs import ANALYSING
from tests.webapp import memory_of, post, web_app, worker_on_request

OTHER = "sg:other-space"
TURNS = [
    ("We decided to move the spring sale to 14 March.", "Noted."),
    ("The glaze supplier raised prices by 12% last week.", "That affects margins."),
]


class Spaces:
    """The app's default space (``here``) and ``OTHER`` holding a derived block, its
    events, a job and a committed import batch."""

    def __init__(self, host: Any, client: httpx.AsyncClient) -> None:
        self.host, self.client, self.memory = host, client, memory_of(host)
        self.here = host.pm.get_plugin("stratagate-memory").runtime.default_space()

    async def fill(self) -> None:
        await worker_on_request(self.host)  # nothing changes behind the test's back
        await self.memory.blocks.append_turn(
            self.here, "t", user="Our office is in Porto.", assistant="ok"
        )
        for user, assistant in TURNS:
            await self.memory.blocks.append_turn(OTHER, "t", user=user, assistant=assistant)
        await self.memory.blocks.seal_tail(OTHER, "t")
        for _ in range(400):  # the plugin's worker may hold the job process_pending would run
            await self.memory.derivation.process_pending()
            if len(await self.memory.events.cards(OTHER)) >= 2:
                break
            await asyncio.sleep(0.025)
        job = await self.memory.imports.preview(OTHER, export_text(KNOWN, source="claude"), "auto")
        for _ in range(400):
            if (await self.memory.imports.advance(job.id)).status not in ANALYSING:
                break
            await asyncio.sleep(0.025)  # the plugin's worker holds it
        self.batch = await self.memory.imports.commit(job.id, take_proposals=True)
        self.pending = await self.memory.imports.preview(OTHER, export_text(KNOWN[:1]), "auto")

    async def event_ids(self) -> list[str]:
        return [card.id for card in await self.memory.events.cards(OTHER)]

    async def state(self) -> Any:
        """Everything an action could change in ``OTHER``."""
        cards = await self.memory.events.cards(OTHER, include_hidden=True)
        blocks = await self.memory.blocks.views(OTHER)
        jobs = await self.memory.derivation.list_jobs(OTHER)
        batches = await self.memory.imports.batches(OTHER)
        return (
            [(c.id, c.status, c.pinned, c.temporal) for c in cards],
            [(b.block.id, b.block.pointer_anchor_level, b.block.last_lifted_by) for b in blocks],
            [(j.id, j.status, j.attempts) for j in jobs],
            [(b.id, b.status) for b in batches],
            [a.id for c in cards for a in await self.memory.curation.actions(c.id)],
        )


@pytest.fixture
async def spaces(tmp_path: Path) -> AsyncIterator[Spaces]:
    async with web_app(tmp_path) as (_, host, client):
        found = Spaces(host, client)
        await found.fill()
        yield found


def in_space(url: str, space: str | None) -> str:
    return url if space is None else f"{url}?space={quote(space, safe='')}"


async def refused_everywhere_but_home(spaces: Spaces, url: str, **form: str) -> None:
    """``url`` (an action on an item of ``OTHER``) is a one-line 404 from the default
    space, named or not, and changes nothing."""
    before = await spaces.state()
    for space in (spaces.here, None):
        answer = await post(spaces.client, in_space(url, space), data=form)
        assert answer.status_code == 404, (url, space, answer.status_code)
        assert "memory space" in answer.text, answer.text
    assert await spaces.state() == before


async def test_event_actions_of_another_space_are_refused(spaces: Spaces) -> None:
    event_id = (await spaces.event_ids())[0]
    for kind in ("pin", "unpin", "forget", "restore"):
        await refused_everywhere_but_home(spaces, f"/memory/events/{event_id}/{kind}")
    await refused_everywhere_but_home(
        spaces, f"/memory/events/{event_id}/correct", title="Sale moved", summary="Moved."
    )
    pinned = await post(spaces.client, in_space(f"/memory/events/{event_id}/pin", OTHER))
    assert pinned.status_code == 303
    assert parse_qs(urlsplit(pinned.headers["location"]).query)["space"] == [OTHER]
    assert (await spaces.memory.events.get(event_id)).pinned


async def test_resolving_a_conflict_of_another_space_is_refused(spaces: Spaces) -> None:
    first, second = (await spaces.event_ids())[:2]
    form = {"event_id": first, "other_id": second, "action": "keep_both"}
    await refused_everywhere_but_home(spaces, "/memory/conflicts/resolve", **form)
    named = await post(spaces.client, in_space("/memory/conflicts/resolve", OTHER), data=form)
    assert named.status_code == 400 and "memory space" not in named.text  # the engine's answer


async def test_block_actions_of_another_space_are_refused(spaces: Spaces) -> None:
    [view] = await spaces.memory.blocks.views(OTHER, "t")
    url = f"/memory/blocks/{view.block.id}"
    await refused_everywhere_but_home(spaces, f"{url}/expand", level="L4")
    await refused_everywhere_but_home(spaces, f"{url}/retry")
    lifted = await post(spaces.client, in_space(f"{url}/expand", OTHER), data={"level": "L4"})
    assert lifted.status_code == 303
    assert (await spaces.memory.blocks.view(view.block.id)).block.last_lifted_by == "user"


async def test_job_and_import_actions_of_another_space_are_refused(spaces: Spaces) -> None:
    job = (await spaces.memory.derivation.list_jobs(OTHER))[0]
    await refused_everywhere_but_home(spaces, f"/memory/jobs/{job.id}/retry")
    await refused_everywhere_but_home(spaces, f"/memory/import/{spaces.pending.id}/commit")
    await refused_everywhere_but_home(spaces, f"/memory/import/batches/{spaces.batch.id}/undo")
    undone = await post(
        spaces.client, in_space(f"/memory/import/batches/{spaces.batch.id}/undo", OTHER)
    )
    assert undone.status_code == 303
    assert (await spaces.memory.imports.batch(spaces.batch.id)).status == "undone"


async def test_an_event_page_opened_on_another_space_moves_to_the_events_own(
    spaces: Spaces,
) -> None:
    event_id = (await spaces.event_ids())[0]
    moved = await spaces.client.get(in_space(f"/memory/events/{event_id}", spaces.here))
    assert moved.status_code == 303
    assert parse_qs(urlsplit(moved.headers["location"]).query)["space"] == [OTHER]
    page = (await spaces.client.get(moved.headers["location"])).text
    named = f"/memory/events/{event_id}/pin?space={quote(OTHER, safe='')}"
    assert f'action="{named}"' in page


async def test_forms_on_the_pages_name_their_space(spaces: Spaces) -> None:
    """The block card and the conflict form post to ``…?space=`` of the page they are on."""
    [view] = await spaces.memory.blocks.views(OTHER, "t")
    rail = await spaces.client.get("/memory/blocks", params={"space": OTHER, "thread": "t"})
    expand = f"/memory/blocks/{view.block.id}/expand?space={quote(OTHER, safe='')}"
    assert f'action="{expand}"' in rail.text
