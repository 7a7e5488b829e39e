"""``PurgeStorage``: the words' sources, a plan that never shows them, one erasing
transaction with its receipt and journal (all or nothing), the file's own copies (free
space, log, compaction, backups), a whole space deleted with its receipt."""

import sqlite3

import pytest

from stratagate_plugin.core.clock import utc_now
from stratagate_plugin.core.curation.actions import PURGE_RULES
from stratagate_plugin.core.errors import NotFound, StrataGateError
from stratagate_plugin.core.memory import StrataGate
from stratagate_plugin.core.purge.storage import ReceiptDraft, TextPurgePlan
from stratagate_plugin.core.purge.words import Needles
from stratagate_plugin.core.store import health
from stratagate_plugin.core.store.postgres.purge import PostgresPurgeStorage
from stratagate_plugin.core.topics.sync import sync_space

NS = "contract"
SECRET = "my locker code is 80417263"


def _draft(plan: TextPurgePlan, erased: dict[str, int]) -> ReceiptDraft:
    return ReceiptDraft(NS, "text", "user", {"hashes": plan.hashes, "counts": erased})


async def _said(engine: StrataGate, text: str, thread: str = "t") -> None:
    await engine.blocks.append_turn(NS, thread, user=text, assistant="Noted.")


async def test_the_words_sources(engine: StrataGate) -> None:
    store = engine.storage.purge
    event_id = (await engine.remember.save(NS, "t", "The kiln fires on Fridays.")).event_id
    card = await store.event_card(event_id)
    assert card.id == event_id and card.title
    assert await store.event_titles([event_id, "evt_unknown"]) == [card.title]
    with pytest.raises(NotFound):
        await store.event_card("evt_unknown")
    assert await store.message_content("msg_unknown") is None
    await engine.profile.update("user_preferred_name", "Ana")
    await engine.profile.update("user_preferred_name", "Ana Lima")
    assert sorted(await store.profile_values("user_preferred_name")) == ["Ana", "Ana Lima"]
    assert await store.profile_values("home_city") == []


async def test_a_plan_names_the_rows_without_showing_the_words(engine: StrataGate) -> None:
    store = engine.storage.purge
    await _said(engine, f"Remember: {SECRET}.")
    words = Needles(["80417263"])
    plan = await store.plan(words)
    assert plan.hashes == words.hashes()
    assert [item.kind for item in plan.messages] == ["message (user)"]
    assert plan.messages[0].namespace == NS
    assert all("80417263" not in item.excerpt for item in plan.messages)
    assert (await store.plan(Needles(["never said anywhere"]))).empty


async def test_an_erase_is_one_transaction_with_its_receipt_and_journal(
    engine: StrataGate,
) -> None:
    store = engine.storage.purge
    await _said(engine, f"Remember: {SECRET}.")
    words = Needles(["80417263"])

    def broken(plan: TextPurgePlan, erased: dict[str, int]) -> ReceiptDraft:
        raise RuntimeError("disk on fire")

    with pytest.raises(RuntimeError):
        await store.erase(words, utc_now(), broken, PURGE_RULES, sync_space)
    assert (await store.plan(words)).messages and await store.journal() is None
    seen: list[TextPurgePlan] = []

    def draft(plan: TextPurgePlan, erased: dict[str, int]) -> ReceiptDraft:
        seen.append(plan)
        return _draft(plan, erased)

    action, erased = await store.erase(words, utc_now(), draft, PURGE_RULES, sync_space)
    assert erased["messages"] == 1 and len(seen[0].messages) == 1
    assert action.kind == "purge" and action.detail["counts"] == erased
    assert await store.journal() == action.id
    assert await store.leftovers(words) == {}
    assert (await store.plan(words)).empty
    await store.clear_journal()
    assert await store.journal() is None
    assert action.id in [a.id for a in await store.actions(10)]


async def test_the_files_hold_nothing_once_compacted(engine: StrataGate) -> None:
    store = engine.storage.purge
    await _said(engine, f"Remember: {SECRET}.")
    words = Needles(["80417263"])
    async with store.secure_deletion():
        await store.erase(words, utc_now(), _draft, PURGE_RULES, sync_space)
        await store.checkpoint()
        await store.compact()
        await store.checkpoint()
    assert await store.file_holds(words) is False
    assert not any((await store.scan(words)).values())
    assert await store.remove_stale_copies() == []
    assert await store.backups_holding(words) == {}


async def test_a_space_is_deleted_whole_with_its_receipt(engine: StrataGate) -> None:
    store = engine.storage.purge
    await _said(engine, "The kiln fires on Fridays.", "t1")
    await _said(engine, "The studio opens at ten.", "t2")
    found = await store.space_contents(NS)
    assert found.threads == ["t1", "t2"] and found.rows["messages"] == 4
    assert await store.space_in_backups(NS) == {}

    def draft(deleted: dict[str, int]) -> ReceiptDraft:
        return ReceiptDraft(NS, NS, "user", {"space_deleted": NS, "rows": deleted})

    action, deleted = await store.delete_space(NS, draft, "2026-01-02T03:04:05+00:00")
    assert deleted == found.rows and action.detail["rows"] == deleted
    assert await store.journal() == action.id
    left = await store.space_contents(NS)
    assert left.rows == {"memory_actions": 1} and left.threads == []  # the receipt alone


async def test_backups_are_purged_on_a_copy_that_replaces_them(engine: StrataGate) -> None:
    store = engine.storage.purge
    await _said(engine, f"Remember: {SECRET}.")
    if isinstance(store, PostgresPurgeStorage):
        await _servers_backups_are_its_own(store)
        return
    path = engine.storage.db.path
    with sqlite3.connect(path) as conn:
        later = utc_now().replace(year=utc_now().year + 1)
        copy = health.backup(conn, path, later)
    assert copy is not None
    words = Needles(["80417263"])
    assert str(copy) in await store.backups_holding(words)
    assert await store.space_in_backups(NS) != {}
    assert (
        await store.purge_backup(str(copy), words, utc_now(), PURGE_RULES, sync_space)
        == "rewritten"
    )
    assert await store.backups_holding(words) == {}
    assert await store.delete_space_in_backup(str(copy), NS) == "rewritten"
    assert str(copy) not in await store.space_in_backups(NS)


async def _servers_backups_are_its_own(store: PostgresPurgeStorage) -> None:
    """On PostgreSQL the engine keeps no copy: the words said are in no backup of its own,
    and one named to it is refused in one line (dumps and archives are the operator's)."""
    words = Needles(["80417263"])
    assert await store.backups_holding(words) == {} and await store.space_in_backups(NS) == {}
    for attempt in (
        store.purge_backup("nightly.dump", words, utc_now(), PURGE_RULES, sync_space),
        store.delete_space_in_backup("nightly.dump", NS),
    ):
        with pytest.raises(StrataGateError, match=r"^nightly\.dump: .*pg_dump") as refused:
            await attempt
        assert "\n" not in str(refused.value)
