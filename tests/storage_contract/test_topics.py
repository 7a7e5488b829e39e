"""``TopicsStorage``: job claims (one per space, historical within the budget), leases,
failures and retries, the budget's state, and the catalog's record reads and writes inside
one read or write transaction (all or nothing)."""

from collections import Counter
from datetime import UTC, datetime, timedelta

import pytest

from stratagate_plugin.core.memory import StrataGate
from stratagate_plugin.core.text.search_terms import query_tokens
from stratagate_plugin.core.topics.storage import (
    ChapterText,
    QueuedBatch,
    SpareEntry,
    TopicsTransaction,
)
from stratagate_plugin.core.topics.unfiled import refile

NS = "contract"
T0 = datetime(2024, 1, 1, tzinfo=UTC)
LEASE = timedelta(minutes=5)
SAID = ("Ana lives in Porto.", "Ana adopted a dog named Biscuit.", "The kiln fires on Fridays.")


async def _saved(engine: StrataGate, *texts: str) -> list[str]:
    return [(await engine.remember.save(NS, "t", text)).event_id for text in texts]


async def _queued(engine: StrataGate, ids: list[str], historical: bool = False) -> str:
    batch = QueuedBatch(historical, None, ids)
    return await engine.storage.topics.write(lambda tx: tx.queue_batch(NS, batch, T0))


async def _drained(engine: StrataGate) -> None:
    """Whatever the engine queued on its own (each save's batch) run now."""
    await engine.topics.process()


async def test_a_write_is_all_or_nothing_and_a_read_sees_it(engine: StrataGate) -> None:
    ids = await _saved(engine, *SAID[:2])
    await _drained(engine)

    def fail(tx: TopicsTransaction) -> None:
        tx.queue_batch(NS, QueuedBatch(False, None, ids), T0)
        raise RuntimeError("the rule gave up")

    with pytest.raises(RuntimeError):
        await engine.storage.topics.write(fail)
    assert await engine.storage.topics.read(lambda tx: tx.topic_jobs(NS)) == []
    batch_id = await _queued(engine, ids)
    [(job, events)] = await engine.storage.topics.read(lambda tx: tx.topic_jobs(NS))
    assert job.target_id == batch_id and events == ids
    queued = await engine.storage.topics.read(lambda tx: tx.batch_of(batch_id))
    assert queued == QueuedBatch(False, None, ids)


async def test_one_job_per_space_is_claimed_and_its_lease_renewed_or_given_back(
    engine: StrataGate,
) -> None:
    ids = await _saved(engine, *SAID[:2])
    await _drained(engine)
    await _queued(engine, ids[:1])
    await _queued(engine, ids[1:])
    first = await engine.storage.topics.claim(T0, "a", LEASE, None)
    assert first is not None and first.namespace == NS
    assert await engine.storage.topics.claim(T0, "b", LEASE, None) is None  # one per space
    assert await engine.storage.topics.renew(first, T0 + 2 * LEASE) is True
    assert await engine.storage.topics.interrupt(first, T0) is True
    assert await engine.storage.topics.renew(first, T0 + LEASE) is False  # given back
    again = await engine.storage.topics.claim(T0, "b", LEASE, None)
    assert again is not None and again.id == first.id  # oldest first, retryable at once


async def test_a_failed_job_backs_off_and_an_exhausted_batch_is_queued_again(
    engine: StrataGate,
) -> None:
    [event] = await _saved(engine, SAID[0])
    await _drained(engine)
    await _queued(engine, [event])
    moment = T0
    for _ in range(5):
        job = await engine.storage.topics.claim(moment, "a", LEASE, None)
        if job is None:
            break
        failed = await engine.storage.topics.fail(job, "boom", moment, 0.0)
        assert failed is not None and failed.last_error == "boom"
        assert await engine.storage.topics.fail(job, "again", moment, 0.0) is None  # not held
        moment += timedelta(hours=1)
    assert await engine.storage.topics.retry_failed(NS, moment) == 1
    assert await engine.storage.topics.retry_failed(NS, moment) == 0
    [(fresh, events)] = await engine.storage.topics.read(lambda tx: tx.topic_jobs(NS))
    assert fresh.status == "pending" and fresh.attempts == 0 and events == [event]


async def test_historical_batches_wait_for_the_budget_and_the_ledger_is_kept(
    engine: StrataGate,
) -> None:
    [event] = await _saved(engine, SAID[0])
    await _drained(engine)
    assert await engine.storage.topics.budget_state(NS) == (0, None)
    await _queued(engine, [event], historical=True)
    assert (await engine.storage.topics.budget_state(NS))[0] == 1
    assert (await engine.storage.topics.budget_state(None))[0] == 1
    assert (await engine.storage.topics.budget_state("elsewhere"))[0] == 0
    refused = await engine.storage.topics.claim(T0, "a", LEASE, lambda ledger: (False, "L1"))
    assert refused is None and await engine.storage.topics.budget_state(NS) == (1, "L1")
    seen: list[str | None] = []

    def grant(ledger: str | None) -> tuple[bool, str]:
        seen.append(ledger)
        return True, "L2"

    granted = await engine.storage.topics.claim(T0, "a", LEASE, grant)
    assert granted is not None and seen == ["L1"]
    assert (await engine.storage.topics.budget_state(NS))[1] == "L2"


async def test_a_new_space_waits_for_its_bootstrap(engine: StrataGate) -> None:
    await _saved(engine, SAID[0])
    assert NS in await engine.storage.topics.spaces_to_bootstrap()
    await engine.topics.bootstrap()
    assert await engine.storage.topics.spaces_to_bootstrap() == []

    def state(tx: TopicsTransaction) -> tuple[bool, bool]:
        return tx.state_known(NS), tx.state_known("elsewhere")

    assert await engine.storage.topics.read(state) == (True, False)


async def test_chapters_their_members_and_the_unfiled_events_are_read_back(
    engine: StrataGate,
) -> None:
    ids = await _saved(engine, *SAID)
    await _drained(engine)

    def read(tx: TopicsTransaction) -> tuple[object, ...]:
        heads = tx.shown_texts(NS, 1.0)
        topics = tx.load_topics(NS)
        whole = tx.get_topic(heads[0].id)
        return heads, topics, whole, tx.topics_holding(ids), tx.chapter_titles(NS)

    heads, topics, whole, holding, titles = await engine.storage.topics.read(read)
    assert [h.id for h in heads] == [t.id for t in topics]  # type: ignore[attr-defined]
    assert await engine.storage.topics.read(_listed) == len(ids)
    assert whole.member_ids and set(holding) == set(ids)  # type: ignore[attr-defined]
    assert set(titles.values()) == {t.id for t in topics}  # type: ignore[attr-defined]
    assert await engine.storage.topics.read(lambda tx: tx.get_topic("topic_unknown")) is None
    assert await engine.storage.topics.read(lambda tx: tx.fallback_counts(NS, 1.0)) == {}


def _listed(tx: TopicsTransaction) -> int:
    """A page's reads agree with the whole list of chapters: how many members they hold."""
    heads = tx.shown_texts(NS, 1.0)
    same = [h for h in heads if h.category == heads[0].category]
    assert tx.shown_texts(NS, 1.0, heads[0].category, (1, 2)) == same[1:3]
    first: dict[str, ChapterText] = {}
    for head in heads:
        first.setdefault(head.category, head)
    counted = Counter(h.category for h in heads)
    assert tx.category_firsts(NS, 1.0) == [(h, counted[h.category]) for h in first.values()]
    return sum(tx.member_counts([h.id for h in heads]).values())


async def test_unfiled_events_are_counted_paged_and_matched(engine: StrataGate) -> None:
    ids = await _saved(engine, *SAID)  # queued, not yet in any chapter: unfiled
    await engine.storage.topics.write(refile)  # the saves marked them: filed by the rule

    def read(tx: TopicsTransaction) -> tuple[object, ...]:
        counts = tx.fallback_counts(NS, 1.0)
        every = tx.fallback_rows(NS, 1.0, None, (-1, 0))
        page = tx.fallback_rows(NS, 1.0, None, (1, 1))
        found = tx.matching_fallbacks(NS, 1.0, None, query_tokens("kiln"))
        return counts, every, page, found, tx.fallback_rows(NS, 1.0, "no-such", (-1, 0))

    counts, every, page, found, none = await engine.storage.topics.read(read)
    assert sum(counts.values()) == 3  # type: ignore[attr-defined]
    assert [row[0] for row in every] == ids  # type: ignore[attr-defined]
    assert page == [every[1]]  # type: ignore[index]
    assert [row[0] for row in found] == [ids[2]] and none == []  # type: ignore[attr-defined]


async def test_a_write_marks_the_events_whose_entry_it_may_change(engine: StrataGate) -> None:
    ids = await _saved(engine, *SAID[:2])
    await engine.storage.topics.write(refile)
    assert await engine.storage.topics.read(lambda tx: tx.spare_marked()) is False
    await engine.curation.act("forget", ids[0])
    marked, sources = await engine.storage.topics.read(lambda tx: tx.marked_sources())
    assert len(marked) == 1 and [s.status for s in sources] == ["forgotten"]
    assert sources[0].namespace == NS and not sources[0].in_plain_chapter
    other = SpareEntry(sources[0].pk, NS, "work", "conversation", False)
    await engine.storage.topics.write(lambda tx: tx.refile(marked, [other]))
    assert await engine.storage.topics.read(lambda tx: tx.spare_marked()) is False
    rows = await engine.storage.topics.read(lambda tx: tx.fallback_rows(NS, 1.0, None, (-1, 0)))
    assert [(row[0], row[2]) for row in rows] == [(ids[0], "work"), (ids[1], "other")]
    assert await engine.storage.topics.read(lambda tx: tx.fallback_counts(NS, 1.0)) == {
        "work": 1,
        "other": 1,
    }


async def test_a_changed_member_is_touched_marked_and_seen(engine: StrataGate) -> None:
    ids = await _saved(engine, *SAID[:2])
    await _drained(engine)
    assert await engine.storage.topics.read(lambda tx: tx.touched_members(NS)) == []
    await engine.curation.act("forget", ids[0])
    [member] = await engine.storage.topics.read(lambda tx: tx.touched_members(NS))
    assert member.event_id == ids[0] and member.status == "forgotten"

    def mark(tx: TopicsTransaction) -> object:
        tx.mark_for_projection([ids[1]])
        return tx.touched_members(NS)

    marked = await engine.storage.topics.write(mark)
    assert {(m.event_id, m.fingerprint) for m in marked} >= {(ids[1], None)}  # type: ignore[attr-defined]


async def test_word_statistics_and_the_preferred_language(engine: StrataGate) -> None:
    await _saved(engine, *SAID)
    words = query_tokens("Ana kiln zeppelin")
    counts, total = await engine.storage.topics.read(lambda tx: tx.term_stats(words))
    assert total == 3 and dict(zip(words, (2, 1, 0), strict=True)) == counts
    assert await engine.storage.topics.read(lambda tx: tx.preferred_language()) == ""
    await engine.profile.update("preferred_language", "中文")
    assert await engine.storage.topics.read(lambda tx: tx.preferred_language()) == "中文"
