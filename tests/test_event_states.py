"""``event_states`` (migration 29: the columns event search reads of each candidate, kept
by triggers) holds what a rebuild from ``events`` would through every write path
(extraction, re-derivation, a person's forget, a purge of words, an import and its undo,
a space's deletion), and a search reads from it what it read from ``events``."""

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from imports import candidate, document, imported
from test_event_term_index import POOLS, _store
from test_offline_fallback import Echoing, derived_offline

from stratagate_plugin.core.memory import StrataGate
from stratagate_plugin.core.purge.words import Needles
from stratagate_plugin.core.store import event_search_rows, event_term_index
from stratagate_plugin.core.text.search_terms import query_tokens

COLUMNS = "pk, namespace, pool, id, status, superseded_by, updated_at"


async def _assert_kept(memory: StrataGate) -> list[tuple[Any, ...]]:
    def both(raw: sqlite3.Connection) -> tuple[list[Any], list[Any]]:
        kept = raw.execute(f"SELECT {COLUMNS} FROM event_states ORDER BY pk").fetchall()
        rebuilt = raw.execute(f"SELECT {COLUMNS} FROM events ORDER BY pk").fetchall()
        return [tuple(row) for row in kept], [tuple(row) for row in rebuilt]

    kept, rebuilt = await memory.db.read(both)
    assert kept == rebuilt
    return kept


async def test_every_write_path_keeps_the_states_as_a_rebuild_would(db_path: Path) -> None:
    memory = await derived_offline(db_path)  # sealing and extraction (offline model)
    assert await _assert_kept(memory)
    await memory.blocks.append_turn("other", "t", user="hello")
    await _store(memory, "other", "Lisbon kiln notes", "kiln kiln glaze")
    await _assert_kept(memory)
    memory.model = Echoing()
    await memory.derivation.rederive_offline()  # old cards removed, the model's written
    await _assert_kept(memory)
    some = (await memory.events.cards("ns"))[0]
    await memory.gate.forget_event(some.id)
    assert ("forgotten",) in {(row[4],) for row in await _assert_kept(memory)}
    await memory.purge.words(Needles(["Lisbon"]))
    await _assert_kept(memory)
    batch = await imported(memory, document(candidate("Loves sourdough baking on Sundays")))
    await _assert_kept(memory)
    await memory.imports.undo(batch.id)
    await _assert_kept(memory)
    await memory.purge.delete_space("other")
    assert not any(row[1] == "other" for row in await _assert_kept(memory))
    await memory.close()


async def test_a_plain_querys_rows_are_those_fts5_would_find(
    memory: StrataGate, monkeypatch: pytest.MonkeyPatch
) -> None:
    await memory.blocks.append_turn("ns", "t", user="hello")
    await _store(memory, "ns", *[f"kiln glaze {n}" for n in range(12)], "oven", "kiln oven")
    await _store(memory, "ns", "kiln agent", pool="agent")
    await memory.db.write(
        lambda raw: raw.execute("UPDATE events SET status = 'forgotten' WHERE pk % 3 = 1")
    )
    tokens = query_tokens("kiln glaze oven")

    def candidates(raw: sqlite3.Connection) -> list[dict[str, Any]]:
        found = event_search_rows.lexical_rows(
            raw, "ns", POOLS, tokens, 5, event_search_rows.SEARCH_COLUMNS
        )
        return sorted((dict(row) for row in found), key=lambda row: row["pk"])

    indexed = await memory.db.read(candidates)
    assert len(indexed) == 6
    with monkeypatch.context() as patched:
        patched.setattr(event_term_index, "has_index", lambda raw: False)
        assert await memory.db.read(candidates) == indexed
