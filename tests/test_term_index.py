"""The raw channel's impact index stays what a rebuild from the FTS rows would make, through
sealing, imports and their undo, and a purge of words (which also leaves no term of them)."""

import sqlite3
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from imports import candidate, document, imported

from stratagate_plugin.core.config import MemoryConfig
from stratagate_plugin.core.memory import StrataGate
from stratagate_plugin.core.purge.words import Needles
from stratagate_plugin.core.records import MessageIn
from stratagate_plugin.core.retrieval import impact
from stratagate_plugin.core.retrieval.impact import best_rowids, term_counts
from stratagate_plugin.core.retrieval.raw_channel import speaker_label
from stratagate_plugin.core.retrieval.storage import ChannelMessage, CorpusStats, TermPostings
from stratagate_plugin.core.store import message_facts, term_index
from stratagate_plugin.core.store.retrieval_rows import indexed_messages
from stratagate_plugin.core.store.search_index import register_functions

pytestmark = pytest.mark.sqlite_only(
    reason="the raw impact index checked against a rebuild from FTS5's rows in a SQLite "
    "copy (backup API, SQLite functions)"
)

START = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
NS = "space"
TURNS = [
    ("t1", "I adopted a puppy named Rex", "What breed is the puppy?"),
    ("t1", "A beagle, he loves the park and the park loves him", "Sounds lovely"),
    ("t1", "Rex chewed my violin case", "Oh no, the violin!"),
    ("t2", "My sister plays violin on Fridays", "Lovely instrument"),
    ("t2", "She performs on Friday at the hall", "Good luck to her"),
]


@pytest.fixture
async def memory(tmp_path: Path) -> AsyncIterator[StrataGate]:
    sg = await StrataGate.open(tmp_path / "memory.db", MemoryConfig(block_turn_size=2))
    for hour, (thread, user, assistant) in enumerate(TURNS):
        messages = [
            MessageIn(role="user", content=user),
            MessageIn(role="assistant", content=assistant),
        ]
        for space in (NS, "other"):
            await sg.blocks.record_turn(space, thread, messages, at=START + timedelta(hours=hour))
    yield sg
    await sg.close()


def _snapshot(raw: sqlite3.Connection) -> dict[str, Any]:
    postings: dict[tuple[str, str], list[tuple[int, int, int]]] = {}
    rows = raw.execute(
        "SELECT namespace, term, rowids, counts, lengths FROM term_postings ORDER BY chunk"
    )
    for space, term, rowids, counts, lengths in rows:
        arrays = [np.frombuffer(rowids, "<i4"), np.frombuffer(counts, "<u2")]
        arrays.append(np.frombuffer(lengths, "<u2"))
        postings.setdefault((space, term), []).extend(
            zip(*(a.tolist() for a in arrays), strict=True)
        )
    counts = raw.execute("SELECT namespace, term, messages, blocks FROM term_counts")
    lengths = raw.execute("SELECT block_id, namespace, tokens FROM block_lengths")
    facts = raw.execute("SELECT * FROM message_facts")
    return {
        "postings": postings,
        "counts": {tuple(row) for row in counts},
        "lengths": {tuple(row) for row in lengths},
        "facts": {tuple(row) for row in facts},
    }


async def _as_stored_and_rebuilt(memory: StrataGate) -> tuple[dict[str, Any], dict[str, Any]]:
    def both(raw: sqlite3.Connection) -> tuple[dict[str, Any], dict[str, Any]]:
        stored = _snapshot(raw)
        copy = sqlite3.connect(":memory:")
        raw.backup(copy)
        register_functions(copy)
        term_index.rebuild(copy)
        message_facts.rebuild(copy)
        return stored, _snapshot(copy)

    return await memory.db.read(both)


async def test_sealing_fills_the_index_as_a_rebuild_would(memory: StrataGate) -> None:
    stored, rebuilt = await _as_stored_and_rebuilt(memory)
    assert stored == rebuilt
    assert ("space", "w:violin") in stored["postings"]
    assert ("space", "w:park", 1, 1) in stored["counts"]  # one message, twice in it
    [(_, count, _)] = stored["postings"][("space", "w:park")]
    assert count == 2


async def test_an_import_and_its_undo_keep_the_index_true(memory: StrataGate) -> None:
    batch = await imported(memory, document(candidate("Loves sourdough baking on Sundays")))
    stored, rebuilt = await _as_stored_and_rebuilt(memory)
    assert stored == rebuilt
    assert ("space", "w:sourdough") not in stored["postings"]  # a source is not a raw hit
    assert any(row[1] == "w:sourdough" for row in stored["counts"])  # but it is counted
    await memory.imports.undo(batch.id)
    stored, rebuilt = await _as_stored_and_rebuilt(memory)
    assert stored == rebuilt
    assert not any(row[1] == "w:sourdough" for row in stored["counts"])


async def test_a_purge_of_words_leaves_no_term_of_them(memory: StrataGate) -> None:
    await memory.purge.words(Needles(["violin"]))
    stored, rebuilt = await _as_stored_and_rebuilt(memory)
    assert stored == rebuilt
    terms = {term for _, term in stored["postings"]} | {row[1] for row in stored["counts"]}
    assert "w:violin" not in terms
    assert "w:beagl" in terms


async def test_message_facts_hold_each_indexed_message_as_its_rows_do(memory: StrataGate) -> None:
    stored, _ = await _as_stored_and_rebuilt(memory)
    rows = await memory.db.read(
        lambda raw: raw.execute(
            "SELECT m.namespace, m.thread_id, m.position, m.fts_rowid, m.id, m.block_id, "
            "b.sequence, m.composed_from_memory, m.content FROM messages m "
            "JOIN blocks b ON b.id = m.block_id WHERE m.fts_rowid IS NOT NULL"
        ).fetchall()
    )
    assert len(stored["facts"]) == len(rows) == 16  # 4 sealed turns of 2 messages, 2 spaces
    by_rowid = {fact[3]: fact for fact in stored["facts"]}
    for row in rows:
        assert by_rowid[row[3]][:8] == tuple(row[:8])
        assert by_rowid[row[3]][9] == message_facts.label_room(row[8])


async def test_facts_read_the_same_matches_and_neighbours_as_the_message_rows(
    memory: StrataGate,
) -> None:
    def both(raw: sqlite3.Connection) -> tuple[list[Any], list[Any]]:
        copy = sqlite3.connect(":memory:")
        raw.backup(copy)
        register_functions(copy)
        rowids = [row[0] for row in copy.execute("SELECT fts_rowid FROM message_facts")]
        read = [indexed_messages(copy, NS, rowids[::-3], reach, 2) for reach in (1, 3)]
        copy.execute("DELETE FROM meta WHERE key = 'message_facts_version'")
        rows = [indexed_messages(copy, NS, rowids[::-3], reach, 2) for reach in (1, 3)]
        return [_seen(found) for found in read], [_seen(found) for found in rows]

    from_facts, from_rows = await memory.db.read(both)
    assert from_facts == from_rows
    assert all(matched and neighbours for matched, neighbours in from_facts)


def _seen(found: tuple[list[ChannelMessage], list[ChannelMessage]]) -> list[list[Any]]:
    """What the raw channel takes of each message (its content only through its label)."""
    return [[(*m[:5], speaker_label(m.content), *m[6:]) for m in part] for part in found]


async def test_a_space_deletion_leaves_no_facts_of_it(memory: StrataGate) -> None:
    await memory.purge.delete_space("other")
    stored, rebuilt = await _as_stored_and_rebuilt(memory)
    assert stored == rebuilt
    assert {fact[0] for fact in stored["facts"]} == {NS}


async def test_forgetting_and_purging_an_event_keep_the_facts_true(tmp_path: Path) -> None:
    sg = await StrataGate.open(tmp_path / "curated.db", MemoryConfig(block_turn_size=3))
    try:
        for user in ("We moved the spring sale to 14 March.", "Prices rose.", "Open at 10."):
            await sg.blocks.append_turn(NS, "monday", user=user, assistant="Noted.")
        await sg.derivation.process_pending()
        [card] = [e for e in await sg.events.cards(NS) if "spring sale" in e.title.lower()]
        await sg.curation.act("forget", card.id)
        stored, rebuilt = await _as_stored_and_rebuilt(sg)
        assert stored == rebuilt and len(stored["facts"]) == 6
        await sg.curation.act("purge", card.id)
        stored, rebuilt = await _as_stored_and_rebuilt(sg)
        assert stored == rebuilt
        assert card.source_message_ids[0] not in {fact[4] for fact in stored["facts"]}
    finally:
        await sg.close()


@pytest.mark.parametrize(
    ("content", "room"),
    [
        ("Caroline: I went to the support group", "Caroline:"),
        ("no label here", ""),
        ("x" * 40 + ": a colon at 41", "x" * 40 + ":"),
        ("x" * 41 + ": a colon at 42", ""),
        ("Note: a: b", "Note:"),
    ],
)
def test_label_room_holds_what_a_speaker_label_can_take(content: str, room: str) -> None:
    assert message_facts.label_room(content) == room
    assert speaker_label(message_facts.label_room(content)) == speaker_label(content)


def _postings(*entries: tuple[int, int, int]) -> TermPostings:
    rowids, counts, lengths = zip(*entries, strict=True)
    return TermPostings(
        np.array(rowids, np.int64), np.array(counts, np.float64), np.array(lengths, np.float64)
    )


def test_best_rowids_rank_by_bm25_and_break_ties_to_the_later_message() -> None:
    found = {
        "w:a": _postings((1, 1, 10), (2, 1, 10), (3, 1, 10), (9, 3, 10)),
        "w:b": _postings((2, 1, 10), (7, 1, 10)),
    }
    stats = CorpusStats(messages=10, message_tokens=100, blocks=2, message_df={"w:a": 4, "w:b": 2})
    ranked = best_rowids(found, ["w:a", "w:b"], stats, cap=10)
    assert ranked[0] == 2  # both terms
    assert ranked.index(3) < ranked.index(1)  # equal scores: the later message first
    assert best_rowids(found, ["w:a", "w:b"], stats, cap=2) == ranked[:2]
    assert best_rowids(found, ["w:a"], stats, cap=10, leave_out=[9]) == [3, 2, 1]
    assert best_rowids(found, ["w:zz"], stats, cap=10) == []
    assert term_counts(found, [2, 9, 5]) == {2: {"w:a": 1, "w:b": 1}, 9: {"w:a": 3}}


def test_a_wide_rowid_span_scores_the_same_as_a_narrow_one() -> None:
    narrow = {"w:a": _postings((1, 1, 5), (2, 2, 5)), "w:b": _postings((2, 1, 5))}
    wide = {"w:a": _postings((1, 1, 5), (10**7, 2, 5)), "w:b": _postings((10**7, 1, 5))}
    stats = CorpusStats(messages=4, message_tokens=20, blocks=1, message_df={"w:a": 2, "w:b": 1})
    assert best_rowids(narrow, ["w:a", "w:b"], stats, 5) == [2, 1]
    assert best_rowids(wide, ["w:a", "w:b"], stats, 5) == [10**7, 1]


def _common_words(seed: int) -> tuple[dict[str, TermPostings], CorpusStats]:
    """Postings of a rare word and three common ones over 100k messages, few distinct
    (count, length) pairs, so scores tie by the thousand."""
    rng = np.random.default_rng(seed)
    sizes = {"w:rare": 900, "w:with": 14_000, "w:a": 48_000, "w:the": 70_000}
    found = {}
    for term, size in sizes.items():
        rowids = np.sort(rng.choice(100_000, size, replace=False)).astype(np.int64)
        counts = rng.choice([1, 1, 1, 2, 3], size).astype(np.float64)
        lengths = rng.integers(4, 30, size).astype(np.float64)
        found[term] = TermPostings(rowids, counts, lengths)
    df = {term: len(postings.rowids) for term, postings in found.items()}
    return found, CorpusStats(
        messages=100_000, message_tokens=1_700_000, blocks=5_000, message_df=df
    )


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_best_rowids_leaving_out_common_words_ranks_as_scoring_every_posting(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    found, stats = _common_words(seed)
    asked = [
        (t, cap) for t in (["w:a", "w:with", "w:the"], ["w:the", "w:rare"]) for cap in (1, 37, 200)
    ]
    asked += [(["w:the", "w:a", "w:rare"], 200)]
    pruned = [best_rowids(found, terms, stats, cap) for terms, cap in asked]
    left = [ranked[::3] for ranked in pruned]
    pruned_left = [
        best_rowids(found, t, stats, c, o) for (t, c), o in zip(asked, left, strict=True)
    ]
    narrowed: list[object] = []
    none = np.array([], np.int64)
    monkeypatch.setattr(impact, "_narrowed", lambda *a: narrowed.append(a) or none)
    best_rowids(found, ["w:a", "w:with", "w:the"], stats, 200)
    assert narrowed  # the common words were left out
    monkeypatch.setattr(impact, "PRUNE_FROM", 10**9)  # every posting scored
    assert pruned == [best_rowids(found, terms, stats, cap) for terms, cap in asked]
    every_left = [best_rowids(found, t, stats, c, o) for (t, c), o in zip(asked, left, strict=True)]
    assert pruned_left == every_left
