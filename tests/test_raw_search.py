"""Raw-message search and the raw retrieval channel through a real database file."""

import sqlite3
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from stratagate_plugin.core.config import MemoryConfig
from stratagate_plugin.core.memory import StrataGate
from stratagate_plugin.core.records import MessageIn
from stratagate_plugin.core.retrieval.query import parse_query
from stratagate_plugin.core.retrieval.raw_channel import (
    RAW_CHANNEL,
    ChannelDoc,
    RawChannelConfig,
    context_rank,
    scan_stats,
    speaker_label,
)
from stratagate_plugin.core.retrieval.storage import ChannelQuery
from stratagate_plugin.core.store import search_index
from stratagate_plugin.core.text.search_terms import query_tokens, tokenize

START = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
NS = "space"


async def _turn(sg: StrataGate, thread: str, user: str, assistant: str, hour: int) -> list[str]:
    at = START + timedelta(hours=hour)
    messages = [
        MessageIn(role="user", content=user),
        MessageIn(role="assistant", content=assistant),
    ]
    receipt = await sg.blocks.record_turn(NS, thread, messages, at=at)
    return receipt.message_ids


@pytest.fixture
async def world(tmp_path: Path) -> AsyncIterator[tuple[StrataGate, dict[str, str]]]:
    """Two-turn blocks: thread t1 has 2 sealed turns and 1 open; t2 has 2 sealed turns."""
    sg = await StrataGate.open(tmp_path / "memory.db", MemoryConfig(block_turn_size=2))
    ids: dict[str, str] = {}
    turns = [
        ("t1", "I adopted a puppy named Rex", "What breed is the puppy?", 0),
        ("t1", "A beagle, he loves the park", "Parks are great for beagles", 1),
        ("t1", "Rex chewed my violin case", "Oh no, the violin!", 2),
        ("t2", "My sister plays violin", "Lovely instrument", 3),
        ("t2", "She performs on Friday", "Good luck to her", 4),
    ]
    for thread, user, assistant, hour in turns:
        first, second = await _turn(sg, thread, user, assistant, hour)
        ids[user], ids[assistant] = first, second
    yield sg, ids
    await sg.close()


async def test_search_raw_finds_only_sealed_messages(
    world: tuple[StrataGate, dict[str, str]],
) -> None:
    sg, ids = world
    hits = await sg.retrieval.search_raw(NS, "violin")
    assert [hit.message.id for hit in hits] == [ids["My sister plays violin"]]
    assert await sg.retrieval.search_raw(NS, "chewed") == []


async def test_search_raw_hit_carries_block_turns_and_neighbours(
    world: tuple[StrataGate, dict[str, str]],
) -> None:
    sg, ids = world
    [hit] = await sg.retrieval.search_raw(NS, "breed")
    assert hit.message.id == ids["What breed is the puppy?"]
    assert hit.message.role == "assistant" and hit.message.thread_id == "t1"
    assert hit.turn_range == (1, 2)
    assert hit.previous is not None and hit.previous.id == ids["I adopted a puppy named Rex"]
    assert hit.next is not None and hit.next.id == ids["A beagle, he loves the park"]
    assert hit.score > 0


async def test_search_raw_thread_scope(world: tuple[StrataGate, dict[str, str]]) -> None:
    sg, _ = world
    assert await sg.retrieval.search_raw(NS, "violin", thread_id="t1") == []
    scoped = await sg.retrieval.search_raw(NS, "beagle", thread_id="t1")
    assert {hit.message.thread_id for hit in scoped} == {"t1"}
    assert await sg.retrieval.search_raw("other", "beagle") == []


@pytest.mark.parametrize("query", ["", "   ", "?!", "xylophone"])
async def test_search_raw_no_match_is_empty(
    world: tuple[StrataGate, dict[str, str]], query: str
) -> None:
    sg, _ = world
    assert await sg.retrieval.search_raw(NS, query) == []
    assert await sg.retrieval.raw_channel(NS, parse_query(query), 10) == []


async def test_search_raw_ties_prefer_newer_messages(tmp_path: Path) -> None:
    async with await StrataGate.open(tmp_path / "m.db", MemoryConfig(block_turn_size=1)) as sg:
        old = await _turn(sg, "t", "same words here", "x", 0)
        new = await _turn(sg, "t", "same words here", "y", 5)
        hits = await sg.retrieval.search_raw(NS, "words")
    assert [hit.message.id for hit in hits] == [new[0], old[0]]


@pytest.mark.sqlite_only(reason="drops the FTS5 table from the file to force SQLite's full scan")
async def test_search_raw_without_fts_table_gives_the_same_order(
    world: tuple[StrataGate, dict[str, str]],
) -> None:
    sg, _ = world
    query = "the puppy beagle park violin"
    with_index = await sg.retrieval.search_raw(NS, query, limit=10)
    plain = sqlite3.connect(sg.db.path)
    plain.execute("DROP TABLE message_fts")
    plain.commit()
    plain.close()
    scanned = await sg.retrieval.search_raw(NS, query, limit=10)
    assert len(with_index) > 2
    assert [h.message.id for h in scanned] == [h.message.id for h in with_index]
    assert [h.score for h in scanned] == pytest.approx([h.score for h in with_index])


async def test_retrieve_raw_adds_neighbours_of_matches(
    world: tuple[StrataGate, dict[str, str]],
) -> None:
    sg, ids = world
    query = parse_query("what breed is the puppy")
    ranked = await sg.retrieval.raw_channel(NS, query, 10, current_thread="t1")
    found = [message_id for message_id, _ in ranked]
    assert found[0] == ids["What breed is the puppy?"]
    assert ids["A beagle, he loves the park"] in found
    assert ids["Rex chewed my violin case"] not in found  # t1's own open tail
    elsewhere = [message_id for message_id, _ in await sg.retrieval.raw_channel(NS, query, 10)]
    assert ids["Rex chewed my violin case"] in elsewhere  # a neighbour in another's view
    assert all(score > 0 for _, score in ranked)
    assert len(await sg.retrieval.raw_channel(NS, parse_query("violin"), 1)) == 1


async def test_search_raw_prefilters_on_the_rarest_terms_within_the_budget(
    world: tuple[StrataGate, dict[str, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    sg, ids = world
    full = await sg.retrieval.search_raw(NS, "the beagle", limit=10)
    monkeypatch.setattr(search_index, "POSTING_BUDGET", 2)
    capped = await sg.retrieval.search_raw(NS, "the beagle", limit=10)
    assert len(full) > len(capped) == 2
    assert {h.message.id for h in capped} == {
        ids["A beagle, he loves the park"],
        ids["Parks are great for beagles"],
    }
    assert all("beagle" in h.message.content.lower() for h in capped)
    assert await sg.retrieval.search_raw(NS, "the") != []  # over budget alone: newest first


async def _ranked_both_ways(sg: StrataGate, query: str) -> tuple[list[Any], list[Any]]:
    terms = query_tokens(query)

    reach = RAW_CHANNEL.context_reach
    query = ChannelQuery(tuple(terms), 3000, reach)
    indexed = context_rank(terms, *await sg.retrieval.channel_docs(NS, query))
    scan = ChannelQuery(tuple(terms), 0, 0, scan=True)
    scanned = context_rank(terms, *await sg.retrieval.channel_docs(NS, scan))
    return indexed, scanned


@pytest.mark.parametrize("query", ["puppy", "the puppy beagle park violin", "friday sister"])
async def test_retrieve_raw_candidates_rank_like_a_full_scan(
    world: tuple[StrataGate, dict[str, str]], query: str
) -> None:
    sg, _ = world
    indexed, scanned = await _ranked_both_ways(sg, query)
    assert indexed
    assert [mid for mid, _ in indexed] == [mid for mid, _ in scanned]
    assert [s for _, s in indexed] == pytest.approx([s for _, s in scanned])


async def test_retrieve_raw_candidate_cap_keeps_statistics_of_the_whole_namespace(
    world: tuple[StrataGate, dict[str, str]],
) -> None:
    sg, _ = world
    terms = query_tokens("beagle")
    docs, stats = await sg.retrieval.channel_docs(
        NS, ChannelQuery(tuple(terms), 1, 2, current_thread="t1")
    )
    assert 1 < len(docs) <= 1 + 2 * 2  # one capped match and its neighbours within 2
    assert (stats.messages, stats.blocks, stats.message_df) == (8, 2, {"w:beagl": 2})
    _docs, with_tail = await sg.retrieval.channel_docs(NS, ChannelQuery(tuple(terms), 1, 2))
    assert (with_tail.messages, with_tail.blocks) == (10, 3)  # t1's tail counts as a block


async def test_retrieve_raw_context_reaches_two_positions_past_the_reply(
    world: tuple[StrataGate, dict[str, str]],
) -> None:
    sg, ids = world
    found = dict(await sg.retrieval.raw_channel(NS, parse_query("adopted"), 10))
    reply = found[ids["What breed is the puppy?"]]  # scored by its predecessor's terms
    assert (
        found[ids["I adopted a puppy named Rex"]]
        > reply
        > found[ids["Parks are great for beagles"]]
    )
    assert ids["Rex chewed my violin case"] not in found
    assert set(found) <= {ids[text] for text in list(ids)[:4]}


def _docs(threads: dict[str, list[str]]) -> list[ChannelDoc]:
    """Hand-made sealed messages, one block per thread, tokenized like the store does."""
    return [
        ChannelDoc(
            f"{thread}{i}",
            thread,
            f"b_{thread}",
            i,
            0,
            tokenize(text),
            tuple(tokenize(speaker_label(text))),
        )
        for thread, texts in threads.items()
        for i, text in enumerate(texts)
    ]


def _scores(
    query: str, docs: list[ChannelDoc], config: RawChannelConfig = RAW_CHANNEL
) -> dict[str, float]:
    terms = query_tokens(query)
    return dict(context_rank(terms, docs, scan_stats(docs, terms), config))


def _rank(query: str, docs: list[ChannelDoc]) -> list[str]:
    terms = query_tokens(query)
    return [doc_id for doc_id, _ in context_rank(terms, docs, scan_stats(docs, terms))]


@pytest.mark.parametrize(
    ("content", "label"),
    [("Caroline: hi", "Caroline"), ("Note 3: buy milk", ""), ("no label here", "")],
)
def test_speaker_label_is_a_short_leading_name(content: str, label: str) -> None:
    assert speaker_label(content) == label


def test_context_rank_favours_the_named_speaker_over_mentions_of_the_name() -> None:
    docs = _docs(
        {
            "a": ["Melanie: Caroline, Caroline loves pottery!", "Melanie: bye"],
            "b": ["Caroline: I love pottery", "Caroline: bye", "Caroline: see you"],
            "c": ["Melanie: Caroline! Caroline!", "Melanie: bye"],
        }
    )
    ranked = _rank("What does Caroline love about pottery?", docs)
    assert ranked[0] == "b0" and "a0" in ranked
    assert not {"c0", "c1"} & set(ranked)  # the name alone is not a topical match
    assert _rank("Caroline xylophone", docs) == []


def test_a_one_off_label_is_a_topic_not_a_speaker() -> None:
    docs = _docs(
        {
            "a": ["Reminder: glaze recipe", "Sam: ok", "Sam: got it", "Sam: thanks"],
            "b": ["Sam: my reminder on the glaze recipe is in the pottery book"],
        }
    )
    silent = RawChannelConfig(speaker_weight=0.0)
    # "Reminder" labels one message: "reminder" stays a topic term and earns no speaker vote
    assert _scores("reminder on glaze", docs) == _scores("reminder on glaze", docs, silent)
    assert _scores("reminder on glaze", docs, RawChannelConfig(speaker_min_messages=1)) != (
        _scores("reminder on glaze", docs, silent)
    )
    # "Sam" labels four messages: a speaker, whose message gains the vote
    voted, plain = _scores("Sam glaze", docs), _scores("Sam glaze", docs, silent)
    assert voted["b0"] == pytest.approx(plain["b0"] + RawChannelConfig().speaker_weight)


def test_context_rank_scores_a_reply_by_its_predecessor_terms() -> None:
    docs = _docs({"t": ["Yes!", "Did you adopt the puppy?", "Last week!"]})
    ranked = dict(context_rank(["w:puppy"], docs, scan_stats(docs, ["w:puppy"])))
    assert ranked["t1"] > ranked["t2"] > ranked["t0"] > 0
