"""``event_states`` (migration 29: the columns event search reads of each candidate, kept
by triggers) holds what a rebuild from ``events`` would through every write path
(extraction, re-derivation, a person's forget, a purge of words, an import and its undo,
a space's deletion), and a search reads from it what it read from ``events``."""

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from test_event_term_index import POOLS, each_write_path, kiln_events
from test_offline_fallback import derived_offline

from stratagate_plugin.core.memory import StrataGate
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
    steps = []
    async for step in each_write_path(memory):
        kept, steps = await _assert_kept(memory), [*steps, step]
        if step == "forgotten":
            assert ("forgotten",) in {(row[4],) for row in kept}
        if step == "deleted":
            assert not any(row[1] == "other" for row in kept)
    assert steps[-1] == "deleted"
    await memory.close()


@pytest.mark.sqlite_only(reason="compared with FTS5's own ORDER BY rank (ts_rank on PostgreSQL)")
async def test_a_plain_querys_rows_are_those_fts5_would_find(
    memory: StrataGate, monkeypatch: pytest.MonkeyPatch
) -> None:
    await kiln_events(memory)
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
