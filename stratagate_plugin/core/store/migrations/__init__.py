"""Numbered schema migrations: the runner and the ordered list of steps.

Opening an older database applies the missing steps in order, each in its own
transaction; opening a database written by newer code is refused. The steps live in
``steps_001.py`` (1–12), ``steps_013.py`` (13–18), ``steps_019.py`` (19–29) and
``steps_030.py`` (30 onward), each frozen: its DDL written out, importing nothing of the
package but ``script`` (checked by ``tests/test_import_layers.py``), so a change to live
code never rewrites history.

A new step: a function ``mNNN_what_it_does`` (the next number) at the end of
``steps_030.py``, and its name at the end of ``MIGRATIONS`` below.
"""

import sqlite3
from collections.abc import Callable

from ...clock import iso, utc_now
from ...errors import SchemaTooNew
from ...events.storage import EventRules
from ...rebuilds import RebuildReport, quiet
from ..search_index import ensure_index, index_is_current
from . import steps_001, steps_013, steps_019, steps_030

MIGRATIONS: list[Callable[[sqlite3.Connection], None]] = [
    steps_001.m001_conversation,
    steps_001.m002_jobs,
    steps_001.m003_block_lookup,
    steps_001.m004_events,
    steps_001.m005_evidence_gate,
    steps_001.m006_profile,
    steps_001.m007_search_at_scale,
    steps_001.m008_index_sealed_only,
    steps_001.m009_sealed_messages_index,
    steps_001.m010_block_ordered_fts_rowids,
    steps_001.m011_index_stats,
    steps_001.m012_job_leases,
    steps_013.m013_memory_actions,
    steps_013.m014_block_ready_times,
    steps_013.m015_overview_indexes,
    steps_013.m016_timeline,
    steps_013.m017_topics,
    steps_013.m018_graph,
    steps_019.m019_topic_spare,
    steps_019.m020_imports,
    steps_019.m021_graph_field_sources,
    steps_019.m022_provenance,
    steps_019.m023_thread_titles,
    steps_019.m024_animal_nodes,
    steps_019.m025_derived_by,
    steps_019.m026_unfiled_kept_by_the_topics,
    steps_019.m027_marks_follow_the_event_type,
    steps_019.m028_page_indexes,
    steps_019.m029_event_states,
    steps_030.m030_node_visible_sources,
    steps_030.m031_block_raw_tokens,
    steps_030.m032_topic_generations,
    steps_030.m033_offline_job_index,
    steps_030.m034_job_priority,
    steps_030.m035_unfinished_jobs_index,
]
SCHEMA_VERSION = len(MIGRATIONS)


def current_version(raw: sqlite3.Connection) -> int:
    raw.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations "
        "(version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)"
    )
    row = raw.execute("SELECT MAX(version) FROM schema_migrations").fetchone()
    return int(row[0] or 0)


def migrate(
    raw: sqlite3.Connection,
    target: int = SCHEMA_VERSION,
    events: EventRules | None = None,
    report: RebuildReport = quiet,
) -> int:
    """Bring the file up to ``target``; refuse a file newer than this code. A stale search
    index is rebuilt with the events' stored documents made by ``events`` (if given), each
    rebuild said to ``report``."""
    found = current_version(raw)
    if found > SCHEMA_VERSION:
        raise SchemaTooNew(
            f"database schema version {found} is newer than this StrataGate "
            f"(supports up to {SCHEMA_VERSION}); upgrade StrataGate to open it"
        )
    for version in range(found + 1, target + 1):
        raw.execute("BEGIN IMMEDIATE")
        if _applied_meanwhile(raw, version):
            raw.execute("COMMIT")
            continue
        try:
            MIGRATIONS[version - 1](raw)
            raw.execute(
                "INSERT INTO schema_migrations(version, applied_at) VALUES (?, ?)",
                (version, iso(utc_now())),
            )
        except BaseException:
            raw.execute("ROLLBACK")
            raise
        raw.execute("COMMIT")
    if target == SCHEMA_VERSION:
        _maintain_index(raw, events, report)
    return target


def _applied_meanwhile(raw: sqlite3.Connection, version: int) -> bool:
    """Whether another process applied ``version`` since this one read the version: two
    processes opening a new file at once must not both run a migration (the second one
    failed on "duplicate column"). Read under the write lock, so the answer holds."""
    row = raw.execute("SELECT 1 FROM schema_migrations WHERE version = ?", (version,)).fetchone()
    return row is not None


def _maintain_index(
    raw: sqlite3.Connection, events: EventRules | None, report: RebuildReport
) -> None:
    """Rebuild the search index only when it is stale (a new tokenizer, or a step that
    marked it so): it is live code's, which frozen steps never run. An open takes no write
    lock otherwise, so parallel opens never wait on each other's long writes."""
    if index_is_current(raw):
        return
    raw.execute("BEGIN IMMEDIATE")
    try:
        ensure_index(raw, events, report)
    except BaseException:
        raw.execute("ROLLBACK")
        raise
    raw.execute("COMMIT")
