"""A person's memory actions through the real store: receipts, forget everywhere, purge, show."""

import json
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import pytest

from stratagate_plugin.core.curation.actions import LINK_NAMES
from stratagate_plugin.core.curation.records import (
    PURGED_TITLE,
    ActionResult,
    BlockDetails,
    EventDetails,
    LinkedEvent,
    MessageCard,
    NothingDone,
)
from stratagate_plugin.core.errors import InvalidInput, NotFound
from stratagate_plugin.core.events.cards import RELATION_LISTS, EventCard
from stratagate_plugin.core.events.documents import EVENT_RULES
from stratagate_plugin.core.memory import StrataGate
from stratagate_plugin.core.store import event_rows
from stratagate_plugin.core.store.migrations import migrate
from stratagate_plugin.core.store.search_index import recount_index_stats, register_functions
from stratagate_plugin.core.text.search_terms import fts_match_any, query_tokens

NS = "ns"
TURNS = [
    ("We decided to move the spring sale to 14 March.", "Noted."),
    ("The glaze supplier raised prices by 12% last week.", "That affects margins."),
    ("Remember that the studio opens at 10am on Saturdays.", "Noted."),
]


async def spring_sale(memory: StrataGate) -> EventCard:
    """Three turns in 'monday' (one block, derived offline); the spring-sale event."""
    for user, assistant in TURNS:
        tools = [{"name": "note", "arguments": {"text": user}, "result": "saved"}]
        await memory.blocks.append_turn(
            NS, "monday", user=user, assistant=assistant, tool_calls=tools
        )
    await memory.derivation.process_pending()
    [card] = [e for e in await memory.events.cards(NS) if "spring sale" in e.title.lower()]
    return card


async def found_by(memory: StrataGate, event_id: str) -> dict[str, bool]:
    """Whether event search, recall, the listing and retrieve()'s event channel find it."""
    question = "When is the spring sale?"
    card = await memory.events.get(event_id)
    recall = await memory.retrieval.auto_context(NS, "tue", question)
    cited = (await memory.retrieval.channel_rankings(NS, question))["event"]
    return {
        "search_events": event_id in {h.card.id for h in await memory.events.search(NS, question)},
        "recall": event_id in {c.id for c in recall.events},
        "list_events": event_id in {c.id for c in await memory.events.cards(NS)},
        "retrieve": bool(set(cited) & set(card.source_message_ids)),
    }


EVERYWHERE = dict.fromkeys(("search_events", "recall", "list_events", "retrieve"), True)
NOWHERE = dict.fromkeys(EVERYWHERE, False)


async def test_forget_leaves_every_search_recall_and_listing_and_restore_brings_it_back(
    memory: StrataGate, plain: sqlite3.Connection
) -> None:
    card = await spring_sale(memory)
    assert await found_by(memory, card.id) == EVERYWHERE
    forgot = await memory.curation.act("forget", card.id)
    assert forgot.card.status == "forgotten"
    assert await found_by(memory, card.id) == NOWHERE
    assert card.id not in {hit.card.id for hit in await memory.events.search(NS, "spring")}
    [message] = await memory.curation.message_cards(card.source_message_ids)
    assert message.events == [] and "spring sale" in message.message.content  # L5 stays
    restored = await memory.curation.act("restore", card.id)
    assert restored.card.status == "active" and await found_by(memory, card.id) == EVERYWHERE
    rows = plain.execute(
        "SELECT kind, target_id, actor, namespace, detail_json FROM memory_actions "
        "ORDER BY created_at, id"
    ).fetchall()
    assert [tuple(row)[:4] for row in rows] == [
        ("forget", card.id, "user", NS),
        ("restore", card.id, "user", NS),
    ]
    assert json.loads(rows[0][4])["status"] == ["active", "forgotten"]
    assert [a.id for a in await memory.curation.actions(card.id)] == [
        forgot.action.id,
        restored.action.id,
    ]


async def test_pin_and_unpin_leave_receipts_saying_what_changed(memory: StrataGate) -> None:
    card = await spring_sale(memory)
    pinned = await memory.curation.act("pin", card.id)
    again = await memory.curation.act("pin", card.id)  # nothing to do: no receipt
    unpinned = await memory.curation.act("unpin", card.id)
    assert isinstance(pinned, ActionResult) and isinstance(unpinned, ActionResult)
    assert (pinned.card.pinned, unpinned.card.pinned) == (True, False)
    assert pinned.action.detail["pinned"] == [False, True] and pinned.action.detail["changed"]
    assert isinstance(again, NothingDone) and again.reason == f"{card.id} is already pinned"
    assert [a.kind for a in await memory.curation.actions(card.id)] == ["pin", "unpin"]
    with pytest.raises(NotFound):
        await memory.curation.act("pin", "evt_missing")
    with pytest.raises(InvalidInput):
        await memory.curation.act("shred", card.id)  # type: ignore[arg-type]


async def test_purge_tombstones_the_sources_and_every_view_built_on_them(
    memory: StrataGate, plain: sqlite3.Connection
) -> None:
    card = await spring_sale(memory)
    [source] = card.source_message_ids
    for echo_id, status in (("evt_echo", "active"), ("evt_hidden", "forgotten")):
        echo = card.model_copy(update={"id": echo_id, "title": "Sale date", "status": status})
        await memory.db.write(
            lambda raw, echo=echo: event_rows.insert_event(raw, echo, EVENT_RULES)
        )
    before = plain.execute("SELECT id, block_id, position FROM messages ORDER BY pk").fetchall()
    events_before = plain.execute("SELECT count(*) FROM events").fetchone()[0]

    result = await memory.curation.act("purge", card.id)

    assert result.action.detail["messages"] == [source]
    assert result.action.detail["also_forgotten"] == ["evt_echo", "evt_hidden"]
    after = plain.execute("SELECT id, block_id, position FROM messages ORDER BY pk").fetchall()
    assert [tuple(r) for r in after] == [tuple(r) for r in before]  # rows, blocks, positions
    stored = plain.execute(
        "SELECT content, tool_calls_json, fts_rowid, purged_at FROM messages WHERE id = ?",
        (source,),
    ).fetchone()
    assert stored[0].startswith("[purged by the user at ") and stored[1:3] == ("[]", None)
    assert stored[3] is not None
    spring = fts_match_any(query_tokens("spring"))
    indexed = plain.execute(
        "SELECT m.id FROM message_fts f JOIN messages m ON m.fts_rowid = f.rowid "
        "WHERE message_fts MATCH ?",
        (spring,),
    ).fetchall()
    assert indexed == []
    events = plain.execute(
        "SELECT id, status, title, summary, quotes_json FROM events WHERE id IN (?, ?, ?)",
        (card.id, "evt_echo", "evt_hidden"),
    ).fetchall()
    assert len(events) == 3
    assert {(row[1], row[2]) for row in events} == {("forgotten", PURGED_TITLE)}
    assert all("spring" not in row[3].lower() and row[4] == "[]" for row in events)
    matched = plain.execute("SELECT count(*) FROM event_fts WHERE event_fts MATCH ?", (spring,))
    assert matched.fetchone()[0] == 0
    block = plain.execute(
        "SELECT l4_readable, l3_condensed, l0_title, l1_summary, l2_keypoints_json FROM blocks"
    ).fetchone()
    assert "spring sale" not in block[0] + block[1] and "[purged by the user" in block[0]
    assert block[2:] == (None, None, None)
    summary_job = plain.execute(
        "SELECT status, attempts FROM jobs WHERE kind = 'block_summary'"
    ).fetchone()
    assert tuple(summary_job) == ("pending", 0)
    stats = plain.execute("SELECT * FROM message_index_stats").fetchall()
    recount_index_stats(plain)
    assert plain.execute("SELECT * FROM message_index_stats").fetchall() == stats
    plain.rollback()

    assert source not in {
        hit.message_id for hit in await memory.retrieval.retrieve(NS, "spring sale")
    }
    with pytest.raises(InvalidInput, match="purged"):
        await memory.curation.act("restore", card.id)
    report = await memory.derivation.process_pending()
    assert report.ran == 1  # the summary again; extraction is not re-run
    assert plain.execute("SELECT count(*) FROM events").fetchone()[0] == events_before
    view = await memory.blocks.view(card.source_block_id or "", 1)
    assert "spring sale" not in view.text.lower() and "not derived yet" not in view.text


async def test_purge_blanks_the_titles_batches_and_receipts_keep(
    memory: StrataGate, plain: sqlite3.Connection
) -> None:
    card = await spring_sale(memory)
    ref = f"event:{card.id}"
    batch = await memory.gate.open_batch(
        NS, "tue", "memory_search_events", [ref], {ref: card.title}
    )
    await memory.gate.assess(NS, "tue", batch.id, "sufficient", [ref], "direct", None, "answer")
    await memory.gate.record_use(NS, "tue", batch.id, [ref], "receipt-1")
    await memory.curation.act("purge", card.id)
    titles = plain.execute("SELECT titles_json FROM batches").fetchone()[0]
    audit = json.loads(plain.execute("SELECT audit_json FROM usage_receipts").fetchone()[0])
    assert json.loads(titles) == {ref: PURGED_TITLE}
    assert [c["title"] for c in audit["citations"]] == [PURGED_TITLE]
    replay = await memory.gate.record_use(NS, "tue", batch.id, [ref], "receipt-1")
    assert replay.replayed  # the stored payload was recomputed with the blanked title


async def test_purging_twice_keeps_the_first_tombstone(
    memory: StrataGate, plain: sqlite3.Connection
) -> None:
    card = await spring_sale(memory)
    await memory.curation.act("purge", card.id)
    first = plain.execute("SELECT content, purged_at FROM messages WHERE purged_at IS NOT NULL")
    kept = first.fetchall()
    await memory.derivation.process_pending()
    await memory.curation.act("purge", card.id)
    again = plain.execute("SELECT content, purged_at FROM messages WHERE purged_at IS NOT NULL")
    assert again.fetchall() == kept
    assert plain.execute("SELECT status FROM jobs WHERE kind = 'block_summary'").fetchone()[0] == (
        "succeeded"
    )


async def test_event_details_show_sources_links_adoptions_and_actions(
    memory: StrataGate,
) -> None:
    card = await spring_sale(memory)
    newer = card.model_copy(
        update={
            "id": "evt_new",
            "title": "Spring sale moved again",
            "temporal": {"supersedes_event_ids": [card.id], "conflicts_with_event_ids": ["gone"]},
            "created_at": datetime(2030, 1, 1, tzinfo=UTC),
        }
    )
    await memory.db.write(lambda raw: event_rows.insert_event(raw, newer, EVENT_RULES))
    ref = f"event:{card.id}"
    batch = await memory.gate.open_batch(NS, "tue", "memory_search_events", [ref])
    await memory.gate.assess(NS, "tue", batch.id, "sufficient", [ref], "direct", None, "answer")
    await memory.gate.record_use(NS, "tue", batch.id, [ref], "receipt-1")
    await memory.curation.act("pin", card.id)

    details = await memory.curation.event_details(card.id)
    assert [s.message.id for s in details.sources] == card.source_message_ids
    assert details.links == [
        LinkedEvent(
            relation="superseded by",
            event_id="evt_new",
            title="Spring sale moved again",
            status="active",
        )
    ]
    [adoption] = details.adoptions
    assert (adoption.batch_id, adoption.thread_id, adoption.tool) == (
        batch.id,
        "tue",
        "memory_search_events",
    )
    assert [a.kind for a in details.actions] == ["pin"]
    newest = await memory.curation.event_details("evt_new")
    assert [(link.relation, link.event_id, link.found) for link in newest.links] == [
        ("supersedes", card.id, True),
        ("conflicts with", "gone", False),
    ]


def test_every_link_named_is_one_the_store_reads_briefs_for() -> None:
    """The store reads the briefs of a card's relation lists; the links shown name them."""
    assert set(LINK_NAMES) == set(RELATION_LISTS)


async def test_describe_finds_an_event_a_block_or_a_message_by_id(memory: StrataGate) -> None:
    card = await spring_sale(memory)
    [source] = card.source_message_ids
    assert isinstance(await memory.curation.describe(card.id), EventDetails)
    block = await memory.curation.describe(card.source_block_id or "")
    assert isinstance(block, BlockDetails) and block.messages[0].message.id == source
    assert set(block.summaries) == {"L0", "L1", "L2"} and block.events[0].id == card.id
    message = await memory.curation.describe(source)
    assert isinstance(message, MessageCard) and [e.id for e in message.events] == [card.id]
    with pytest.raises(NotFound, match="no event, block or message with id 'nope'"):
        await memory.curation.describe("nope")


@pytest.mark.sqlite_only(
    reason="a SQLite file made at schema 12 by hand, migrated by SQLite's steps"
)
async def test_a_file_of_schema_12_gains_receipts_and_keeps_its_messages(db_path: Path) -> None:
    conn = sqlite3.connect(db_path, isolation_level=None)
    register_functions(conn)
    migrate(conn, target=12)
    conn.execute(
        "INSERT INTO namespaces(namespace, block_turn_size, block_decay_lambda, created_at, "
        "updated_at) VALUES ('ns', 3, 0.3, '2025-01-01', '2025-01-01')"
    )
    conn.execute("INSERT INTO threads(namespace, thread_id, created_at) VALUES ('ns', 't', '-')")
    conn.execute(
        "INSERT INTO messages(id, namespace, thread_id, position, turn, namespace_turn, role, "
        "content, created_at) VALUES ('m1', 'ns', 't', 1, 1, 1, 'user', 'old words', "
        "'2025-01-01T00:00:00+00:00')"
    )
    conn.close()
    async with await StrataGate.open(db_path) as memory:
        [card] = await memory.curation.message_cards(["m1"])
        assert (card.message.content, card.purged_at) == ("old words", None)
        assert await memory.curation.actions() == []
