"""The event channel's impact index stays what a rebuild from ``event_fts`` would make through
every write path (extraction, re-derivation, a person's forget, a purge of words, an import
and its undo, a space's deletion), on either backend, and ranks exactly as FTS5's
``ORDER BY rank`` does."""

import sqlite3
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from cards import event_card
from imports import candidate, document, imported
from test_offline_fallback import Echoing, derived_offline

from stratagate_plugin.core.events.documents import EVENT_RULES
from stratagate_plugin.core.memory import StrataGate
from stratagate_plugin.core.purge.words import Needles
from stratagate_plugin.core.store import (
    event_chunks,
    event_rows,
    event_search_rows,
    event_term_index,
    gate_rows,
    search_index,
)
from stratagate_plugin.core.store.term_index import fts_terms
from stratagate_plugin.core.text.search_terms import fts_match_any, query_tokens

AGAINST_FTS5 = pytest.mark.sqlite_only(reason="compared with FTS5's own ORDER BY rank")

POOLS = ("conversation", "agent")


def _snapshot(raw: sqlite3.Connection) -> dict[str, Any]:
    postings = event_term_index.stored_postings(raw)
    totals = [tuple(row) for row in raw.execute("SELECT rows, tokens FROM event_term_totals")]
    return {"postings": postings, "totals": totals, "term_rows": _term_rows(raw, postings)}


def _term_rows(raw: sqlite3.Connection, postings: list[tuple[Any, ...]]) -> dict[str, int]:
    """Each term's FTS rows as kept (SQLite's ``event_term_rows``), else as counted."""
    if event_term_index.current_version(raw) == event_term_index.CHUNKED_VERSION:
        return event_chunks.term_rows(raw)
    return dict(Counter(row[0] for row in postings))


def _recomputed(raw: sqlite3.Connection) -> dict[str, Any]:
    """What ``event_term_index.rebuild`` would make of the FTS rows now, computed here."""
    rows = raw.execute(
        "SELECT c.id, c.c0, e.namespace, e.pool FROM event_fts_content c "
        "LEFT JOIN events e ON e.pk = c.id"
    ).fetchall()
    documents = [(int(pk), fts_terms(text or ""), space, pool) for pk, text, space, pool in rows]
    postings = [
        (term, pk, count, len(tokens), space, pool)
        for pk, tokens, space, pool in documents
        for term, count in Counter(tokens).items()
    ]
    tokens = sum(len(document[1]) for document in documents)
    term_rows = dict(Counter(row[0] for row in postings))
    return {
        "postings": sorted(postings),
        "totals": [(len(documents), tokens)],
        "term_rows": term_rows,
    }


async def stored_and_recomputed(memory: StrataGate) -> tuple[dict[str, Any], dict[str, Any]]:
    def both(raw: sqlite3.Connection) -> tuple[dict[str, Any], dict[str, Any]]:
        assert event_term_index.has_index(raw)
        return _snapshot(raw), _recomputed(raw)

    return await memory.db.read(both)


async def _assert_true(memory: StrataGate) -> dict[str, Any]:
    stored, rebuilt = await stored_and_recomputed(memory)
    assert stored == rebuilt
    fts_rows = await memory.db.read(
        lambda raw: raw.execute("SELECT count(*) FROM event_fts").fetchone()[0]
    )
    assert stored["totals"][0][0] == fts_rows
    return stored


async def _store(memory: StrataGate, space: str, *titles: str, pool: str = "conversation") -> None:
    def unit(raw: sqlite3.Connection) -> None:
        for n, title in enumerate(titles):
            event = event_card(
                f"{space}-{pool}-{n}", title=title, summary=title, namespace=space, pool=pool
            )
            event_rows.insert_event(raw, event, EVENT_RULES)

    await memory.db.write(unit)


async def kiln_events(memory: StrataGate) -> None:
    """Fourteen conversation events sharing "kiln", "glaze" and "oven" unevenly, one agent's."""
    await memory.blocks.append_turn("ns", "t", user="hello")
    await _store(memory, "ns", *[f"kiln glaze {n}" for n in range(12)], "oven", "kiln oven")
    await _store(memory, "ns", "kiln agent", pool="agent")


def _terms(stored: dict[str, Any]) -> set[str]:
    return {row[0] for row in stored["postings"]}


async def each_write_path(memory: StrataGate) -> AsyncIterator[str]:
    """Every path that writes events, one at a time (what it did is yielded after it):
    extraction (done by the caller), storing in another space, re-derivation, a person's
    forget, a purge of words, an import and its undo, a space's deletion."""
    yield "extracted"
    await memory.blocks.append_turn("other", "t", user="hello")
    await _store(memory, "other", "Lisbon kiln notes", "kiln kiln glaze")
    yield "stored"
    memory.model = Echoing()
    await memory.derivation.rederive_offline()  # old cards removed, the model's written
    yield "rederived"
    some = (await memory.events.cards("ns"))[0]
    await memory.gate.forget_event(some.id)
    yield "forgotten"
    await memory.purge.words(Needles(["Lisbon"]))
    yield "purged"
    batch = await imported(memory, document(candidate("Loves sourdough baking on Sundays")))
    yield "imported"
    await memory.imports.undo(batch.id)
    yield "undone"
    await memory.purge.delete_space("other")
    yield "deleted"


async def test_every_write_path_keeps_the_index_as_a_rebuild_would(db_path: Path) -> None:
    memory = await derived_offline(db_path)  # sealing and extraction (offline model)
    steps = []
    async for step in each_write_path(memory):
        stored = await _assert_true(memory)
        terms, steps = _terms(stored), [*steps, step]
        if step in ("extracted", "purged", "imported", "undone"):
            assert ("w:lisbon" in terms) == (step == "extracted"), step
        if step in ("imported", "undone"):
            assert ("w:sourdough" in terms) == (step == "imported")
        if step == "deleted":
            assert not any(row[4] == "other" for row in stored["postings"])
    assert steps[-1] == "deleted"
    await memory.close()


def _fts_order(raw: sqlite3.Connection, terms: list[str], space: str, pool: str) -> list[int]:
    rows = raw.execute(
        "SELECT e.pk FROM event_fts f CROSS JOIN events e ON e.pk = f.rowid "
        "WHERE event_fts MATCH ? AND e.namespace = ? AND e.pool = ? ORDER BY f.rank",
        (fts_match_any(terms), space, pool),
    )
    return [row[0] for row in rows]


@AGAINST_FTS5
@pytest.mark.parametrize("query", ["kiln", "kiln glaze", "glaze kiln oven", "oven", "ash"])
async def test_the_index_ranks_as_fts5_does_ties_and_other_spaces_included(
    memory: StrataGate, query: str
) -> None:
    await memory.blocks.append_turn("ns", "t", user="hello")
    await memory.blocks.append_turn("other", "t", user="hello")
    same = ["kiln glaze"] * 4  # equal scores: FTS5 leaves them lowest rowid first
    await _store(memory, "ns", *same, "kiln kiln oven", "glaze", "oven ash kiln", "kiln")
    await _store(memory, "other", "kiln", "kiln glaze oven", "oven oven")
    await _store(memory, "ns", "kiln ash", "glaze oven", pool="agent")
    terms = query_tokens(query)

    def both(raw: sqlite3.Connection) -> tuple[dict[str, list[int]], dict[str, list[int]]]:
        fts = {pool: _fts_order(raw, terms, "ns", pool) for pool in POOLS}
        return fts, event_term_index.ranked_pks(raw, terms, "ns", POOLS)

    fts, ranked = await memory.db.read(both)
    assert ranked == fts and any(fts.values())


@AGAINST_FTS5
async def test_candidates_come_from_the_index_where_it_is_current(
    memory: StrataGate, monkeypatch: pytest.MonkeyPatch
) -> None:
    await kiln_events(memory)
    tokens = query_tokens("kiln glaze oven")

    def candidates(raw: sqlite3.Connection) -> list[int]:
        found = event_search_rows.lexical_rows(raw, "ns", POOLS, tokens, 5, "e.pk")
        return [row[0] for row in found]

    indexed = await memory.db.read(candidates)
    with monkeypatch.context() as patched:
        patched.setattr(event_term_index, "has_index", lambda raw: False)
        assert await memory.db.read(candidates) == indexed
    monkeypatch.setattr(search_index, "POSTING_BUDGET", 3)  # newest first
    monkeypatch.setattr(event_term_index, "NEWEST_PAGE", 2)  # read over several pages
    newest = await memory.db.read(candidates)
    monkeypatch.setattr(event_term_index, "has_index", lambda raw: False)
    assert await memory.db.read(candidates) == newest


async def test_a_new_tokenizer_rebuilds_the_index_with_the_fts_rows(db_path: Path) -> None:
    memory = await StrataGate.open(db_path)
    await memory.blocks.append_turn("ns", "t", user="hello")
    await _store(memory, "ns", "kiln glaze", "oven")
    await memory.db.write(
        lambda raw: raw.execute("UPDATE meta SET value = '0' WHERE key = 'fts_tokenizer_version'")
    )
    await memory.close()
    memory = await StrataGate.open(db_path)
    stored = await _assert_true(memory)
    assert {"w:kiln", "w:oven"} <= _terms(stored)
    await memory.close()


async def test_an_open_builds_an_index_that_is_missing(db_path: Path) -> None:
    """A database whose index is empty and of no version (PostgreSQL's before it kept one)
    gets it built at open."""
    memory = await StrataGate.open(db_path)
    await kiln_events(memory)
    built = await _assert_true(memory)

    def emptied(raw: sqlite3.Connection) -> None:
        for table in event_term_index.layout_tables(raw):
            raw.execute(f"DELETE FROM {table}")
        raw.execute("DELETE FROM meta WHERE key = ?", (event_term_index.VERSION_KEY,))

    await memory.db.write(emptied)
    assert not await memory.db.read(event_term_index.has_index)
    await memory.close()
    memory = await StrataGate.open(db_path)
    assert await _assert_true(memory) == built
    await memory.close()


async def test_totals_written_in_a_unit_count_in_its_own_ranking(memory: StrataGate) -> None:
    """On PostgreSQL the totals move at the unit's end, on SQLite the postings are held
    (``event_chunks.held_appends``): a ranking later in the same unit still sees the events
    it wrote."""
    await kiln_events(memory)

    def stored_then_ranked(raw: sqlite3.Connection) -> dict[str, list[int]]:
        for n in range(3):
            event = event_card(f"late-{n}", title="kiln kiln", summary="late", namespace="ns")
            event_rows.insert_event(raw, event, EVENT_RULES)
        return event_term_index.ranked_pks(raw, ["w:kiln"], "ns", POOLS)

    within = await memory.db.write(stored_then_ranked)
    after = await memory.db.read(
        lambda raw: event_term_index.ranked_pks(raw, ["w:kiln"], "ns", POOLS)
    )
    assert within == after and len(within["conversation"]) == 16
    await _assert_true(memory)


async def test_newest_first_reads_every_page(
    memory: StrataGate, monkeypatch: pytest.MonkeyPatch
) -> None:
    await kiln_events(memory)
    stored = await _assert_true(memory)
    held = [r[1] for r in stored["postings"] if r[0] == "w:kiln" and r[4:] == ("ns", POOLS[0])]
    monkeypatch.setattr(event_term_index, "NEWEST_PAGE", 3)

    def newest(raw: sqlite3.Connection) -> list[int]:
        return list(event_term_index.newest_pks(raw, "w:kiln", "ns", POOLS[0]))

    assert await memory.db.read(newest) == sorted(held, reverse=True) and len(held) == 13


async def test_a_merge_rewriting_an_event_reindexes_it(memory: StrataGate) -> None:
    await kiln_events(memory)
    target = (await memory.events.cards("ns"))[0]

    def merged(raw: sqlite3.Connection) -> None:
        now = "2025-01-01T00:00:00+00:00"
        gate_rows.merge_into(raw, target.id, "sourdough starter", ["bread"], 9, now, EVENT_RULES)

    await memory.db.write(merged)
    stored = await _assert_true(memory)
    assert {"w:sourdough", "w:bread"} <= _terms(stored)
