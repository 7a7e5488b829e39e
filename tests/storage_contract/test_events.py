"""``EventsStorage``: in one read, search candidates with stored counts, links and cards;
expansion, listings, stamps, block counts."""

import pytest

from stratagate_plugin.core.errors import NotFound
from stratagate_plugin.core.events.storage import CandidateQuery, SearchCandidates
from stratagate_plugin.core.memory import StrataGate
from stratagate_plugin.core.retrieval.query import parse_query

NS = "contract"
POOLS = ("conversation", "agent")


async def _remember(engine: StrataGate, *texts: str) -> list[str]:
    return [(await engine.remember.save(NS, "t", text)).event_id for text in texts]


async def _candidates(engine: StrataGate, query: CandidateQuery) -> SearchCandidates:
    return await engine.storage.events.read(lambda reader: reader.candidates(NS, query))


async def _candidate_ids(engine: StrataGate, query: CandidateQuery) -> list[str]:
    return [candidate.id for candidate in (await _candidates(engine, query)).candidates]


async def test_candidates_share_a_term_and_carry_the_terms_stored_counts(
    engine: StrataGate,
) -> None:
    kiln, porto = await _remember(engine, "The kiln fires on Fridays.", "Ana lives in Porto.")
    tokens = tuple(parse_query("kiln").terms)
    found = await _candidates(engine, CandidateQuery(POOLS, tokens, 10))
    assert [c.id for c in found.candidates] == [kiln]
    [candidate] = found.candidates
    assert candidate.card is None and candidate.superseded_by is None
    assert candidate.document is not None and set(candidate.document[0]) <= set(tokens)
    assert candidate.fields is None and found.current_turn >= 0  # stored: nothing to decode
    with_cards = CandidateQuery(POOLS, tokens, 10, with_cards=True)
    [carded] = (await _candidates(engine, with_cards)).candidates
    assert carded.card is not None and carded.card.id == kiln and carded.fields is None
    nothing = tuple(parse_query("zebra").terms)
    assert await _candidate_ids(engine, CandidateQuery(POOLS, nothing, 10)) == []
    assert porto not in await _candidate_ids(engine, CandidateQuery(POOLS, tokens, 10))


async def test_candidates_by_scope_by_check_or_whole_pools_are_unique_and_visible(
    engine: StrataGate,
) -> None:
    kiln, porto, beagle = await _remember(
        engine, "The kiln fires on Fridays.", "Ana lives in Porto.", "Biscuit is a beagle."
    )
    everything = await _candidate_ids(engine, CandidateQuery(POOLS, (), 10))
    assert sorted(everything) == sorted([kiln, porto, beagle])
    scoped = await _candidate_ids(engine, CandidateQuery(POOLS, (), 10, event_ids=[porto, porto]))
    assert scoped == [porto]

    def mentions_porto(title: str, summary: str, *_: object) -> bool:
        return "Porto" in title or "Porto" in summary

    checked = await _candidate_ids(engine, CandidateQuery(POOLS, (), 10, keep=mentions_porto))
    assert checked == [porto]
    await engine.gate.forget_event(porto)
    assert porto not in await _candidate_ids(engine, CandidateQuery(POOLS, (), 10))


async def test_a_lexical_cap_holds_per_pool(engine: StrataGate) -> None:
    await _remember(engine, "Kiln one is hot.", "Kiln two is cold.", "Kiln three is new.")
    capped = await _candidate_ids(engine, CandidateQuery(POOLS, parse_query("kiln").terms, 2))
    assert len(capped) == 2


async def test_links_and_visible_cards_follow_supersession(engine: StrataGate) -> None:
    [old] = await _remember(engine, "The launch is on April 20th.")
    corrected = await engine.curation.correct_event(
        old, title="Launch in May", summary="The launch moved to May."
    )
    assert corrected.card is not None
    new = corrected.card.id
    links = await engine.storage.events.read(
        lambda reader: reader.links(NS, [new, old, "evt_unknown"])
    )
    assert links == {old: new, new: None}
    cards = await engine.storage.events.read(
        lambda reader: reader.visible_cards(NS, [new, old, "evt_unknown"])
    )
    assert [card.id for card in cards] == sorted([old, new])
    await engine.gate.forget_event(new)
    assert await engine.storage.events.read(lambda reader: reader.links(NS, [new])) == {}
    assert await engine.storage.events.read(lambda r: r.visible_cards(NS, [new])) == []


async def test_a_card_its_expansion_and_listings(engine: StrataGate) -> None:
    first, second = await _remember(engine, "The kiln fires on Fridays.", "Ana lives in Porto.")
    assert (await engine.storage.events.card(first)).id == first
    card, messages = await engine.storage.events.expansion(first)
    assert card.id == first and [m.id for m in messages] == card.source_message_ids
    with pytest.raises(NotFound):
        await engine.storage.events.card("evt_unknown")
    with pytest.raises(NotFound):
        await engine.storage.events.expansion("evt_unknown")
    visible = ("active", "superseded")
    listed = await engine.storage.events.cards(NS, visible, None, 10, 0)
    assert [c.id for c in listed] == [first, second]
    assert [c.id for c in await engine.storage.events.cards(NS, visible, None, 1, 1)] == [second]
    await engine.gate.forget_event(first)
    assert [c.id for c in await engine.storage.events.cards(NS, visible, None, 10, 0)] == [second]
    hidden = await engine.storage.events.cards(NS, (*visible, "forgotten"), None, 10, 0)
    assert [c.id for c in hidden] == [first, second]


async def test_stamping_retrieval_sets_only_the_stamp(engine: StrataGate) -> None:
    [event_id] = await _remember(engine, "The kiln fires on Fridays.")
    before = await engine.storage.events.card(event_id)
    await engine.storage.events.stamp_retrieved({event_id: "2026-01-02T03:04:05+00:00"})
    await engine.storage.events.stamp_retrieved({event_id: "2026-01-02T03:04:05+00:00"})
    after = await engine.storage.events.card(event_id)
    assert after.last_retrieved_at is not None and after.last_retrieved_at.year == 2026
    assert (after.updated_at, after.mention_count) == (before.updated_at, before.mention_count)


async def test_block_counts_name_threads_with_blocks_and_unsealed_messages(
    engine: StrataGate,
) -> None:
    empty = await engine.storage.events.block_counts(NS, None)
    assert tuple(empty) == (0, [], 0)
    await engine.blocks.append_turn(NS, "a", user="Hello there.", assistant="Hi.")
    await engine.blocks.seal_tail(NS, "a")
    await engine.blocks.append_turn(NS, "b", user="Still open.", assistant="Yes.")
    counts = await engine.storage.events.block_counts(NS, None)
    assert (counts.namespace_block_count, counts.namespace_thread_ids) == (1, ["a"])
    assert counts.open_tail_count == 2
    assert (await engine.storage.events.block_counts(NS, "a")).open_tail_count == 0
