"""A commit is decided on one view of the job and written only if that view still holds:
whatever happens in between (a target forgotten, the words purged) is seen by the commit
as it would have been by the one transaction it was before."""

from collections.abc import Awaitable, Callable

import pytest
from imports import COFFEE, NS, TEA, analysed, candidate, decision, document, seed

from stratagate_plugin.core.importer.storage import CommitView
from stratagate_plugin.core.llm.base import ScriptedModel
from stratagate_plugin.core.memory import StrataGate
from stratagate_plugin.core.purge.words import Needles

SECRET = "XK-44117"


def meanwhile(
    memory: StrataGate, monkeypatch: pytest.MonkeyPatch, act: Callable[[], Awaitable[object]]
) -> list[CommitView]:
    """``act`` runs once, right after the commit's first view was read."""
    store = memory.storage.imports
    read, views = store.commit_view, []

    async def view_then_act(job_id: str) -> CommitView:
        view = await read(job_id)
        views.append(view)
        if len(views) == 1:
            await act()
        return view

    monkeypatch.setattr(store, "commit_view", view_then_act)
    return views


async def test_a_target_forgotten_meanwhile_makes_its_item_ignored(
    memory: StrataGate, monkeypatch: pytest.MonkeyPatch
) -> None:
    await seed(memory, "evt_tea", TEA)
    memory.model = ScriptedModel.of([decision("SUPERSEDE", ["evt_tea"])])
    job = await analysed(memory, document(candidate(COFFEE)))
    views = meanwhile(memory, monkeypatch, lambda: memory.curation.act("forget", "evt_tea"))
    batch = await memory.imports.commit(job.id)
    assert len(views) == 2 and views[0].live == {"evt_tea"} and views[1].live == set()
    assert batch.event_ids == [] and batch.ignored_count == 1
    assert (await memory.events.get("evt_tea")).status == "forgotten"


async def test_words_purged_meanwhile_are_not_written_back(
    memory: StrataGate, monkeypatch: pytest.MonkeyPatch
) -> None:
    job = await analysed(memory, document(candidate(f"My plate is {SECRET}")))
    words = Needles([SECRET])
    views = meanwhile(memory, monkeypatch, lambda: memory.purge.words(words))
    batch = await memory.imports.commit(job.id)
    assert len(views) == 2 and len(batch.event_ids) == 1
    [card] = [await memory.events.get(i) for i in batch.event_ids]
    assert SECRET not in card.title and card.namespace == NS
    assert {k: v for k, v in (await memory.purge.check(words)).items() if v} == {}
