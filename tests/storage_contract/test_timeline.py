"""``TimelineStorage``: pages newest first, an event's story, conflict pairs."""

import pytest

from stratagate_plugin.core.errors import NotFound
from stratagate_plugin.core.memory import StrataGate
from stratagate_plugin.core.timeline.filters import TimelineFilter

NS = "contract"


async def _remember(engine: StrataGate, *texts: str) -> list[str]:
    ids = []
    for text in texts:
        ids.append((await engine.remember.save(NS, "t", text)).event_id)
    return ids


async def test_a_page_is_newest_first_with_chronology_and_the_current_turn(
    engine: StrataGate,
) -> None:
    older, newer = await _remember(engine, "The kiln fires on Fridays.", "Ana lives in Porto.")
    page = await engine.storage.timeline.page(TimelineFilter(namespace=NS), 0, 10)
    assert [card.id for card, _ in page.cards] == [newer, older]
    assert all(chronology for _, chronology in page.cards)
    assert page.has_more is False and page.current_turn >= 0
    first = await engine.storage.timeline.page(TimelineFilter(namespace=NS), 0, 1)
    assert [card.id for card, _ in first.cards] == [newer] and first.has_more is True


async def test_a_story_has_the_event_its_sources_and_its_versions(engine: StrataGate) -> None:
    [event_id] = await _remember(engine, "Biscuit is a beagle.")
    story = await engine.storage.timeline.story(event_id)
    assert story.details.card.id == event_id
    assert [v.id for v in story.versions] == [event_id]
    with pytest.raises(NotFound):
        await engine.storage.timeline.story("evt_unknown")


async def test_conflict_pairs_are_newest_first_with_both_cards(engine: StrataGate) -> None:
    await _remember(engine, "I use Obsidian for my notes.")
    assert (await engine.storage.timeline.conflicts(NS, 0, 20)).pairs == []
    said_before = "Remember that the studio opens at 10am on Saturdays."
    await engine.blocks.append_turn(NS, "t", user=said_before, assistant="Noted.")
    await engine.blocks.seal_tail(NS, "t")
    await engine.derivation.process_pending()
    [older] = [c.id for c in await engine.events.cards(NS) if "10am" in c.title]
    said = "The studio opens at 11am on Saturdays, not 10am."
    remembered = await engine.remember.save(NS, "t", said)
    assert remembered.action == "CONFLICT_MARKED"
    found = await engine.storage.timeline.conflicts(NS, 0, 20)
    assert found.pairs == [(remembered.event_id, older)] and found.has_more is False
    assert set(found.cards) == {remembered.event_id, older}
