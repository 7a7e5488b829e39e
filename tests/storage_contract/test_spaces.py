"""``SpacesStorage``: the spaces with their counts, their names, a block setting written."""

from dataclasses import dataclass

from stratagate_plugin.core.memory import StrataGate

NOW = "2026-01-01T00:00:00+00:00"


@dataclass(frozen=True)
class Defaults:
    block_turn_size: int = 2
    block_decay_lambda: float = 0.3


async def test_spaces_are_listed_most_recently_used_first_with_counts(engine: StrataGate) -> None:
    store = engine.storage.spaces
    assert await store.summaries() == [] and await store.names() == []
    await engine.blocks.append_turn("older", "t", user="One.", assistant="ok")
    await engine.blocks.append_turn("newer", "a", user="Two.", assistant="ok")
    await engine.blocks.append_turn("newer", "b", user="Three.", assistant="ok")
    await engine.blocks.append_turn("newer", "b", user="Four.", assistant="ok")
    assert await store.names() == ["newer", "older"]
    newer, older = await store.summaries()
    assert (newer.namespace, newer.threads, newer.messages, newer.blocks) == ("newer", 2, 6, 1)
    assert newer.open_messages == 2 and newer.events == 0
    assert (older.namespace, older.threads, older.messages, older.blocks) == ("older", 1, 2, 0)
    assert [s.namespace for s in await store.summaries("older")] == ["older"]
    assert await store.summaries("unknown") == []


async def test_a_setting_is_written_and_makes_the_space_if_new(engine: StrataGate) -> None:
    store = engine.storage.spaces
    await store.set_setting("fresh", "block_decay_lambda", 0.5, Defaults(), NOW)
    assert await store.names() == ["fresh"]
    await engine.blocks.append_turn("fresh", "t", user="Hello.", assistant="ok")
    rows = await engine.storage.blocks.rail("fresh", "t", lambda total: (1, total))
    assert rows.decay_lambda == 0.5 and rows.tail.capacity == 2
    await store.set_setting("fresh", "block_turn_size", 5, Defaults(), NOW)
    await store.set_setting("fresh", "block_turn_size", 5, Defaults(), NOW)
    rows = await engine.storage.blocks.rail("fresh", "t", lambda total: (1, total))
    assert rows.tail.capacity == 5 and rows.decay_lambda == 0.5
    assert [s.namespace for s in await store.summaries()] == ["fresh"]
