"""The sizes the pages read instead of computing (migrations 30 and 31, PostgreSQL 8 and 9)
stay what computing them would give: a node's ``visible_sources`` (how many of its cited
events are active or superseded) and a block's ``raw_tokens`` (its L5 view's estimate),
through every write path that changes them, on either backend."""

import sqlite3
from typing import Any

from test_event_term_index import each_write_path
from test_offline_fallback import derived_offline

from stratagate_plugin.core.blocks.transcript import render_raw
from stratagate_plugin.core.memory import StrataGate
from stratagate_plugin.core.store import block_rows
from stratagate_plugin.core.store.block_rail_rows import Said
from stratagate_plugin.core.store.migrations import steps_030
from stratagate_plugin.core.store.postgres.migrations import steps_008
from stratagate_plugin.core.store.rows import traces_from_json
from stratagate_plugin.core.text.token_budget import estimate_tokens

RECOUNT = (
    "SELECT n.id, n.visible_sources, (SELECT COUNT(*) FROM graph_sources s JOIN events e "
    "ON e.id = s.event_id WHERE s.record_kind = 'node' AND s.record_id = n.id "
    "AND e.status IN ('active', 'superseded')) FROM graph_nodes n ORDER BY n.id"
)


async def _assert_kept(memory: StrataGate) -> tuple[int, int]:
    """Every stored size equals its computed one; (visible sources, L5 tokens) in all."""

    def read(raw: sqlite3.Connection) -> tuple[list[Any], list[tuple[Any, int]]]:
        nodes = [tuple(row) for row in raw.execute(RECOUNT)]
        blocks = raw.execute("SELECT id, raw_tokens FROM blocks ORDER BY id").fetchall()
        computed = [
            estimate_tokens(render_raw(block_rows.block_messages(raw, row[0]))) for row in blocks
        ]
        return nodes, [(row[1], size) for row, size in zip(blocks, computed, strict=True)]

    nodes, blocks = await memory.db.read(read)
    assert [row[1] for row in nodes] == [row[2] for row in nodes]
    assert [stored for stored, _ in blocks] == [size for _, size in blocks]
    return sum(row[1] for row in nodes), sum(size for _, size in blocks)


async def test_every_write_path_keeps_the_stored_sizes(db_path: Any) -> None:
    memory = await derived_offline(db_path)  # sealing, extraction and graph projection
    totals: dict[str, tuple[int, int]] = {}
    async for step in each_write_path(memory):
        totals[step] = await _assert_kept(memory)
    card = next(c for c in await memory.events.cards("ns") if c.status == "active")
    await memory.curation.correct_event(card.id, title="Corrected", summary="Corrected.")
    totals["superseded"] = await _assert_kept(memory)
    await memory.curation.act("forget", card.id)
    totals["forgotten again"] = await _assert_kept(memory)
    assert totals["extracted"][0] > 0 and totals["extracted"][1] > 0
    assert totals["forgotten"][0] < totals["extracted"][0]  # the forgotten event's sources
    assert totals["imported"][1] > totals["purged"][1] == totals["undone"][1]
    await memory.close()


# Each statement, then every node's stored count against a recount (the triggers alone).
STATEMENTS = [
    "INSERT INTO namespaces VALUES ('s', 0, 0, 3, 0.1, 't', 't')",
    "INSERT INTO events(id, namespace, title, summary, formed_turn, scope, last_adopted_turn, "
    "created_at, updated_at) VALUES ('e1', 's', 'a', 'b', 1, 'user', 1, 't', 't'), "
    "('e2', 's', 'c', 'd', 1, 'user', 1, 't', 't'), ('e3', 's', 'e', 'f', 1, 'user', 1, 't', 't')",
    "INSERT INTO graph_nodes(id, namespace, name, type, name_key, created_at, updated_at) "
    "VALUES ('n1', 's', 'N1', 'person', 'n1', 't', 't'), "
    "('n2', 's', 'N2', 'place', 'n2', 't', 't')",
    "INSERT INTO graph_sources VALUES ('node', 'n1', 'e1'), ('node', 'n1', 'e2'), "
    "('node', 'n1', 'e3'), ('node', 'n2', 'e1'), ('fact', 'n1', 'e2')",
    "INSERT INTO graph_sources VALUES ('node', 'n1', 'e9')",  # its event comes later
    "INSERT INTO events(id, namespace, title, summary, formed_turn, scope, last_adopted_turn, "
    "created_at, updated_at) VALUES ('e9', 's', 'g', 'h', 1, 'user', 1, 't', 't')",
    "UPDATE events SET status = 'superseded' WHERE id = 'e1'",
    "UPDATE events SET status = 'archived' WHERE id = 'e2'",
    "UPDATE events SET status = 'forgotten' WHERE id = 'e3'",
    "UPDATE events SET status = 'active' WHERE id = 'e3'",
    "UPDATE events SET status = 'forgotten', title = 'x' WHERE id IN ('e2', 'e3')",
    "DELETE FROM graph_sources WHERE record_kind = 'node' AND record_id = 'n1' AND event_id = 'e1'",
    "DELETE FROM events WHERE id = 'e9'",
    "UPDATE events SET id = 'e1b' WHERE id = 'e1'",
    "INSERT INTO graph_sources VALUES ('node', 'n3', 'e1b'), ('node', 'n2', 'e1b')",
    "INSERT INTO graph_nodes(id, namespace, name, type, name_key, created_at, updated_at) "
    "VALUES ('n3', 's', 'N3', 'tool', 'n3', 't', 't')",
    "UPDATE events SET status = 'active' WHERE id IN ('e2', 'e3')",
    "DELETE FROM graph_sources WHERE event_id = 'e3'",
    "DELETE FROM graph_nodes WHERE id = 'n2'",
]
EXPECTED_END = [("n1", 1, 1), ("n3", 1, 1)]


async def test_the_triggers_keep_each_nodes_count(memory: StrataGate) -> None:
    for statement in STATEMENTS:

        def run(raw: sqlite3.Connection, sql: str = statement) -> None:
            raw.execute(sql)

        await memory.db.write(run)
        rows = await memory.db.read(lambda raw: [tuple(row) for row in raw.execute(RECOUNT)])
        assert [row[1] for row in rows] == [row[2] for row in rows], statement
    assert rows == EXPECTED_END


SAID = [
    ("user", "Hello\x00 there, 你好 — a long ASCII run follows " + "x" * 37, "[]"),
    (
        "assistant",
        "Let me look.",
        '[{"arguments":{"b":1,"a":"\\u0000é"},"name":"search","result":["ok",null]},'
        '{"name":"empty"}]',
    ),
    ("tool", "", "[]"),
]


def test_the_frozen_back_fills_size_as_the_live_rules_do() -> None:
    """Steps 31 / 9 carry their own copy of the rule: it gives the live rule's answer."""
    messages = [Said(role, text, traces_from_json(traces)) for role, text, traces in SAID]  # type: ignore[arg-type]
    live = estimate_tokens(render_raw(messages))
    assert steps_030.raw_tokens(SAID) == steps_008.raw_tokens(SAID) == live
