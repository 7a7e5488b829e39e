"""Event search (spec §6.4): BM25/RRF orders, structured filters, pools, statuses, side effects."""

import math
import sqlite3
from datetime import timedelta
from typing import Any

import pytest
from cards import T0, event_card

from stratagate_plugin.core.errors import InvalidInput, NotFound
from stratagate_plugin.core.events.cards import EventCard
from stratagate_plugin.core.events.documents import EVENT_RULES
from stratagate_plugin.core.events.ranking import (
    SCORE_MEANING,
    Document,
    EventFilters,
    EventSearch,
    counted_document,
    event_tokens,
    is_plain,
    pool_rankings,
    rank_events,
    rank_plain,
)
from stratagate_plugin.core.memory import StrataGate
from stratagate_plugin.core.retrieval.bm25 import bm25_rank
from stratagate_plugin.core.store import event_documents, event_rows, search_index
from stratagate_plugin.core.text.search_terms import fts_match_any, query_tokens


def card(event_id: str, title: str = "", summary: str = "", **extra: Any) -> EventCard:
    return event_card(event_id, title=title or event_id, summary=summary or "-", **extra)


def search(text: str = "", **extra: Any) -> EventSearch:
    filters = extra.pop("filters", EventFilters())
    return EventSearch(tuple(query_tokens(text)), filters=filters, **extra)


def ids(cards: list[EventCard], request: EventSearch, turn: int = 0) -> list[str]:
    return [hit.card.id for hit in rank_events(cards, request, turn)]


def bm25_by_hand(tf: int, length: int, avgdl: float, total: int, df: int) -> float:
    idf = math.log(1 + (total - df + 0.5) / (df + 0.5))
    return idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * length / avgdl))


# -- pure ranking -------------------------------------------------------------------------


def test_event_tokens_weight_every_field() -> None:
    event = card(
        "e",
        "kiln",
        "clay",
        tags=["oven"],
        quotes=["bake"],
        temporal={"participants": ["Ana"], "event_type": "plan", "original_text": "soon"},
    )
    counts = {t: event_tokens(event).count(t) for t in set(event_tokens(event))}
    assert counts == {
        "w:kiln": 4,
        "w:clay": 3,
        "w:oven": 2,
        "w:bak": 2,
        "w:ana": 5,
        "w:plan": 5,
        "w:soon": 4,
    }


def test_bm25_order_matches_a_hand_computed_case() -> None:
    a = card("a", "kiln", "clay")  # kiln×4 + clay×3 = 7 tokens
    b = card("b", "kiln kiln", "oven")  # kiln×8 + oven×3 = 11 tokens
    c = card("c", "oven", "clay")  # no query token: outside the BM25 corpus
    scores = dict(bm25_rank(["w:kiln"], {e.id: event_tokens(e) for e in (a, b)}))
    assert scores["a"] == pytest.approx(bm25_by_hand(4, 7, 9, 2, 2))
    assert scores["b"] == pytest.approx(bm25_by_hand(8, 11, 9, 2, 2))
    hits = rank_events([a, b, c], search("kiln"), 0)
    assert [h.card.id for h in hits] == ["b", "a"]
    assert [h.rank_score for h in hits] == pytest.approx([1 / 61, 1 / 62])


@pytest.mark.parametrize(
    ("agent_weight", "expected", "top_score"),
    [
        (2.0, ["x", "a", "b"], 2 / 61),
        (1.0, ["a", "x", "b"], 1 / 61),  # a and x tie on 1/61: best rank, then id
        (0.5, ["a", "b", "x"], 1 / 61),
        (0.0, ["a", "b"], 1 / 61),
    ],
)
def test_pools_fuse_by_weighted_rrf(
    agent_weight: float, expected: list[str], top_score: float
) -> None:
    a = card("a", "kiln kiln kiln")
    b = card("b", "kiln", "oven oven oven")
    x = card("x", "kiln", pool="agent")
    hits = rank_events([a, b, x], search("kiln", agent_weight=agent_weight), 0)
    assert [h.card.id for h in hits] == expected
    assert hits[0].rank_score == pytest.approx(top_score)


def test_query_matching_nothing_returns_nothing() -> None:
    assert ids([card("a", "kiln"), card("b", "oven")], search("zebra")) == []


def test_empty_query_without_filters_lists_everything_in_structured_order() -> None:
    fresh = card("fresh", last_adopted_turn=10)
    stale = card("stale", last_adopted_turn=0)
    newer = card("newer", last_adopted_turn=0, updated_at=T0 + timedelta(days=1))
    assert ids([stale, fresh, newer], search(""), 10) == ["fresh", "newer", "stale"]


@pytest.mark.parametrize(
    ("intent", "expected"), [("first", ["old", "mid", "new"]), ("latest", ["new", "mid", "old"])]
)
def test_temporal_intent_orders_by_chronology(intent: Any, expected: list[str]) -> None:
    old = card("old", temporal={"happened_start": "2020-01-01T00:00:00+00:00"})
    mid = card("mid", temporal={"mentioned_at": "2021-01-01T00:00:00+00:00"})
    new = card("new", created_at=T0)
    request = search("", filters=EventFilters(temporal_intent=intent))
    assert ids([new, old, mid], request) == expected


def test_joint_structured_match_restricts_bm25_to_the_matching_events() -> None:
    ana = card("ana", "kiln", temporal={"participants": ["Ana Lopez"]})
    both = card("both", "kiln kiln", temporal={"participants": ["Ana", "Bob"]})
    other = card("other", "kiln kiln kiln")
    request = search("kiln", filters=EventFilters(participants=("ana",)))
    assert pool_rankings([ana, both, other], request, 0) == [["both", "ana"], ["ana", "both"]]
    assert ids([ana, both, other], request) == ["ana", "both"]  # RRF tie: best rank, then id


def test_without_a_joint_match_each_structured_list_is_its_own_ranking() -> None:
    ana = card("ana", "kiln", temporal={"participants": ["Ana"]})
    plan = card("plan", "oven", temporal={"event_type": "plan"})
    other = card("other", "kiln")
    request = search("kiln", filters=EventFilters(participants=("Ana",), event_type="plan"))
    rankings = pool_rankings([ana, plan, other], request, 0)
    assert rankings[1:] == [["ana"], ["plan"]] and set(rankings[0]) == {"ana", "other"}
    assert set(ids([ana, plan, other], request)) == {"ana", "plan", "other"}


def test_event_type_filter_matches_the_type_or_the_text() -> None:
    typed = card("typed", temporal={"event_type": "release"})
    texty = card("texty", "We released v2", tags=["release"])
    plain = card("plain", "Lunch")
    request = search("", filters=EventFilters(event_type="发布"))
    assert set(ids([typed, texty, plain], request)) == {"typed", "texty"}


def test_happened_window_overlaps_start_and_end() -> None:
    def at(day: int) -> str:
        return (T0 + timedelta(days=day)).isoformat()

    inside = card("inside", temporal={"happened_start": at(1), "happened_end": at(3)})
    only_end = card("only_end", temporal={"happened_end": at(5)})
    before = card("before", temporal={"happened_start": at(-9), "happened_end": at(-8)})
    undated = card("undated")
    window = EventFilters(happened_from=T0 + timedelta(days=2), happened_to=T0 + timedelta(days=5))
    found = ids([inside, only_end, before, undated], search("", filters=window))
    assert set(found) == {"inside", "only_end"}


def test_statuses_superseded_kept_forgotten_and_archived_dropped() -> None:
    cards = [
        card("active", "kiln"),
        card("superseded", "kiln", status="superseded", forced_cap=0.1),
        card("forgotten", "kiln", status="forgotten"),
        card("archived", "kiln", status="archived"),
    ]
    assert set(ids(cards, search("kiln"))) == {"active", "superseded"}


def test_limit_is_clamped_and_offset_applies_after_fusion() -> None:
    cards = [card(f"e{i:02}", "kiln " * (30 - i)) for i in range(25)]
    assert len(ids(cards, search("kiln", limit=0))) == 1
    assert len(ids(cards, search("kiln", limit=99))) == 20
    assert ids(cards, search("kiln", limit=3, offset=2)) == ["e02", "e03", "e04"]


def test_scope_ids_restrict_candidates() -> None:
    cards = [card("a", "kiln"), card("b", "kiln")]
    assert ids(cards, search("", filters=EventFilters(event_ids=frozenset({"b"})))) == ["b"]


def test_compact_card_has_the_tool_fields() -> None:
    event = card(
        "x",
        "t" * 300,
        "a  b",
        pool="agent",
        temporal={"mentioned_at": "2024-05-01T00:00:00+00:00", "supersedes_event_ids": ["y"]},
    )
    [hit] = rank_events([event], search("", agent_weight=1), 0)
    compact = hit.compact()
    assert len(compact["title"]) == 240 and compact["summary"] == "a b"
    assert compact["sourceTime"] == "2024-05-01T00:00:00+00:00"
    assert compact["temporal"] == {
        "mentionedAt": "2024-05-01T00:00:00+00:00",
        "supersedesEventIds": ["y"],
    }
    assert compact["source"] == "agent-recorded" and compact["scoreMeaning"] == SCORE_MEANING
    assert compact["rankScore"] == hit.rank_score


# -- through a real database --------------------------------------------------------------


async def seal_thread(memory: StrataGate, thread: str, words: str = "kiln talk") -> list[str]:
    """Three turns: one block sealed (block_turn_size=3); returns its message ids."""
    message_ids: list[str] = []
    for i in range(3):
        receipt = await memory.blocks.append_turn("ns", thread, user=f"{words} {i}", assistant="ok")
        message_ids += receipt.message_ids
    return message_ids


async def store(memory: StrataGate, *cards: EventCard) -> None:
    def unit(raw: sqlite3.Connection) -> None:
        for event in cards:
            event_rows.insert_event(raw, event, EVENT_RULES)

    await memory.db.write(unit)


async def sourced(
    memory: StrataGate, event_id: str, title: str, thread: str = "t", **extra: Any
) -> EventCard:
    """An event citing the first message of the thread's first block."""
    block = (await memory.blocks.views("ns", thread))[0].block
    source = (await memory.blocks.messages(block.id))[0].id
    return card(event_id, title, source_block_id=block.id, source_message_ids=[source], **extra)


def counters(plain: sqlite3.Connection) -> list[tuple[Any, ...]]:
    rows = plain.execute(
        "SELECT id, mention_count, last_adopted_turn, updated_at FROM events ORDER BY id"
    )
    return [tuple(row) for row in rows]


async def test_search_stamps_retrieval_but_never_reinforces(
    memory: StrataGate, plain: sqlite3.Connection
) -> None:
    await seal_thread(memory, "t")
    await store(memory, await sourced(memory, "evt_a", "kiln firing"), card("evt_b", "oven"))
    before = counters(plain)
    hits = await memory.events.search("ns", "kiln")
    assert [h.card.id for h in hits] == ["evt_a"]
    assert counters(plain) == before
    await memory.events.stamps.flush()
    stamped = dict(plain.execute("SELECT id, last_retrieved_at FROM events").fetchall())
    assert stamped["evt_a"] is not None and stamped["evt_b"] is None


async def test_untracked_and_unmatched_searches_stamp_nothing(
    memory: StrataGate, plain: sqlite3.Connection
) -> None:
    await memory.blocks.append_turn("ns", "t", user="hello")
    await store(memory, card("evt_a", "kiln"))
    assert await memory.events.search("ns", "zebra") == []
    assert len(await memory.events.search("ns", "kiln", track_retrieval=False)) == 1
    await memory.events.stamps.flush()
    assert plain.execute("SELECT last_retrieved_at FROM events").fetchone()[0] is None


async def test_search_pools_statuses_and_agent_weight(memory: StrataGate) -> None:
    await memory.blocks.append_turn("ns", "t", user="hello")
    old = card("evt_old", "kiln schedule")
    new = card("evt_new", "kiln schedule moved", temporal={"supersedes_event_ids": ["evt_old"]})
    await store(memory, old, new, card("evt_gone", "kiln", status="forgotten"))
    await store(memory, card("evt_agent", "kiln preference", pool="agent"))
    hits = await memory.events.search("ns", "kiln")
    found = {h.card.id: [older.status for older in h.history] for h in hits}
    assert found == {"evt_new": ["superseded"], "evt_agent": []}  # evt_old as evt_new's history
    no_agent = memory.config.model_copy(update={"agent_memory_weight": 0})
    off = await StrataGate(memory.db, no_agent).events.search("ns", "kiln")
    assert [(h.card.id, [o.id for o in h.history]) for h in off] == [("evt_new", ["evt_old"])]


async def test_structured_filters_find_events_without_a_lexical_match(memory: StrataGate) -> None:
    await memory.blocks.append_turn("ns", "t", user="hello")
    ana = card("evt_ana", "dinner", temporal={"participants": ["Ana"]})
    await store(memory, ana, card("evt_bob", "kiln", temporal={"participants": ["Bob"]}))
    hits = await memory.events.search("ns", "", participants=["ana"])
    assert [h.card.id for h in hits] == ["evt_ana"]
    hits = await memory.events.search("ns", "kiln", participants=["ana"])
    assert [h.card.id for h in hits] == ["evt_ana"]
    early = await memory.events.search("ns", "", happened_to="2000-01-01")
    assert early == []


async def test_expand_event_returns_the_card_and_its_sources(memory: StrataGate) -> None:
    ids_ = await seal_thread(memory, "t")
    event = await sourced(memory, "evt_a", "kiln")
    await store(memory, event, card("evt_gone", "x", status="forgotten"))
    expansion = await memory.events.expand("evt_a")
    assert expansion.card.id == "evt_a" and [m.id for m in expansion.messages] == [ids_[0]]
    with pytest.raises(NotFound):
        await memory.events.expand("evt_gone")
    assert (await memory.events.expand("evt_gone", include_hidden=True)).messages == []


async def test_get_blocks_reports_levels_and_empty_reasons(memory: StrataGate) -> None:
    empty = await memory.events.agent_blocks("ns", "t")
    assert empty.empty_reason == "no_blocks_in_namespace" and empty.status()["blockCount"] == 0
    await seal_thread(memory, "a")
    pending = await memory.events.agent_blocks("ns", "b")
    assert pending.status()["emptyReason"] == "blocks_exist_in_other_threads"
    assert pending.namespace_thread_ids == ["a"] and pending.namespace_block_count == 1
    await memory.blocks.append_turn("ns", "b", user="unsealed")
    assert (await memory.events.agent_blocks("ns", "b")).empty_reason == "open_tail_pending"
    for _ in range(3):
        block_id = (await memory.blocks.views("ns", "a"))[-1].block.id
        await memory.blocks.mark_ready(block_id)
        await seal_thread(memory, "a")
    report = await memory.events.agent_blocks("ns", "a")
    assert [v.current_level for v in report.blocks] == [4, 5, 5]
    assert report.empty_reason is None and report.status()["openTailCount"] == 0
    everywhere = await memory.events.agent_blocks("ns", "b", scope="namespace")
    assert len(everywhere.blocks) == 3 and everywhere.open_tail_count == 2


async def test_get_blocks_lists_the_newest_ready_blocks_and_counts_the_rest(
    memory: StrataGate,
) -> None:
    for thread in ("b", "a", "b", "c", "a", "b"):  # blocks sealed in this order
        await seal_thread(memory, thread)
        await memory.blocks.mark_ready((await memory.blocks.views("ns", thread))[-1].block.id)
    await memory.blocks.append_turn("ns", "c", user="unsealed", assistant="ok")
    here = await memory.events.agent_blocks("ns", "b", limit=2)
    assert [v.block.thread_sequence for v in here.blocks] == [2, 3]  # oldest first
    assert here.status()["omittedBlockCount"] == 1 and here.open_tail_count == 0
    everywhere = await memory.events.agent_blocks("ns", "b", scope="namespace", limit=4)
    assert [v.block.sequence for v in everywhere.blocks] == [3, 4, 5, 6]
    assert everywhere.omitted_block_count == 2 and everywhere.open_tail_count == 2
    assert everywhere.namespace_thread_ids == ["b", "a", "c"]  # by their first block
    assert everywhere.namespace_block_count == 6
    older = await memory.events.agent_blocks("ns", "b", scope="namespace", limit=4, offset=4)
    assert [v.block.sequence for v in older.blocks] == [1, 2]
    assert (older.status()["offset"], older.omitted_block_count) == (4, 0)
    with pytest.raises(InvalidInput, match="offset"):
        await memory.events.agent_blocks("ns", "b", offset=-1)
    whole = await memory.events.agent_blocks("ns", "a")
    assert [v.block.thread_id for v in whole.blocks] == ["a", "a"]
    assert whole.omitted_block_count == 0


async def test_long_queries_prefilter_on_their_rarest_tokens(memory: StrataGate) -> None:
    await memory.blocks.append_turn("ns", "t", user="hello")
    common = " ".join(f"word{i}" for i in range(20))
    await store(memory, card("evt_kiln", "kiln firing"), card("evt_common", common))
    hits = await memory.events.search("ns", f"{common} kiln")
    assert {h.card.id for h in hits} == {"evt_kiln", "evt_common"}
    rare = await memory.events.search("ns", " ".join(f"zz{i}" for i in range(20)) + " kiln")
    assert [h.card.id for h in rare] == ["evt_kiln"]


WORDS = ["kiln", "oven", "glaze", "clay", "wheel", "fire", "ash", "slip"]


def corpus() -> list[EventCard]:
    """Twenty-four events over a small vocabulary, both pools, varied lengths."""
    events = []
    for i in range(24):
        title = " ".join(WORDS[(i + k) % len(WORDS)] for k in range(1 + i % 3))
        summary = " ".join(WORDS[(i * k) % len(WORDS)] for k in range(2 + i % 5))
        pool = "agent" if i % 5 == 0 else "conversation"
        events.append(card(f"e{i:02}", title, summary, pool=pool, tags=[WORDS[i % 4]]))
    return events


@pytest.mark.parametrize("query", ["kiln", "glaze ash", "slip wheel fire kiln", "zebra"])
@pytest.mark.parametrize("offset", [0, 3])
def test_rank_plain_equals_rank_events_for_plain_queries(query: str, offset: int) -> None:
    events = corpus()
    request = search(query, offset=offset, limit=5, agent_weight=0.5)
    assert is_plain(request)
    pools: dict[str, dict[str, Document]] = {}
    for event in events:
        pools.setdefault(event.pool, {})[event.id] = counted_document(event_tokens(event))
    expected = [(h.card.id, h.rank_score) for h in rank_events(events, request, 0)]
    assert rank_plain(pools, request) == expected


@pytest.mark.sqlite_only(
    reason="drops the FTS5 table and the stored documents from the file to force SQLite's full scan"
)
async def test_search_with_index_and_stored_documents_equals_a_full_scan(
    memory: StrataGate,
) -> None:
    await memory.blocks.append_turn("ns", "t", user="hello")
    await store(memory, *corpus())
    queries = ["kiln", "glaze ash", "the slip wheel fire", "clay oven kiln ash"]
    indexed = [await memory.events.search("ns", q, limit=20) for q in queries]
    plain = sqlite3.connect(memory.db.path)
    plain.execute("DROP TABLE event_fts")
    plain.execute("DELETE FROM event_documents")
    plain.commit()
    plain.close()
    scanned = [await memory.events.search("ns", q, limit=20) for q in queries]
    assert all(indexed)
    for a, b in zip(indexed, scanned, strict=True):
        assert [(h.card.id, h.rank_score) for h in a] == [(h.card.id, h.rank_score) for h in b]


async def test_stale_stored_documents_are_not_trusted(
    memory: StrataGate, plain: sqlite3.Connection
) -> None:
    await memory.blocks.append_turn("ns", "t", user="hello")
    await store(memory, card("evt_a", "kiln"), card("evt_b", "oven kiln"))
    stored = plain.execute("SELECT COUNT(*) FROM event_documents").fetchone()[0]
    plain.execute("UPDATE events SET title = 'oven', updated_at = '2030-01-01' WHERE id = 'evt_a'")
    plain.commit()
    hits = await memory.events.search("ns", "kiln", track_retrieval=False)
    assert stored == 2 and [h.card.id for h in hits] == ["evt_b"]


async def test_stored_counts_read_alike_for_few_and_many_asked_tokens(
    memory: StrataGate, plain: sqlite3.Connection
) -> None:
    await memory.blocks.append_turn("ns", "t", user="hello")
    await store(memory, card("evt_a", "kiln glaze", "ash kiln"), card("evt_b", "oven"))
    rows = plain.execute("SELECT * FROM events ORDER BY pk").fetchall()
    few = query_tokens("kiln oven zebra")
    many = few + [f"w:pad{i}" for i in range(event_documents.EXTRACT_TOKENS)]
    version = EVENT_RULES.document_version
    extracted = event_documents.stored_documents(plain, rows, few, version)
    walked = event_documents.stored_documents(plain, rows, many, version)
    kiln, oven, _ = few
    assert extracted == walked
    assert set(extracted["evt_a"][0]) == {kiln} and set(extracted["evt_b"][0]) == {oven}
    assert extracted["evt_a"][0][kiln] > 1 and extracted["evt_a"][1] > extracted["evt_b"][1]


async def test_prefilter_keeps_to_the_rarest_terms_within_the_budget(
    memory: StrataGate, monkeypatch: pytest.MonkeyPatch
) -> None:
    await memory.blocks.append_turn("ns", "t", user="hello")
    await store(memory, *[card(f"e{i}", f"common word {i}") for i in range(6)])
    await store(memory, card("evt_rare", "common kiln"))
    monkeypatch.setattr(search_index, "POSTING_BUDGET", 3)
    found = await memory.db.read(
        lambda raw: search_index.prefilter(raw, "event_fts", ["w:kiln", "w:common", "w:zebra"])
    )
    assert found == search_index.Prefilter(fts_match_any(["w:kiln"]), ranked=True)
    hits = await memory.events.search("ns", "common kiln")
    assert [h.card.id for h in hits] == ["evt_rare"]
    over = await memory.db.read(lambda raw: search_index.prefilter(raw, "event_fts", ["w:common"]))
    assert over == search_index.Prefilter(fts_match_any(["w:common"]), ranked=False)
    assert len(await memory.events.search("ns", "common")) == 6
    assert (
        await memory.db.read(lambda raw: search_index.prefilter(raw, "event_fts", ["w:zebra"]))
        is None
    )
