"""Stored event documents read through the process's parsed-documents cache (a query of many
terms, as recall's) give exactly what a fresh read gives, after every write path and when a
row is rewritten under the same stamp; a purge empties the cache."""

import sqlite3
from pathlib import Path

from test_event_term_index import each_write_path
from test_offline_fallback import derived_offline

from stratagate_plugin.core.events.documents import EVENT_RULES
from stratagate_plugin.core.events.storage import Document
from stratagate_plugin.core.memory import StrataGate
from stratagate_plugin.core.purge.words import Needles
from stratagate_plugin.core.store import event_documents
from stratagate_plugin.core.store.event_documents import ParsedDocuments
from stratagate_plugin.core.text.search_terms import query_tokens

VERSION = EVENT_RULES.document_version


async def _read_both(
    memory: StrataGate, cache: ParsedDocuments, tokens: list[str]
) -> tuple[dict[str, Document], dict[str, Document]]:
    """Every event's stored documents for ``tokens``: through ``cache``, and read afresh."""

    def read(raw: sqlite3.Connection) -> tuple[dict[str, Document], dict[str, Document]]:
        cursor = raw.cursor()
        cursor.row_factory = sqlite3.Row
        rows = cursor.execute("SELECT * FROM events ORDER BY pk").fetchall()
        cached = event_documents.stored_documents(raw, rows, tokens, VERSION, cache)
        return cached, event_documents.stored_documents(raw, rows, tokens, VERSION)

    return await memory.db.read(read)


def _engine_cache(memory: StrataGate) -> ParsedDocuments:
    return memory._parts.storage.events.documents  # type: ignore[attr-defined,no-any-return]


async def test_the_cache_reads_what_a_fresh_read_does_after_every_write_path(
    db_path: Path,
) -> None:
    memory = await derived_offline(db_path)
    cache = ParsedDocuments()
    titles = " ".join(card.title for card in await memory.events.cards("ns"))
    tokens = query_tokens(f"{titles} Lisbon kiln glaze sourdough baking")
    many = tokens + [f"w:pad{i}" for i in range(event_documents.EXTRACT_TOKENS)]
    steps = []
    async for step in each_write_path(memory):
        for asked in (tokens[:3], many):
            cached, fresh = await _read_both(memory, cache, asked)
            assert cached == fresh, step
        steps.append((step, len(fresh)))
    assert len(cache) > 0 and any(count for _, count in steps)
    assert [step for step, _ in steps][-1] == "deleted"
    await memory.close()


async def test_a_document_rewritten_under_the_same_stamp_is_parsed_again(
    memory: StrataGate,
) -> None:
    """A kept parse is found by the stored text itself, so an edit that left ``updated_at``
    (a fixed clock, two edits in one tick) still reads the new counts."""
    await memory.blocks.append_turn("ns", "t", user="hello")
    await memory.remember.save("ns", "t", "Ana glazes the kiln pots on Fridays")
    cache = ParsedDocuments()
    kiln, pots, ferry = asked = query_tokens("kiln pots ferry")
    tokens = asked + [f"w:pad{i}" for i in range(event_documents.EXTRACT_TOKENS)]
    before, _ = await _read_both(memory, cache, tokens)
    assert len(cache) == 1
    [(event_id, (counts, _length))] = before.items()
    assert set(counts) == {kiln, pots}

    def rewrite(raw: sqlite3.Connection) -> None:  # same stamp, other words
        raw.execute(
            "UPDATE event_documents SET counts_json = ? WHERE pk = "
            "(SELECT pk FROM events WHERE id = ?)",
            (f'{{"{ferry}": 2, "{kiln}": 1}}', event_id),
        )

    await memory.db.write(rewrite)
    after, fresh = await _read_both(memory, cache, tokens)
    assert after == fresh
    assert after[event_id][0] == {ferry: 2, kiln: 1}


async def test_searches_fill_the_engine_cache_and_a_purge_empties_it(
    memory: StrataGate,
) -> None:
    await memory.blocks.append_turn("ns", "t", user="hello")
    await memory.remember.save("ns", "t", "Ana glazes the kiln pots on Fridays in Lisbon")
    await memory.remember.save("ns", "t", "The ferry to Lisbon leaves at nine")
    cache = _engine_cache(memory)
    few = await memory.events.search("ns", "Lisbon kiln")
    assert len(few) == 2 and len(cache) == 0  # a few words: SQL extracts their counts
    long = "Lisbon kiln " + " ".join(f"word{n}" for n in range(event_documents.EXTRACT_TOKENS))
    first = await memory.events.search("ns", long)
    assert len(cache) == 2
    again = await memory.events.search("ns", long)
    assert [(hit.card.id, hit.rank_score) for hit in again] == [
        (hit.card.id, hit.rank_score) for hit in first
    ]
    await memory.purge.words(Needles(["Lisbon"]))
    assert len(cache) == 0
    assert await memory.events.search("ns", "Lisbon") == []
