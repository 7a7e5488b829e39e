"""``retrieve()``: channels per id, no-match, no reinforcement, fusion order (tiny database)."""

import sqlite3
import sys
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from cards import event_card

from stratagate_plugin.core.events.cards import EventCard
from stratagate_plugin.core.events.documents import EVENT_RULES
from stratagate_plugin.core.memory import StrataGate
from stratagate_plugin.core.records import MessageIn
from stratagate_plugin.core.retrieval.bm25 import rrf_rank
from stratagate_plugin.core.retrieval.fused import CHANNELS, FusionConfig
from stratagate_plugin.core.retrieval.query import parse_query, question_windows
from stratagate_plugin.core.retrieval.raw_channel import RAW_CHANNEL
from stratagate_plugin.core.store import event_rows
from stratagate_plugin.core.text.search_terms import query_tokens
from stratagate_plugin.core.text.temporal.resolve import find_time_expressions
from stratagate_plugin.core.text.word_categories import category_terms

T0 = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
NS = "ns"


async def thread(
    memory: StrataGate, thread_id: str, turns: list[tuple[str, str]], start: datetime = T0
) -> list[str]:
    """Record ``turns`` in ``thread_id`` from ``start`` and seal them; the message ids in order."""
    ids: list[str] = []
    for hour, (user, assistant) in enumerate(turns):
        at = start + timedelta(hours=hour)
        messages = [
            MessageIn(role="user", content=user),
            MessageIn(role="assistant", content=assistant),
        ]
        ids.extend((await memory.blocks.record_turn(NS, thread_id, messages, at=at)).message_ids)
    await memory.blocks.seal_tail(NS, thread_id)
    return ids


def card(event_id: str, title: str, cited: list[str], **extra: Any) -> EventCard:
    fields = {"created_at": T0, "updated_at": T0} | extra
    return event_card(
        event_id, namespace=NS, title=title, summary=title, source_message_ids=cited, **fields
    )


async def store(memory: StrataGate, *cards: EventCard) -> None:
    def unit(raw: sqlite3.Connection) -> None:
        for event in cards:
            event_rows.insert_event(raw, event, EVENT_RULES)

    await memory.db.write(unit)


@pytest.fixture
async def world(memory: StrataGate) -> dict[str, str]:
    """Two threads saying the same pottery line; an event cites the older one."""
    first = await thread(memory, "a", [("I love pottery", "Nice"), ("Weather is grey", "Sad")])
    second = await thread(memory, "b", [("I love pottery", "Cool"), ("Lunch was soup", "Yum")])
    await store(memory, card("evt_kiln", "pottery kiln class", [first[0]]))
    return {"old pottery": first[0], "new pottery": second[0], "soup": second[2]}


async def test_retrieve_records_each_channel_that_found_an_id(
    memory: StrataGate, world: dict[str, str]
) -> None:
    hits = await memory.retrieval.retrieve(NS, "pottery")
    rankings = await memory.retrieval.channel_rankings(NS, "pottery", 20, FusionConfig())
    assert hits
    for hit in hits:
        assert hit.channels == [name for name in CHANNELS if hit.message_id in rankings[name]]
    by_id = {hit.message_id: hit.channels for hit in hits}
    assert by_id[world["old pottery"]] == ["raw", "event"]
    assert by_id[world["new pottery"]] == ["raw"]


@pytest.mark.parametrize("query", ["", "   ", "?!", "xylophone"])
async def test_retrieve_no_match_is_empty(
    memory: StrataGate, world: dict[str, str], query: str
) -> None:
    assert await memory.retrieval.retrieve(NS, query) == []


async def test_retrieve_never_reinforces_or_stamps_events(
    memory: StrataGate, world: dict[str, str], plain: sqlite3.Connection
) -> None:
    columns = "SELECT id, mention_count, last_adopted_turn, last_retrieved_at FROM events"
    before = [tuple(row) for row in plain.execute(columns)]
    assert await memory.retrieval.retrieve(NS, "pottery kiln")
    await memory.events.stamps.flush()
    assert [tuple(row) for row in plain.execute(columns)] == before


async def test_retrieve_event_vote_breaks_a_raw_tie(
    memory: StrataGate, world: dict[str, str]
) -> None:
    quiet = FusionConfig(event_weight=0, block_weight=0, event_boost=0)
    plain_order = [
        hit.message_id for hit in await memory.retrieval.retrieve(NS, "pottery", 2, quiet)
    ]
    assert plain_order == [world["new pottery"], world["old pottery"]]
    fused = [hit.message_id for hit in await memory.retrieval.retrieve(NS, "pottery", 2)]
    assert fused == [world["old pottery"], world["new pottery"]]


async def test_retrieve_is_the_weighted_rrf_of_the_channels(
    memory: StrataGate, world: dict[str, str]
) -> None:
    config = FusionConfig(raw_weight=1, event_weight=2, block_weight=0)
    rankings = await memory.retrieval.channel_rankings(NS, "pottery soup", 10, config)
    expected = rrf_rank([(rankings["raw"], 1.0), (rankings["event"], 2.0)])
    hits = await memory.retrieval.retrieve(NS, "pottery soup", 10, config)
    assert [h.message_id for h in hits] == [mid for mid, _ in expected[:10]]
    assert [h.score for h in hits] == pytest.approx([score for _, score in expected[:10]])
    assert world["soup"] in [hit.message_id for hit in hits]


@pytest.fixture
async def dated(memory: StrataGate) -> dict[str, str]:
    """The same pottery line on 1 March, 2 April and 1 May 2024 (the newest wins a tie)."""
    days = {
        "march": datetime(2024, 3, 1, 9, tzinfo=UTC),
        "april": datetime(2024, 4, 2, 9, tzinfo=UTC),
    }
    days["may"] = T0
    return {
        name: (await thread(memory, name, [("I love pottery", "Nice")], day))[0]
        for name, day in days.items()
    }


def top(hits: list[Any]) -> str:
    return str(hits[0].message_id)


async def test_retrieve_question_date_favours_messages_of_that_day(
    memory: StrataGate, dated: dict[str, str]
) -> None:
    assert top(await memory.retrieval.retrieve(NS, "pottery")) == dated["may"]
    assert top(await memory.retrieval.retrieve(NS, "pottery on 2 April 2024")) == dated["april"]
    assert top(await memory.retrieval.retrieve(NS, "2024年4月2日 pottery")) == dated["april"]


async def test_retrieve_month_without_year_is_the_last_one_before_the_newest_message(
    memory: StrataGate, dated: dict[str, str]
) -> None:
    assert top(await memory.retrieval.retrieve(NS, "pottery in March")) == dated["march"]


async def test_retrieve_question_date_favours_events_that_happened_then(
    memory: StrataGate, dated: dict[str, str]
) -> None:
    happened = {"happened_start": "2024-02-10T00:00:00+00:00", "precision": "day"}
    happened["happened_end"] = "2024-02-10T23:59:59+00:00"
    await store(memory, card("evt_feb", "glazing", [dated["april"]], temporal=happened))
    assert top(await memory.retrieval.retrieve(NS, "pottery on 10 February 2024")) == dated["april"]


@pytest.mark.parametrize("query", ["xylophone on 2 April 2024", "on 2 April 2024"])
async def test_retrieve_date_alone_never_makes_a_match(
    memory: StrataGate, dated: dict[str, str], query: str
) -> None:
    assert await memory.retrieval.retrieve(NS, query) == []


@pytest.mark.parametrize(
    ("question", "days"),
    [
        ("What did she paint on 13 October 2023?", [(13, 13)]),
        ("Where did he go in October?", [(1, 31)]),
        ("What did he do last weekend before 10 October 2023?", [(10, 10)]),
        ("他2023年10月13日画了什么？", [(13, 13)]),
        ("What did she paint?", []),
    ],
)
def test_question_windows_resolve_against_the_reference(
    question: str, days: list[tuple[int, int]]
) -> None:
    windows = question_windows(question, datetime(2023, 11, 20, tzinfo=UTC))
    assert [(w.start.day, w.end.day) for w in windows] == days
    assert all(w.start.month == w.end.month == 10 for w in windows)


async def test_retrieve_ranks_raw_messages_with_the_configured_raw_channel(
    memory: StrataGate,
) -> None:
    """The fusion settings carry the raw channel's: without the neighbour vote and the
    predecessor's terms, a reply that only follows a match is not found."""
    pottery, reply = (await thread(memory, "a", [("I love pottery", "Nice")]))[:2]
    found = [hit.message_id for hit in await memory.retrieval.retrieve(NS, "pottery")]
    context_free = replace(RAW_CHANNEL, neighbour_weight=0.0, expansion_weight=0.0)
    silent = FusionConfig(raw_channel=context_free)
    alone = [
        hit.message_id for hit in await memory.retrieval.retrieve(NS, "pottery", config=silent)
    ]
    assert found[0] == pottery and reply in found
    assert alone == [pottery]


async def test_search_raw_ranked_gives_retrieve_order_as_raw_hits(memory: StrataGate) -> None:
    ids = await thread(memory, "a", [("I love pottery", "Nice"), ("Weather is grey", "Sad")])
    hits = await memory.retrieval.search_raw_ranked(NS, "pottery", 6)
    fused = await memory.retrieval.retrieve(NS, "pottery", 6)
    assert [(h.message.id, h.score) for h in hits] == [(f.message_id, f.score) for f in fused]
    first = hits[0]
    assert first.message.id == ids[0] and first.previous is None
    assert first.next is not None and first.next.id == ids[1]
    assert ids[1] in [hit.message.id for hit in hits]  # the reply, by its context
    assert len(await memory.retrieval.search_raw_ranked(NS, "pottery", 1)) == 1
    assert await memory.retrieval.search_raw_ranked(NS, "pottery", 0) == []
    assert await memory.retrieval.search_raw_ranked(NS, "xylophone") == []
    assert await memory.retrieval.search_raw_ranked("elsewhere", "pottery") == []


async def test_latest_message_time_is_the_newest_thread_end(memory: StrataGate) -> None:
    await thread(memory, "late", [("pottery", "ok")], start=T0 + timedelta(days=3))
    await thread(memory, "early", [("kiln", "ok")], start=T0)
    await memory.blocks.append_turn(
        NS, "open", user="hi", assistant="yo", at=T0 + timedelta(days=1)
    )
    latest = await memory.storage.retrieval.latest_message_time(NS)
    assert latest == T0 + timedelta(days=3)
    assert await memory.storage.retrieval.latest_message_time("nowhere") is None


async def test_block_channel_reads_only_the_blocks_of_raw_hits(memory: StrataGate) -> None:
    """A block whose summary matches but none of whose messages the raw channel found is
    not read; the blocks of raw hits are ranked by their summaries."""
    hit = await thread(memory, "a", [("I love pottery", "Nice")])
    other = await thread(memory, "b", [("Weather is grey", "pottery too")])

    def ready(raw: sqlite3.Connection) -> None:
        raw.execute("UPDATE blocks SET processing_status = 'ready', l1_summary = 'pottery pottery'")

    await memory.db.write(ready)
    found = await memory.retrieval.block_channel([hit[0]], parse_query("pottery"), 5)
    assert found == [hit[0]]
    both = await memory.retrieval.block_channel([hit[0], other[1]], parse_query("pottery"), 5)
    assert set(both) == {hit[0], other[1]}
    assert await memory.retrieval.block_channel([], parse_query("pottery"), 5) == []


def count_calls(monkeypatch: pytest.MonkeyPatch, function: Any) -> list[tuple[Any, ...]]:
    """Calls of ``function`` through every StrataGate module that imported it."""
    calls: list[tuple[Any, ...]] = []

    def counting(*args: Any, **kwargs: Any) -> Any:
        calls.append(args)
        return function(*args, **kwargs)

    for module in list(sys.modules.values()):
        name = getattr(module, "__name__", "")
        if name.startswith("stratagate_plugin") and getattr(module, function.__name__, None) is (
            function
        ):
            monkeypatch.setattr(module, function.__name__, counting)
    return calls


async def test_retrieve_parses_its_question_once(
    memory: StrataGate, world: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Terms, category members and dates are read off the question once for all channels."""
    question = "Which European countries did I visit on 1 May 2024 for pottery?"
    parsers = (query_tokens, category_terms, find_time_expressions)
    calls = {parse.__name__: count_calls(monkeypatch, parse) for parse in parsers}
    assert await memory.retrieval.retrieve(NS, question, 10)
    assert {name: sum(question in args for args in made) for name, made in calls.items()} == {
        "query_tokens": 1,
        "category_terms": 1,
        "find_time_expressions": 1,
    }
