"""``DerivationStorage``: the job queue under leases, a job's input, its commit under the
claim, and the blocks derived offline (set up through the engine's public capabilities)."""

from datetime import timedelta

import pytest

from stratagate_plugin.core.clock import utc_now
from stratagate_plugin.core.derivation.blocks.service import CARD_RULES
from stratagate_plugin.core.derivation.storage import Author, Cards, TimelineAsk
from stratagate_plugin.core.errors import InvalidInput, NotFound
from stratagate_plugin.core.events.search import relevant_cards
from stratagate_plugin.core.llm.tasks import BlockSummary, EventCardDraft
from stratagate_plugin.core.memory import StrataGate
from stratagate_plugin.core.records import OFFLINE_FALLBACK, Block, Job

NS = "contract"
LEASE = timedelta(minutes=1)
SUMMARY = BlockSummary(title="Kiln plans", tags=["kiln"], summary="Talked kilns.")


async def _sealed_block(engine: StrataGate, thread: str = "t", words: str = "kiln") -> list[str]:
    """Two turns: a full block of the thread, sealed, its summary job queued."""
    ids: list[str] = []
    for i in range(2):
        said = f"The {words} fires on Friday {i}."
        receipt = await engine.blocks.append_turn(NS, thread, user=said, assistant="Noted.")
        ids += receipt.message_ids
    return ids


async def _claim(engine: StrataGate, owner: str = "a", later: float = 0) -> Job | None:
    now = utc_now() + timedelta(seconds=later)
    return await engine.storage.derivation.claim(now, owner, LEASE, True)


async def _summarised(engine: StrataGate) -> tuple[Job, Block, list[str]]:
    """A block whose summary is committed, its extraction claimed by ``a``."""
    ids = await _sealed_block(engine)
    store = engine.storage.derivation
    job = await _claim(engine)
    assert job is not None
    block, _ = await store.summary_input(job.target_id)
    assert await store.commit_summary(job, block, SUMMARY, ("m", None), utc_now())
    extraction = await _claim(engine)
    assert extraction is not None and extraction.kind == "event_extraction"
    block, _ = await store.summary_input(job.target_id)
    return extraction, block, ids


def _note(inserted: int, restated: int) -> str:
    return f"{inserted} in, {restated} restated"


def _cards(drafts: list[EventCardDraft], author: Author = ("m", None)) -> Cards:
    return Cards(drafts, CARD_RULES, author, utc_now(), _note)


async def test_a_claim_leases_the_due_job_to_one_owner_until_the_lease_runs_out(
    engine: StrataGate,
) -> None:
    await _sealed_block(engine)
    store = engine.storage.derivation
    assert await store.due_counts(utc_now(), ("block_summary",)) == {"block_summary": 1}
    job = await _claim(engine, "a")
    assert job is not None and job.kind == "block_summary"
    assert (job.status, job.owner, job.attempts, job.claims) == ("running", "a", 1, 1)
    assert await _claim(engine, "b") is None
    assert await store.due_counts(utc_now(), ("block_summary",)) == {}
    taken = await _claim(engine, "b", later=LEASE.total_seconds() + 1)
    assert taken is not None and (taken.id, taken.owner, taken.claims) == (job.id, "b", 2)
    assert await store.renew(job, utc_now() + LEASE) is False  # a's claim is gone


async def test_renewing_and_giving_back_need_the_claim(engine: StrataGate) -> None:
    await _sealed_block(engine)
    store = engine.storage.derivation
    job = await _claim(engine)
    assert job is not None
    assert await store.renew(job, utc_now() + 2 * LEASE) is True
    assert await store.give_back(job, utc_now()) is True
    assert await store.give_back(job, utc_now()) is False
    assert await store.renew(job, utc_now() + LEASE) is False
    back = await store.job(job.id)
    assert (back.status, back.last_error) == ("failed", "interrupted before completion")
    again = await _claim(engine, "b")
    assert again is not None and again.id == job.id  # given back: due again at once


async def test_a_failure_is_recorded_once_and_a_retry_starts_again(engine: StrataGate) -> None:
    await _sealed_block(engine)
    store = engine.storage.derivation
    job = await _claim(engine)
    assert job is not None
    failed = await store.fail(job, "ModelServerError: 503", utc_now())
    assert failed is not None and failed.status == "failed" and failed.next_retry_at is not None
    assert await store.fail(job, "again", utc_now()) is None  # no longer held: nothing written
    assert [j.id for j in await store.failed_jobs(NS)] == [job.id]
    assert await store.failed_jobs("elsewhere") == []
    [retried] = await store.retry([job.id], utc_now(), ())
    assert (retried.id, retried.status, retried.attempts) == (job.id, "pending", 0)
    with pytest.raises(InvalidInput):
        await store.retry([job.id], utc_now(), ())
    with pytest.raises(NotFound):
        await store.retry(["job_unknown"], utc_now(), ())


async def test_retrying_every_failed_job_counts_them_and_leaves_others(engine: StrataGate) -> None:
    await _sealed_block(engine, "t1")
    await _sealed_block(engine, "t2")
    store = engine.storage.derivation
    first, second = await _claim(engine), await _claim(engine)
    assert first is not None and second is not None
    await store.fail(first, "boom", utc_now())
    assert await store.retry_failed(utc_now(), "elsewhere", ()) == 0
    assert await store.retry_failed(utc_now(), NS, ()) == 1
    assert await store.retry_failed(utc_now(), None, ()) == 0
    statuses = {j.id: j.status for j in await store.list_jobs(NS, None)}
    assert (statuses[first.id], statuses[second.id]) == ("pending", "running")


async def test_jobs_are_listed_oldest_first_by_space_and_status(engine: StrataGate) -> None:
    await _sealed_block(engine, "t1")
    await _sealed_block(engine, "t2")
    store = engine.storage.derivation
    every = await store.list_jobs(NS, None)
    assert [j.kind for j in every] == ["block_summary", "block_summary"]
    assert [(j.created_at, j.id) for j in every] == sorted((j.created_at, j.id) for j in every)
    assert await store.list_jobs(NS, "running") == []
    assert await store.list_jobs("elsewhere", None) == []
    assert len(await store.list_jobs(None, "pending")) == 2
    with pytest.raises(NotFound):
        await store.job("job_unknown")


async def test_a_summary_commits_under_the_claim_and_queues_the_extraction(
    engine: StrataGate,
) -> None:
    ids = await _sealed_block(engine)
    store = engine.storage.derivation
    job = await _claim(engine)
    assert job is not None
    block, messages = await store.summary_input(job.target_id)
    assert [m.id for m in messages] == ids
    assert await store.commit_summary(job, block, SUMMARY, (OFFLINE_FALLBACK, "E: x"), utc_now())
    assert not await store.commit_summary(job, block, SUMMARY, ("m", None), utc_now())
    done = await store.job(job.id)
    assert (done.status, done.derived_by, done.last_error) == (
        "succeeded",
        OFFLINE_FALLBACK,
        "E: x",
    )
    stored, _ = await store.summary_input(block.id)
    assert (stored.l0_title, stored.derived_by) == ("Kiln plans", OFFLINE_FALLBACK)
    kinds = [j.kind for j in await store.list_jobs(NS, "pending")]
    assert kinds == ["event_extraction"]
    with pytest.raises(NotFound):
        await store.summary_input("blk_unknown")


async def test_an_extraction_commits_its_cards_once_under_the_claim(engine: StrataGate) -> None:
    job, block, ids = await _summarised(engine)
    store = engine.storage.derivation
    drafts = [
        EventCardDraft(title="Kiln fires Friday", summary="Kiln fires Friday.",
                       source_message_ids=[ids[0]], scope="user"),
        EventCardDraft(title="Glaze day", summary="Glaze on Monday.",
                       source_message_ids=[ids[2]], scope="user"),
    ]  # fmt: skip
    author = ("m", None)
    inserted = await store.commit_extraction(job, block, _cards(drafts, author))
    assert inserted is not None and len(inserted) == 2
    again = await store.commit_extraction(job, block, _cards(drafts, author))
    assert again is None
    cards = await engine.events.cards(NS)
    assert sorted(c.id for c in cards) == sorted(inserted)
    assert {c.title for c in cards} == {"Kiln fires Friday", "Glaze day"}
    done = await store.job(job.id)
    assert (done.status, done.detail) == ("succeeded", "2 in, 0 restated")
    assert (await engine.blocks.view(block.id)).block.processing_status == "ready"


async def test_an_extraction_without_cards_is_skipped(engine: StrataGate) -> None:
    job, block, _ = await _summarised(engine)
    store = engine.storage.derivation
    found = await store.commit_extraction(job, block, _cards([]))
    assert found == []
    assert (await store.job(job.id)).status == "skipped"


async def test_the_extraction_input_holds_other_blocks_events_not_its_own(
    engine: StrataGate,
) -> None:
    earlier = await engine.remember.save(NS, "t", "The kiln is in the garage.")
    job, block, _ = await _summarised(engine)
    store = engine.storage.derivation

    def words(seen: Block) -> tuple[str, ...]:
        return ("kiln",)

    tokens = TimelineAsk(words, 8, 4, relevant_cards)
    found = await store.extraction_input(block.id, None, tokens)
    assert found.block.id == block.id and len(found.messages) == 4
    assert [c.id for c in found.timeline] == [earlier.event_id]
    drafts = [EventCardDraft(title="Kiln Friday", summary="Kiln fires Friday.",
                             source_message_ids=[found.messages[0].id], scope="user")]  # fmt: skip
    await store.commit_extraction(job, block, _cards(drafts))
    again = await store.extraction_input(block.id, None, tokens)
    assert [c.id for c in again.timeline] == [earlier.event_id]  # its own card is not shown
    renamed = block.model_copy(update={"l0_title": "Seen as"})
    seen = await store.extraction_input(block.id, renamed, TimelineAsk(words, 0, 0, relevant_cards))
    assert (seen.block.l0_title, seen.timeline) == ("Seen as", [])


async def _derived_offline(engine: StrataGate) -> tuple[Job, Block, list[str], list[str]]:
    """A block whose extraction the offline model answered, marked so; its card ids."""
    job, block, ids = await _summarised(engine)
    store = engine.storage.derivation
    drafts = [EventCardDraft(title="Kiln fires", summary="Kiln fires Friday.",
                             source_message_ids=[ids[0]], scope="user")]  # fmt: skip
    offline = (OFFLINE_FALLBACK, "ModelServerError: 503")
    cards = await store.commit_extraction(job, block, _cards(drafts, offline))
    await store.mark_block(block.id, offline)
    return job, block, ids, cards or []


async def test_offline_blocks_are_marked_listed_and_replaced_once(engine: StrataGate) -> None:
    job, block, ids, old = await _derived_offline(engine)
    store = engine.storage.derivation
    [listed] = await store.offline_blocks(NS)
    assert (listed.id, listed.derive_error) == (block.id, "ModelServerError: 503")
    assert await store.offline_blocks("elsewhere") == []
    derived = await store.offline_derived(None)
    assert [b.id for b in derived.blocks] == [block.id] and job.id in [j.id for j in derived.jobs]
    new = [EventCardDraft(title="Kiln moved", summary="Kiln fires Saturday.",
                          source_message_ids=[ids[2]], scope="user")]  # fmt: skip
    replaced = await store.replace_offline(listed, SUMMARY, _cards(new, ("model-x", None)))
    assert replaced is not None and replaced.removed == old and replaced.kept == {}
    assert len(replaced.inserted) == 1
    assert [c.title for c in await engine.events.cards(NS)] == ["Kiln moved"]
    assert await store.offline_blocks(NS) == []
    assert (await store.job(job.id)).detail == "1 in, 0 restated"
    again = await store.replace_offline(listed, SUMMARY, _cards(new, ("model-x", None)))
    assert again is None  # no longer as read: nothing written


async def test_a_replacement_keeps_an_offline_card_a_person_acted_on(engine: StrataGate) -> None:
    job, _, _, [pinned] = await _derived_offline(engine)
    store = engine.storage.derivation
    await engine.curation.act("pin", pinned)
    [listed] = await store.offline_blocks(NS)
    replaced = await store.replace_offline(listed, SUMMARY, _cards([], ("model-x", None)))
    assert replaced is not None and (replaced.removed, replaced.inserted) == ([], [])
    assert replaced.kept == {pinned: "pinned"}
    assert [c.id for c in await engine.events.cards(NS)] == [pinned]
    assert (await store.job(job.id)).detail == "0 in, 1 restated"  # note(inserted, kept)


async def test_jobs_of_a_dead_owner_or_a_lapsed_lease_are_taken_back(engine: StrataGate) -> None:
    await _sealed_block(engine)
    await _sealed_block(engine, thread="u", words="glaze")
    store = engine.storage.derivation
    held = await _claim(engine, owner="gone")
    lapsed = await _claim(engine, owner="slow", later=-120)
    assert held is not None and lapsed is not None
    assert await store.lease_holders() == {"gone", "slow"}
    assert await store.any_expired(utc_now()) is True
    await store.take_back({"gone"}, utc_now())
    assert await store.lease_holders() == set()
    for job in (held, lapsed):
        taken = await store.job(job.id)
        assert taken.status == "failed" and taken.lease_expires_at is None
