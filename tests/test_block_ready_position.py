"""The thread's newest ready position (what every rail page and block view decays from):
the right answer, read through the one thread's ``blocks_ready`` index."""

import sqlite3
from pathlib import Path

import pytest

from stratagate_plugin.core.store.block_rows import latest_ready_position
from stratagate_plugin.core.store.migrations import migrate
from stratagate_plugin.core.store.search_index import register_functions

NOW = "2026-03-01T09:00:00+00:00"
SPACE = "home"
pytestmark = pytest.mark.sqlite_only(reason="SQLite's query plan (EXPLAIN QUERY PLAN)")


@pytest.fixture
def raw(tmp_path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(tmp_path / "blocks.db", isolation_level=None)
    register_functions(conn)
    migrate(conn)
    conn.execute(
        "INSERT INTO namespaces(namespace, current_turn, block_turn_size, block_decay_lambda, "
        "created_at, updated_at) VALUES (?, 0, 6, 0.3, ?, ?)",
        (SPACE, NOW, NOW),
    )
    # thread a: ready at 1 and 2, then a block sent back to pending that kept position 9;
    # thread b: ready at 7; space "other" is not asked about
    blocks = [("a", 1, "ready", 1), ("a", 2, "ready", 2), ("a", 3, "pending", 9)]
    blocks += [("b", 1, "ready", 7)]
    for n, (thread, sequence, status, position) in enumerate(blocks, start=1):
        conn.execute(
            "INSERT INTO blocks(id, namespace, thread_id, sequence, thread_sequence, start_turn, "
            "end_turn, l4_readable, l3_condensed, processing_status, ready_position, "
            "created_at, updated_at) VALUES (?, ?, ?, ?, ?, 1, 1, '', '', ?, ?, ?, ?)",
            (f"blk{n}", SPACE, thread, n, sequence, status, position, NOW, NOW),
        )
    return conn


def test_the_newest_ready_position_is_the_threads_own_and_ready(raw: sqlite3.Connection) -> None:
    assert latest_ready_position(raw, SPACE, "a") == 2
    assert latest_ready_position(raw, SPACE, "b") == 7
    assert latest_ready_position(raw, SPACE, "never") == 0
    assert latest_ready_position(raw, "elsewhere", "a") == 0


def test_it_reads_one_threads_ready_blocks_not_the_whole_space(raw: sqlite3.Connection) -> None:
    plans: list[str] = []
    raw.set_trace_callback(plans.append)
    latest_ready_position(raw, SPACE, "a")
    raw.set_trace_callback(None)
    [sql] = plans
    sql = sql.replace(f"'{SPACE}'", "?").replace("'a'", "?")
    plan = " ".join(row[3] for row in raw.execute(f"EXPLAIN QUERY PLAN {sql}", (SPACE, "a")))
    assert "blocks_ready" in plan and "blocks_space_status" not in plan
