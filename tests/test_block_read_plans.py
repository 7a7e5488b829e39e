"""Reads of a few blocks that SQLite's planner walked the whole space for: the thread's
newest ready position (what every rail page and block view decays from), and the blocks
and jobs derived offline (the jobs page). Each gives the right answer through its own
index."""

import sqlite3
from collections.abc import Callable
from functools import partial
from pathlib import Path

import pytest

from stratagate_plugin.core.store import event_search_rows
from stratagate_plugin.core.store.block_rows import latest_ready_position, recent_ready
from stratagate_plugin.core.store.derivation_marks import (
    OFFLINE_FALLBACK,
    fallback_jobs,
    offline_blocks,
)
from stratagate_plugin.core.store.migrations import migrate
from stratagate_plugin.core.store.search_index import register_functions

NOW = "2026-03-01T09:00:00+00:00"
SPACE = "home"
pytestmark = pytest.mark.sqlite_only(reason="SQLite's query plan (EXPLAIN QUERY PLAN)")


@pytest.fixture
def raw(tmp_path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(tmp_path / "blocks.db", isolation_level=None)
    conn.row_factory = sqlite3.Row
    register_functions(conn)
    migrate(conn)
    conn.execute(
        "INSERT INTO namespaces(namespace, current_turn, block_turn_size, block_decay_lambda, "
        "created_at, updated_at) VALUES (?, 0, 6, 0.3, ?, ?)",
        (SPACE, NOW, NOW),
    )
    # thread a: ready at 1 and 2, then a block sent back to pending that kept position 9;
    # thread b: ready at 7; space "other" is not asked about
    # blocks 2 and 4 fell back to the offline model, 3 was derived by it on purpose
    blocks = [("a", 1, "ready", 1, "m"), ("a", 2, "ready", 2, OFFLINE_FALLBACK)]
    blocks += [("a", 3, "pending", 9, "offline"), ("b", 1, "ready", 7, OFFLINE_FALLBACK)]
    for n, (thread, sequence, status, position, by) in enumerate(blocks, start=1):
        conn.execute(
            "INSERT INTO blocks(id, namespace, thread_id, sequence, thread_sequence, start_turn, "
            "end_turn, l4_readable, l3_condensed, processing_status, ready_position, "
            "derived_by, created_at, updated_at) "
            "VALUES (?, ?, ?, ?, ?, 1, 1, '', '', ?, ?, ?, ?, ?)",
            (f"blk{n}", SPACE, thread, n, sequence, status, position, by, NOW, NOW),
        )
    # jobs: two fell back in this space (made out of order), one elsewhere, the rest did not
    jobs = [("j1", SPACE, "09:05", OFFLINE_FALLBACK), ("j2", SPACE, "09:01", OFFLINE_FALLBACK)]
    jobs += [("j3", "other", "09:02", OFFLINE_FALLBACK), ("j4", SPACE, "09:00", "m")]
    jobs += [(f"k{n}", SPACE, "09:03", None) for n in range(20)]
    for job_id, space, at, by in jobs:
        conn.execute(
            "INSERT INTO jobs(id, namespace, kind, target_id, status, derived_by, created_at, "
            "updated_at) VALUES (?, ?, 'extract', ?, 'succeeded', ?, ?, ?)",
            (job_id, space, job_id, by, f"2026-03-01T{at}:00+00:00", NOW),
        )
    return conn


def plan_of(raw: sqlite3.Connection, read: Callable[[], object]) -> str:
    """SQLite's plan for the one statement ``read`` runs (its values bound as it bound them)."""
    said: list[str] = []
    raw.set_trace_callback(said.append)
    read()
    raw.set_trace_callback(None)
    [sql] = said
    return " ".join(row[3] for row in raw.execute(f"EXPLAIN QUERY PLAN {sql}"))


def test_the_newest_ready_position_is_the_threads_own_and_ready(raw: sqlite3.Connection) -> None:
    assert latest_ready_position(raw, SPACE, "a") == 2
    assert latest_ready_position(raw, SPACE, "b") == 7
    assert latest_ready_position(raw, SPACE, "never") == 0
    assert latest_ready_position(raw, "elsewhere", "a") == 0


def test_it_reads_one_threads_ready_blocks_not_the_whole_space(raw: sqlite3.Connection) -> None:
    plan = plan_of(raw, lambda: latest_ready_position(raw, SPACE, "a"))
    assert "blocks_ready" in plan and "blocks_space_status" not in plan


def test_offline_blocks_are_the_fallbacks_in_sealing_order(raw: sqlite3.Connection) -> None:
    assert [block.id for block in offline_blocks(raw, SPACE)] == ["blk2", "blk4"]
    assert [block.id for block in offline_blocks(raw)] == ["blk2", "blk4"]
    assert offline_blocks(raw, "elsewhere") == []


@pytest.mark.parametrize(
    ("read", "index"),
    [(offline_blocks, "blocks_derived_offline"), (fallback_jobs, "jobs_derived_offline")],
)
def test_offline_reads_use_their_partial_index(
    raw: sqlite3.Connection, read: Callable[..., object], index: str
) -> None:
    for space in (SPACE, None):
        assert index in plan_of(raw, partial(read, raw, space))


def test_fallback_jobs_are_the_spaces_fallbacks_oldest_first(raw: sqlite3.Connection) -> None:
    assert [job.id for job in fallback_jobs(raw, SPACE)] == ["j2", "j1"]
    assert [job.id for job in fallback_jobs(raw)] == ["j2", "j3", "j1"]
    assert fallback_jobs(raw, "elsewhere") == []


def test_the_block_listings_counts_read_keys_not_every_block(raw: sqlite3.Connection) -> None:
    assert event_search_rows.thread_status(raw, SPACE) == (4, ["a", "b"])
    status = plan_of(raw, partial(event_search_rows.thread_status, raw, SPACE))
    assert "COVERING INDEX sqlite_autoindex_blocks_3" in status
    assert recent_ready(raw, SPACE, "a", 1)[1] == 2  # a's ready blocks: 1 and 2
    count = plan_of_last(raw, partial(recent_ready, raw, SPACE, "a", 1))
    assert "blocks_space_status" not in count


def test_the_open_tail_count_walks_the_threads_first(raw: sqlite3.Connection) -> None:
    assert event_search_rows.open_tail_count(raw, SPACE, None) == 0
    plan = plan_of(raw, partial(event_search_rows.open_tail_count, raw, SPACE, None))
    assert plan.startswith("SEARCH t USING") and "position>?" in plan


def plan_of_last(raw: sqlite3.Connection, read: Callable[[], object]) -> str:
    """SQLite's plan for the last statement ``read`` runs."""
    said: list[str] = []
    raw.set_trace_callback(said.append)
    read()
    raw.set_trace_callback(None)
    return " ".join(row[3] for row in raw.execute(f"EXPLAIN QUERY PLAN {said[-1]}"))
