"""``RetrievalStorage``: raw candidates and hits, the channel's messages and statistics,
blocks, dates, graph views, tails, thread sources and the recall bypass."""

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import NamedTuple, TypeVar

from stratagate_plugin.core.clock import iso
from stratagate_plugin.core.graph.views import assemble
from stratagate_plugin.core.memory import StrataGate
from stratagate_plugin.core.records import MessageIn
from stratagate_plugin.core.retrieval.impact import best_rowids
from stratagate_plugin.core.retrieval.storage import (
    ChannelMessage,
    RetrievalReader,
    RetrievalStorage,
)
from stratagate_plugin.core.text.search_terms import fts_encode, query_tokens, tokenize

NS = "contract"
T = TypeVar("T")
T0 = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)


async def _read(store: RetrievalStorage, work: Callable[[RetrievalReader], T]) -> T:
    return await store.read(work)


async def _turns(
    engine: StrataGate, thread: str, turns: list[tuple[str, str]], hour: int = 0
) -> list[str]:
    ids: list[str] = []
    for step, (user, assistant) in enumerate(turns):
        messages = [
            MessageIn(role="user", content=user),
            MessageIn(role="assistant", content=assistant),
        ]
        at = T0 + timedelta(hours=hour + step)
        ids += (await engine.blocks.record_turn(NS, thread, messages, at=at)).message_ids
    return ids


async def _world(engine: StrataGate) -> list[str]:
    """t1: two sealed turns (one block) and one open turn; t2: two sealed turns, derived."""
    ids = await _turns(
        engine,
        "t1",
        [("I adopted a beagle named Rex", "Nice dog"), ("Rex loves the park", "Parks are fun")],
    )
    ids += await _turns(
        engine, "t2", [("My sister plays violin", "Lovely"), ("On Friday", "Ok")], 5
    )
    ids += await _turns(engine, "t1", [("The beagle is asleep", "Sweet")], 9)
    await engine.derivation.process_pending()
    return ids


async def test_sealed_matches_share_a_token_and_hits_keep_the_order_given(
    engine: StrataGate,
) -> None:
    ids = await _world(engine)
    store = engine.storage.retrieval
    beagle = tokenize("beagle")
    found = await store.sealed_matches(NS, beagle, 100, None)
    assert [m.id for m in found] == [ids[0]]  # the open tail's "beagle" is not sealed
    assert fts_encode(beagle[0]) in found[0].tokens
    assert await store.sealed_matches(NS, beagle, 100, "t2") == []
    assert await store.sealed_matches(NS, tokenize("zebra"), 100, None) == []
    hits = await store.raw_hits([(ids[2], 2.0), ("msg_unknown", 1.0), (ids[0], 1.0)])
    assert [(h.message.id, h.score) for h in hits] == [(ids[2], 2.0), (ids[0], 1.0)]
    assert hits[1].previous is None and hits[1].next is not None
    assert hits[1].next.id == ids[1]


async def test_indexed_messages_match_reach_neighbours_and_add_other_tails(
    engine: StrataGate,
) -> None:
    ids = await _world(engine)
    store = engine.storage.retrieval
    terms = tuple(query_tokens("violin"))
    rows = await _read(store, lambda r: _indexed(r, terms, 10, 1))
    assert rows.indexed and [m.id for m in rows.matched] == [ids[4]]
    assert [m.id for m in rows.neighbours] == [ids[5]]
    assert [m.id for m in rows.tails] == ids[8:10]
    mine = await _read(store, lambda r: _indexed(r, terms, 10, 1, current_thread="t1"))
    assert mine.tails == []
    scanned = await _read(store, lambda r: _scanned(r))
    assert not scanned.indexed and sorted(m.id for m in scanned.matched) == sorted(ids[:8])
    assert (await _read(store, lambda r: _indexed(r, terms, 0, 1))).matched == []


class _Rows(NamedTuple):
    """What the raw channel reads (the contract test's view of it)."""

    matched: list[ChannelMessage]
    neighbours: list[ChannelMessage]
    tails: list[ChannelMessage]
    indexed: bool


def _indexed(
    reader: RetrievalReader,
    terms: tuple[str, ...],
    cap: int,
    reach: int,
    current_thread: str | None = None,
) -> _Rows:
    """The best ``cap`` messages of the impact index for ``terms``, their neighbours, tails."""
    postings = reader.term_postings(NS, terms)
    assert postings is not None
    stats = reader.term_statistics(NS, list(terms), [])
    rowids = best_rowids(postings, terms, stats, cap)
    matched, neighbours = reader.indexed_messages(NS, rowids, reach, len(rowids))
    return _Rows(matched, neighbours, reader.tail_messages(NS, current_thread), True)


def _scanned(reader: RetrievalReader) -> _Rows:
    return _Rows(reader.sealed_messages(NS), [], reader.tail_messages(NS, None), False)


async def test_term_statistics_count_the_whole_sealed_space(engine: StrataGate) -> None:
    await _world(engine)
    store = engine.storage.retrieval
    [beagle] = query_tokens("beagle")
    rows = await _read(store, lambda r: _indexed(r, (beagle,), 1, 0))
    blocks = [m.block_id for m in rows.matched]
    stats = await _read(store, lambda r: r.term_statistics(NS, [beagle], blocks))
    assert (stats.messages, stats.blocks) == (8, 2)
    assert stats.message_df == {beagle: 1} and stats.block_df == {beagle: 1}
    assert set(stats.block_lengths) == set(blocks) and all(stats.block_lengths.values())
    assert (
        await _read(store, lambda r: r.term_statistics("elsewhere", [beagle], []))
    ).messages == 0


async def test_latest_time_dates_and_tails(engine: StrataGate) -> None:
    store = engine.storage.retrieval
    assert await store.latest_message_time(NS) is None
    ids = await _world(engine)
    assert await store.latest_message_time(NS) == T0 + timedelta(hours=9)
    start, end = iso(T0 + timedelta(hours=5)), iso(T0 + timedelta(hours=6))
    created = await store.read(lambda r: r.created_at([*ids, "msg_unknown"]))
    assert set(created) == set(ids)
    assert {m for m, at in created.items() if start <= at <= end} == set(ids[4:8])
    assert await store.read(lambda r: r.created_at([])) == {}
    cards = await engine.events.cards(NS)
    dated = [c for c in cards if c.temporal.get("happened_start") or c.temporal.get("happened_end")]
    assert dated, "the offline model dates what a turn says happened (On Friday)"
    expected = sorted(
        (m, c.temporal.get("happened_start"), c.temporal.get("happened_end"))
        for c in dated
        if c.status in ("active", "superseded")
        for m in c.source_message_ids
    )
    found = await store.read(lambda r: r.happened_of(NS, ids))
    assert sorted(found) == expected
    assert await store.read(lambda r: r.happened_of("elsewhere", ids)) == []
    own, others = await store.tails(NS, "t1")
    assert [m.id for m in own] == ids[8:10] and others == []
    own, others = await store.tails(NS, "t2")
    assert own == [] and [m.id for m in others] == ids[8:10]


async def test_block_texts_and_messages_of_ready_blocks(engine: StrataGate) -> None:
    ids = await _world(engine)
    store = engine.storage.retrieval
    texts = await _read(store, lambda r: r.block_texts([ids[0], ids[4], ids[8]]))
    assert len(texts) == 2 and all(texts.values())  # the open tail has no block
    by_block = await _read(store, lambda r: {b: r.block_messages(b) for b in texts})
    assert sorted(m for block in by_block.values() for m, _ in block) == sorted(ids[:8])
    assert all(
        [m for m, _ in block] == sorted([m for m, _ in block], key=ids.index)
        for block in by_block.values()
    )


async def test_thread_sources_citations_and_the_bypass(engine: StrataGate) -> None:
    ids = await _world(engine)
    store = engine.storage.retrieval
    card = next(
        c for c in await engine.events.cards(NS) if set(c.source_message_ids) & set(ids[4:8])
    )
    assert await _read(store, lambda r: r.from_thread([card.id, "evt_unknown"], "t2")) == {card.id}
    assert (
        await _read(store, lambda r: r.cited_messages(NS, [card.id, card.id]))
        == card.source_message_ids
    )
    turn, pinned = await _read(store, lambda r: r.bypass(NS))
    assert turn >= 0 and card.id not in [row.id for row in pinned]
    await engine.gate.pin_event(card.id)
    _turn, pinned = await _read(store, lambda r: r.bypass(NS))
    assert [row.id for row in pinned] == [card.id] and pinned[0].pinned


async def test_graph_views_are_nodes_sharing_a_term(engine: StrataGate) -> None:
    await _world(engine)
    await engine.remember.save(NS, "t2", "Ana Souza lives in Porto.")
    await engine.derivation.process_pending()
    store = engine.storage.retrieval
    views = await _read(store, lambda r: assemble(r.graph_records(NS, query_tokens("Porto"), 10)))
    assert views and all("porto" in v.model_dump_json().lower() for v in views)
    assert (
        await _read(store, lambda r: assemble(r.graph_records(NS, query_tokens("zebra"), 10))) == []
    )
    assert (
        len(
            await _read(
                store, lambda r: assemble(r.graph_records(NS, query_tokens("Porto Ana"), 1))
            )
        )
        <= 1
    )
