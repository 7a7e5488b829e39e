"""The memory plugin's notes in the web chat: the citation tail of an answer that used
memory (adopted events and messages linked, checked-but-unused folded) and the rows of
blocks sealing and becoming ready; both switchable, both escaped."""

import re
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from markupsafe import escape
from webapp import memory_of, new_chat, say, web_app, worker_on_request

from stratagate_plugin.core.memory import StrataGate
from stratagate_plugin.core.store.migrations import MIGRATIONS, migrate
from stratagate_plugin.core.store.migrations.steps_013 import m014_block_ready_times
from stratagate_plugin.harness.pm import call_hook
from stratagate_plugin.harness.runtime import Host
from stratagate_plugin.memory_plugin.annotations import citation_title, receipt_turn

FACT = "My sister Alice moved to Lisbon in March."
QUESTION = "Where did my sister Alice move?"


def runtime_of(host: Host) -> Any:
    return host.pm.get_plugin("stratagate-memory").runtime


def turn_article(html: str, turn: int) -> str:
    match = re.search(rf'<article class="turn" id="turn-{turn}".*?</article>', html, re.S)
    assert match, f"no turn {turn} on the page"
    return match.group(0)


async def quiet(host: Host) -> Any:
    """The plugin's runtime once its worker is idle and runs only when asked (its polls
    for due jobs come every few seconds), so the test alone decides when sealed blocks
    are derived."""
    return await worker_on_request(host)


async def seal_and_derive(host: Host, session_id: str) -> str:
    runtime = await quiet(host)
    space: str = runtime.default_space()
    await runtime.memory.blocks.seal_tail(space, session_id)
    await runtime.memory.derivation.process_pending()
    return space


async def chat_notes_of(app: Any, host: Host, session_id: str) -> list[Any]:
    """The notes the plugins give the chat for the session the app has open."""
    session = app.state.chat.sessions[session_id]
    results = await call_hook(host.pm, "chat_annotations", host=host, session=session)
    return [note for batch in results for note in batch]


async def test_hook_chat_annotations_cite_the_adopted_event_below_the_answer(
    tmp_path: Path,
) -> None:
    async with web_app(tmp_path) as (app, host, client):
        sid = await new_chat(client)
        told = await say(client, sid, FACT)
        space = await seal_and_derive(host, sid)
        [event] = await memory_of(host).events.cards(space)
        asked = await say(client, sid, QUESTION)
        page = (await client.get(f"/chat/{sid}")).text
        notes = await chat_notes_of(app, host, sid)
    assert 'class="citations"' not in told.text  # a statement uses no memory
    assert 'class="citations"' in asked.text
    assert f'<a href="/memory/events/{event.id}">{escape(event.title)}</a>' in asked.text
    assert "memory used: 1 event" in asked.text
    first, second = turn_article(page, 1), turn_article(page, 2)
    assert 'class="citations"' not in first and f"/memory/events/{event.id}" in second
    [cited] = [note for note in notes if note.kind == "citations"]
    assert cited.turn == 2
    labels = [item.label for item in cited.items]
    assert event.title in labels and any(FACT in label for label in labels)
    assert [item.label for item in cited.more] == ["assistant: “Noted.”"]  # checked, left
    assert all(item.href and item.href.startswith("/memory/") for item in cited.items)


async def test_a_question_memory_cannot_answer_has_no_citation_tail(tmp_path: Path) -> None:
    async with web_app(tmp_path) as (app, host, client):
        sid = await new_chat(client)
        await say(client, sid, FACT)
        space = await seal_and_derive(host, sid)
        answer = await say(client, sid, "What is the capital of Peru?")
        trail = await memory_of(host).gate.evidence_trail(space, sid)
        notes = await chat_notes_of(app, host, sid)
    assert "confirm that from memory" in answer.text
    assert 'class="citations"' not in answer.text
    assert trail.uses and all(use.receipt_id for use in trail.uses)  # batches were closed
    assert not [note for note in notes if note.kind == "citations"]


async def test_block_rows_show_sealing_and_readiness_at_the_blocks_last_turn(
    tmp_path: Path,
) -> None:
    async with web_app(tmp_path) as (_app, host, client):
        sid = await new_chat(client)
        await say(client, sid, FACT)
        await say(client, sid, "My brother Tom works as a nurse in Porto.")
        runtime = await quiet(host)
        space = runtime.default_space()
        await runtime.memory.blocks.seal_tail(space, sid)
        pending = (await client.get(f"/chat/{sid}")).text
        await runtime.memory.derivation.process_pending()
        ready = (await client.get(f"/chat/{sid}")).text
        [mark] = await runtime.memory.blocks.marks(space, sid)
    assert "block sealed: turns 1–2" in turn_article(pending, 2)
    assert "block ready" not in pending
    assert "block sealed" not in turn_article(ready, 1)
    row = turn_article(ready, 2)
    assert "block sealed: turns 1–2" in row and "block ready: turns 1–2" in row
    assert row.index("block sealed") < row.index("block ready")
    assert "/memory/blocks?thread=" in row and sid in row
    assert mark.processing_status == "ready" and mark.ready_at is not None
    assert mark.ready_at >= mark.sealed_at


async def test_display_toggles_hide_citations_and_status_rows(tmp_path: Path) -> None:
    async with web_app(tmp_path) as (app, host, client):
        sid = await new_chat(client)
        await say(client, sid, FACT)
        await seal_and_derive(host, sid)
        await say(client, sid, QUESTION)
        settings = runtime_of(host).settings
        both = {note.kind for note in await chat_notes_of(app, host, sid)}
        settings["show_citations"] = False
        no_citations = {note.kind for note in await chat_notes_of(app, host, sid)}
        settings["show_status_rows"] = False
        page = (await client.get(f"/chat/{sid}")).text
    assert both == {"citations", "status"}
    assert no_citations == {"status"}
    assert 'class="citations"' not in page and 'class="status-row"' not in page


async def test_an_event_title_with_markup_is_escaped_in_the_tail(tmp_path: Path) -> None:
    async with web_app(tmp_path) as (_app, host, client):
        sid = await new_chat(client)
        await say(client, sid, "hello there")
        memory = memory_of(host)
        space = runtime_of(host).default_space()
        made = await memory.remember.save(space, sid, "<script>alert(1)</script> likes tea")
        ref = f"event:{made.event_id}"
        await memory.gate.open_batch(space, sid, "memory_search_events", [ref], {ref: "x"})
        await memory.gate.assess(space, sid, None, "sufficient", [ref], "fits", "", "answer")
        await memory.gate.record_use(space, sid, None, [ref], f"host:{sid}:turn:1:tool:t1")
        page = (await client.get(f"/chat/{sid}")).text
        event = await memory.events.get(str(made.event_id))
    assert "<script>" in event.title
    tail = turn_article(page, 1)
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in tail
    assert "<script>alert" not in page


def test_receipt_turns_belong_to_their_own_session() -> None:
    assert receipt_turn("host:s-1:turn:3:tool:offline_2_memory_record_use", "s-1") == 3
    assert receipt_turn("host:s-2:turn:3:tool:x", "s-1") is None
    assert receipt_turn("dsh:s-1:tool:x", "s-1") is None
    assert receipt_turn(None, "s-1") is None
    assert citation_title(["event:e1", "event:e2", "raw:b:m:0", "block:b:level:2"]) == (
        "memory used: 2 events · 1 block level · 1 message"
    )


async def test_evidence_trail_reads_batches_receipts_and_named_records(
    memory: StrataGate,
) -> None:
    await memory.blocks.append_turn("ns", "t", user="I adopted a cat named Miso.", assistant="ok")
    block_id = await memory.blocks.seal_tail("ns", "t")
    await memory.derivation.process_pending()
    [event] = await memory.events.cards("ns")
    [message, _] = await memory.blocks.messages(str(block_id))
    refs = [f"event:{event.id}", f"raw:{block_id}:{message.id}:0", f"block:{block_id}:level:2"]
    await memory.gate.open_batch("ns", "t", "memory_search_events", refs)
    await memory.gate.assess("ns", "t", None, "sufficient", refs[:2], "fits", "", "answer")
    await memory.gate.record_use("ns", "t", None, refs[:1], "host:t:turn:2:tool:a")
    await memory.gate.open_batch("ns", "t", "memory_search_raw", refs[1:2])
    trail = await memory.gate.evidence_trail("ns", "t")
    other = await memory.gate.evidence_trail("ns", "another-thread")
    recorded, open_batch = trail.uses
    assert recorded.receipt_id == "host:t:turn:2:tool:a"
    assert recorded.adopted_refs == (refs[0],)
    assert recorded.checked_refs() == tuple(refs[1:])
    assert (open_batch.receipt_id, open_batch.adopted_refs) == (None, ())
    assert trail.events[event.id].title == event.title
    assert trail.messages[message.id].text.startswith("I adopted a cat")
    assert other.uses == ()


async def test_block_marks_give_turn_ranges_and_times_without_texts(
    memory: StrataGate,
) -> None:
    for n in range(4):  # block_turn_size=3: turns 1–3 seal on their own, 4 stays open
        await memory.blocks.append_turn("ns", "t", user=f"fact number {n}", assistant="ok")
    await memory.blocks.seal_tail("ns", "t")
    before = await memory.blocks.marks("ns", "t")
    await memory.derivation.process_pending()
    after = await memory.blocks.marks("ns", "t")
    assert [(m.start_turn, m.end_turn) for m in before] == [(1, 3), (4, 4)]
    assert [m.ready_at for m in before] == [None, None]
    assert all(m.processing_status == "ready" and m.ready_at for m in after)
    assert await memory.blocks.marks("ns", "nobody") == []


@pytest.mark.sqlite_only(
    reason="a SQLite file made at schema 13 by hand, migrated by SQLite's steps"
)
async def test_ready_times_are_filled_in_for_blocks_ready_before_the_column(
    tmp_path: Path,
) -> None:
    raw = sqlite3.connect(tmp_path / "old.db", isolation_level=None)
    migrate(raw, MIGRATIONS.index(m014_block_ready_times))
    now = "2025-01-02T03:04:05+00:00"
    raw.execute(
        "INSERT INTO namespaces(namespace, block_turn_size, block_decay_lambda, created_at, "
        "updated_at) VALUES ('ns', 6, 0.5, ?, ?)",
        (now, now),
    )
    for name, status in (("b1", "ready"), ("b2", "pending")):
        raw.execute(
            "INSERT INTO blocks(id, namespace, thread_id, sequence, thread_sequence, "
            "start_turn, end_turn, l4_readable, l3_condensed, processing_status, created_at, "
            "updated_at) VALUES (?, 'ns', 't', ?, ?, 1, 1, '', '', ?, ?, ?)",
            (name, int(name[1]), int(name[1]), status, now, now),
        )
    raw.close()
    async with await StrataGate.open(tmp_path / "old.db"):
        pass
    raw = sqlite3.connect(tmp_path / "old.db")
    found = dict(raw.execute("SELECT id, ready_at FROM blocks").fetchall())
    raw.close()
    assert found == {"b1": now, "b2": None}
