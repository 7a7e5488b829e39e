"""An import's source block is provenance, not conversation (issue 27: ``search tennis``
returned a whole mem0 file as one hit). It is not raw-searchable: its words are found
through the events made from it, and a forgotten event's words are found nowhere."""

import json

from imports import NS, imported

from stratagate_plugin.core.memory import StrataGate

MEM0 = json.dumps(
    {
        "results": [
            {"id": "m1", "memory": "Plays tennis on Saturday mornings", "created_at": "2025-01-02"},
            {"id": "m2", "memory": "Drinks green tea every afternoon", "created_at": "2025-01-03"},
        ]
    }
)


async def test_the_source_block_is_not_a_raw_hit(memory: StrataGate) -> None:
    batch = await imported(memory, MEM0)
    assert len(batch.event_ids) == 2
    assert await memory.retrieval.search_raw(NS, "tennis") == []
    channels = await memory.retrieval.channel_rankings(NS, "tennis")
    assert channels["raw"] == [] and channels["block"] == []
    [event] = await memory.events.search(NS, "tennis")
    assert "tennis" in event.card.summary


async def test_a_forgotten_events_words_are_not_found_through_its_source(
    memory: StrataGate,
) -> None:
    batch = await imported(memory, MEM0)
    cards = [await memory.events.get(event_id) for event_id in batch.event_ids]
    [tennis] = [card.id for card in cards if "tennis" in card.summary]
    assert await memory.retrieval.retrieve(NS, "tennis") != []  # through the live event
    await memory.gate.forget_event(tennis)
    assert await memory.retrieval.retrieve(NS, "tennis") == []
    assert (
        await memory.retrieval.retrieve(NS, "green tea") != []
    )  # the other event still leads there
