"""Closed word categories: cues in questions, member terms, and their weak votes in retrieval."""

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from stratagate_plugin.core.config import MemoryConfig
from stratagate_plugin.core.memory import StrataGate
from stratagate_plugin.core.records import MessageIn
from stratagate_plugin.core.retrieval.query import parse_query
from stratagate_plugin.core.retrieval.raw_channel import RawChannelConfig
from stratagate_plugin.core.retrieval.storage import ChannelQuery
from stratagate_plugin.core.text.search_terms import query_tokens
from stratagate_plugin.core.text.word_categories import category_terms, named_categories

NS = "space"


@pytest.mark.parametrize(
    ("question", "names"),
    [
        ("What European countries has Maria been to?", ["european countries"]),
        ("What country is her grandma from?", ["countries"]),
        ("玛丽亚去过哪些欧洲国家？", ["european countries"]),
        ("Which cities has Jon visited?", ["cities"]),
        ("乔恩访问过哪些城市？", ["cities"]),
        ("What states has Maria vacationed at?", ["us states"]),
        ("What martial arts has John done?", ["martial arts"]),
        ("约翰练过哪些武术？", ["martial arts"]),
        ("Which sport does she play?", ["sports"]),
        ("她会更喜欢国家公园还是主题公园？", []),  # a national park is no country
        ("What did Melanie paint recently?", []),
    ],
)
def test_named_categories_reads_english_and_chinese_cues(question: str, names: list[str]) -> None:
    assert [category.name for category in named_categories(question)] == names


def test_category_terms_are_member_tokens_with_chinese_pairs_only() -> None:
    european = category_terms("Which European countries?")
    assert {"w:spain", "w:england", "h2:西班", "h2:班牙"} <= set(european)
    assert "w:japan" not in european  # the continent narrows the countries
    assert "w:japan" in category_terms("Which countries?")
    assert not any(term.startswith("h1:") for term in european)
    assert len(european) == len(set(european))
    assert category_terms("What did she paint?") == []


async def _record(sg: StrataGate, lines: list[str]) -> list[str]:
    ids: list[str] = []
    start = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
    for hour, (user, assistant) in enumerate(zip(lines[::2], lines[1::2], strict=True)):
        messages = [
            MessageIn(role="user", content=user),
            MessageIn(role="assistant", content=assistant),
        ]
        receipt = await sg.blocks.record_turn(NS, "t", messages, at=start + timedelta(hours=hour))
        ids += receipt.message_ids
    await sg.blocks.seal_tail(NS, "t")
    return ids


@pytest.fixture
async def travels(tmp_path: Path) -> AsyncIterator[tuple[StrataGate, list[str]]]:
    sg = await StrataGate.open(tmp_path / "memory.db", MemoryConfig(block_turn_size=2))
    ids = await _record(
        sg,
        [
            "Maria: Last year I took this pic in Spain.",
            "John: Gorgeous light!",
            "Maria: I love my garden, the roses are out.",
            "John: Roses are my favourite.",
            "Maria: The trip to England gave me the castle idea.",
            "John: Castles are magic.",
            "Maria: Some countries have lovely gardens, I hear.",
            "John: True.",
        ],
    )
    yield sg, ids
    await sg.close()


async def test_a_category_question_finds_messages_naming_only_a_member(
    travels: tuple[StrataGate, list[str]],
) -> None:
    sg, ids = travels
    question = "What European countries has Maria been to?"
    found = [mid for mid, _ in await sg.retrieval.raw_channel(NS, parse_query(question), 10)]
    garden = found.index(ids[2])  # a neighbour of matches, naming no country
    assert found.index(ids[0]) < garden and found.index(ids[4]) < garden  # Spain, England
    assert found.index(ids[6]) < found.index(ids[0])  # the category word itself counts fully
    plain = RawChannelConfig(category_weight=0.0)
    without = [
        mid for mid, _ in await sg.retrieval.raw_channel(NS, parse_query(question), 10, plain)
    ]
    assert ids[0] not in without


async def test_member_candidates_are_fetched_apart_from_the_question_terms(
    travels: tuple[StrataGate, list[str]],
) -> None:
    sg, ids = travels
    terms = query_tokens("countries")
    weak = category_terms("countries")
    query = ChannelQuery(tuple(terms), 1, 0, tuple(weak), 5)
    docs, stats = await sg.retrieval.channel_docs(NS, query)
    assert {doc.id for doc in docs} == {ids[0], ids[4], ids[6]}
    assert set(stats.message_df) == {"w:country", "w:spain", "w:england"}  # present terms only
    none, _ = await sg.retrieval.channel_docs(NS, ChannelQuery(tuple(terms), 1, 0, tuple(weak), 0))
    assert [doc.id for doc in none] == [ids[6]]
