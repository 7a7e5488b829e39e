"""Numbered schema migrations, each a small function recorded in ``schema_migrations``.

Opening an older database applies the missing steps in order, each in its own
transaction; opening a database written by newer code is refused.
"""

import sqlite3
from collections.abc import Callable

from ..clock import iso, utc_now
from ..errors import SchemaTooNew
from .search_index import (
    ensure_index,
    has_index,
    index_is_current,
    recount_index_stats,
    store_all_documents,
)
from .timeline_rows import TIMELINE_INDEXES
from .topic_rows import TOUCH_SCHEMA
from .topic_spare import create as create_topic_spare


def _run_script(raw: sqlite3.Connection, script: str) -> None:
    """Execute DDL statement by statement (``executescript`` would commit mid-migration)."""
    for statement in script.split(";"):
        if statement.strip():
            raw.execute(statement)


def _m001_conversation(raw: sqlite3.Connection) -> None:
    _run_script(
        raw,
        """
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE namespaces (
            namespace TEXT PRIMARY KEY,
            current_turn INTEGER NOT NULL DEFAULT 0,
            block_count INTEGER NOT NULL DEFAULT 0,
            block_turn_size INTEGER NOT NULL CHECK (block_turn_size >= 1),
            block_decay_lambda REAL NOT NULL CHECK (block_decay_lambda >= 0),
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL
        );
        CREATE TABLE threads (
            namespace TEXT NOT NULL REFERENCES namespaces(namespace),
            thread_id TEXT NOT NULL,
            turn_count INTEGER NOT NULL DEFAULT 0,
            message_count INTEGER NOT NULL DEFAULT 0,
            open_user_messages INTEGER NOT NULL DEFAULT 0,
            sealed_position INTEGER NOT NULL DEFAULT 0,
            block_count INTEGER NOT NULL DEFAULT 0,
            created_at TEXT NOT NULL,
            PRIMARY KEY (namespace, thread_id)
        );
        CREATE TABLE blocks (
            id TEXT PRIMARY KEY,
            namespace TEXT NOT NULL REFERENCES namespaces(namespace),
            thread_id TEXT NOT NULL,
            sequence INTEGER NOT NULL,
            thread_sequence INTEGER NOT NULL,
            start_turn INTEGER NOT NULL,
            end_turn INTEGER NOT NULL,
            l4_readable TEXT NOT NULL,
            l3_condensed TEXT NOT NULL,
            l0_title TEXT,
            l0_tags_json TEXT,
            l1_summary TEXT,
            l2_keypoints_json TEXT,
            should_extract INTEGER,
            processing_status TEXT NOT NULL DEFAULT 'pending'
                CHECK (processing_status IN ('pending', 'ready')),
            ready_position INTEGER,
            pointer_current_level INTEGER NOT NULL DEFAULT 5,
            pointer_anchor_level INTEGER NOT NULL DEFAULT 5,
            pointer_anchor_position INTEGER,
            last_lifted_at TEXT,
            last_lifted_by TEXT CHECK (last_lifted_by IN ('user', 'agent')),
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            UNIQUE (namespace, sequence),
            UNIQUE (namespace, thread_id, thread_sequence)
        );
        CREATE TABLE messages (
            pk INTEGER PRIMARY KEY,
            id TEXT NOT NULL UNIQUE,
            namespace TEXT NOT NULL,
            thread_id TEXT NOT NULL,
            block_id TEXT REFERENCES blocks(id),
            position INTEGER NOT NULL,
            turn INTEGER NOT NULL,
            namespace_turn INTEGER NOT NULL,
            role TEXT NOT NULL CHECK (role IN ('user', 'assistant', 'tool', 'system')),
            content TEXT NOT NULL,
            tool_calls_json TEXT NOT NULL DEFAULT '[]',
            created_at TEXT NOT NULL,
            FOREIGN KEY (namespace, thread_id) REFERENCES threads(namespace, thread_id),
            UNIQUE (namespace, thread_id, position)
        );
        CREATE INDEX messages_block ON messages(block_id, position);
        CREATE TABLE ingestion_receipts (
            namespace TEXT NOT NULL,
            receipt_id TEXT NOT NULL,
            fingerprint TEXT NOT NULL,
            thread_id TEXT NOT NULL,
            namespace_turn INTEGER NOT NULL,
            thread_turn INTEGER NOT NULL,
            message_ids_json TEXT NOT NULL,
            created_at TEXT NOT NULL,
            PRIMARY KEY (namespace, receipt_id)
        ) WITHOUT ROWID;
        """,
    )


def _m002_jobs(raw: sqlite3.Connection) -> None:
    _run_script(
        raw,
        """
        CREATE TABLE jobs (
            id TEXT PRIMARY KEY,
            namespace TEXT NOT NULL,
            kind TEXT NOT NULL,
            target_id TEXT NOT NULL,
            status TEXT NOT NULL DEFAULT 'pending'
                CHECK (status IN ('pending', 'running', 'succeeded', 'skipped', 'failed')),
            attempts INTEGER NOT NULL DEFAULT 0,
            last_error TEXT,
            next_retry_at TEXT,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            UNIQUE (kind, target_id)
        );
        CREATE INDEX jobs_due ON jobs(status, next_retry_at);
        """,
    )


def _m003_block_lookup(raw: sqlite3.Connection) -> None:
    """Newest ready position per thread (decay); partial, so sealing never touches it."""
    raw.execute(
        "CREATE INDEX blocks_ready ON blocks(namespace, thread_id, ready_position) "
        "WHERE ready_position IS NOT NULL"
    )


def _m004_events(raw: sqlite3.Connection) -> None:
    _run_script(
        raw,
        """
        CREATE TABLE events (
            pk INTEGER PRIMARY KEY,
            id TEXT NOT NULL UNIQUE,
            namespace TEXT NOT NULL REFERENCES namespaces(namespace),
            pool TEXT NOT NULL DEFAULT 'conversation' CHECK (pool IN ('conversation', 'agent')),
            title TEXT NOT NULL,
            summary TEXT NOT NULL,
            tags_json TEXT NOT NULL DEFAULT '[]',
            quotes_json TEXT NOT NULL DEFAULT '[]',
            source_block_id TEXT REFERENCES blocks(id),
            formed_turn INTEGER NOT NULL,
            temporal_json TEXT NOT NULL DEFAULT '{}',
            scope TEXT NOT NULL CHECK (scope IN ('user', 'project', 'session')),
            criticality TEXT NOT NULL DEFAULT 'routine'
                CHECK (criticality IN ('routine', 'preference', 'identity', 'safety')),
            status TEXT NOT NULL DEFAULT 'active'
                CHECK (status IN ('active', 'superseded', 'forgotten', 'archived')),
            superseded_by TEXT,
            mention_count INTEGER NOT NULL DEFAULT 1,
            last_adopted_turn INTEGER NOT NULL,
            last_retrieved_at TEXT,
            pinned INTEGER NOT NULL DEFAULT 0,
            floor_weight REAL NOT NULL DEFAULT 0,
            forced_cap REAL,
            catalog_hints_json TEXT NOT NULL DEFAULT '[]',
            extractor TEXT,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL
        );
        CREATE INDEX events_namespace ON events(namespace, status, pool);
        CREATE INDEX events_block ON events(source_block_id);
        CREATE TABLE event_sources (
            event_id TEXT NOT NULL REFERENCES events(id),
            message_id TEXT NOT NULL REFERENCES messages(id),
            position INTEGER NOT NULL,
            PRIMARY KEY (event_id, message_id)
        );
        CREATE INDEX event_sources_message ON event_sources(message_id)
        """,
    )
    raw.execute("ALTER TABLE jobs ADD COLUMN detail TEXT")


def _m005_evidence_gate(raw: sqlite3.Connection) -> None:
    _run_script(
        raw,
        """
        CREATE TABLE batches (
            id TEXT PRIMARY KEY,
            namespace TEXT NOT NULL,
            thread_id TEXT NOT NULL,
            sequence INTEGER NOT NULL,
            tool TEXT NOT NULL,
            evidence_refs_json TEXT NOT NULL,
            titles_json TEXT NOT NULL DEFAULT '{}',
            status TEXT NOT NULL DEFAULT 'unresolved' CHECK (status IN ('unresolved', 'recorded')),
            assessment_json TEXT,
            turn INTEGER NOT NULL,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            UNIQUE (namespace, thread_id, sequence)
        );
        CREATE TABLE usage_receipts (
            namespace TEXT NOT NULL,
            receipt_id TEXT NOT NULL,
            batch_id TEXT NOT NULL,
            payload TEXT NOT NULL,
            event_ids_json TEXT NOT NULL,
            audit_json TEXT NOT NULL,
            created_at TEXT NOT NULL,
            PRIMARY KEY (namespace, receipt_id)
        );
        CREATE INDEX usage_receipts_batch ON usage_receipts(batch_id)
        """,
    )


def _m006_profile(raw: sqlite3.Connection) -> None:
    _run_script(
        raw,
        """
        CREATE TABLE profile_fields (
            field TEXT PRIMARY KEY,
            value TEXT NOT NULL,
            revision INTEGER NOT NULL,
            updated_at TEXT NOT NULL
        );
        CREATE TABLE profile_changes (
            id INTEGER PRIMARY KEY,
            field TEXT NOT NULL,
            old_value TEXT NOT NULL,
            new_value TEXT NOT NULL,
            source TEXT NOT NULL
                CHECK (source IN ('settings', 'user_explicit', 'agent_tool', 'maintenance')),
            message_id TEXT,
            created_at TEXT NOT NULL
        );
        CREATE TABLE profile_proposals (
            id TEXT PRIMARY KEY,
            thread_key TEXT NOT NULL,
            field TEXT NOT NULL,
            value TEXT NOT NULL,
            status TEXT NOT NULL DEFAULT 'pending'
                CHECK (status IN ('pending', 'applied', 'refused')),
            created_at TEXT NOT NULL,
            resolved_at TEXT
        );
        CREATE INDEX profile_proposals_pending ON profile_proposals(thread_key, status)
        """,
    )


def _m007_search_at_scale(raw: sqlite3.Connection) -> None:
    """Stored BM25 documents of events (no re-tokenising) and an index of pinned/safety ones."""
    raw.execute(
        "CREATE TABLE event_documents (pk INTEGER PRIMARY KEY, stamp TEXT NOT NULL, "
        "length INTEGER NOT NULL, counts_json TEXT NOT NULL)"
    )
    raw.execute(
        "CREATE INDEX events_bypass ON events(namespace, status) "
        "WHERE pinned = 1 OR criticality = 'safety'"
    )
    store_all_documents(raw)


def _m008_index_sealed_only(raw: sqlite3.Connection) -> None:
    """Messages enter the FTS index when sealed (readers search sealed L5 only)."""
    if has_index(raw):
        raw.execute(
            "DELETE FROM message_fts WHERE rowid IN "
            "(SELECT pk FROM messages WHERE block_id IS NULL)"
        )


def _m009_sealed_messages_index(raw: sqlite3.Connection) -> None:
    """Index messages by block only once sealed: recording a turn no longer touches it."""
    raw.execute("DROP INDEX messages_block")
    raw.execute(
        "CREATE INDEX messages_block ON messages(block_id, position) WHERE block_id IS NOT NULL"
    )


def _m010_block_ordered_fts_rowids(raw: sqlite3.Connection) -> None:
    """FTS rows get consecutive ids per block (``fts_rowid``) instead of the message pk.

    A block's messages are interleaved with other threads' in pk order, so indexing them
    under their pks wrote about a dozen scattered index pages per block.
    """
    raw.execute("ALTER TABLE messages ADD COLUMN fts_rowid INTEGER")
    raw.execute("UPDATE messages SET fts_rowid = pk WHERE block_id IS NOT NULL")
    raw.execute(
        "CREATE UNIQUE INDEX messages_fts_rowid ON messages(fts_rowid) WHERE fts_rowid IS NOT NULL"
    )


def _m011_index_stats(raw: sqlite3.Connection) -> None:
    """Namespace counts of indexed messages, their tokens and blocks, kept at seal time:
    BM25's corpus size and average length without scanning the namespace per query."""
    raw.execute(
        "CREATE TABLE message_index_stats (namespace TEXT PRIMARY KEY, "
        "messages INTEGER NOT NULL, tokens INTEGER NOT NULL, blocks INTEGER NOT NULL)"
    )
    if has_index(raw):
        recount_index_stats(raw)


def _m012_job_leases(raw: sqlite3.Connection) -> None:
    """A running job is leased to one worker (``owner``) until ``lease_expires_at``;
    ``claims`` counts every hand-out (a manual retry resets ``attempts``, never this), so a
    result is applied only under the claim that produced it."""
    raw.execute("ALTER TABLE jobs ADD COLUMN owner TEXT")
    raw.execute("ALTER TABLE jobs ADD COLUMN lease_expires_at TEXT")
    raw.execute("ALTER TABLE jobs ADD COLUMN claims INTEGER NOT NULL DEFAULT 0")
    raw.execute("UPDATE jobs SET claims = attempts")


def _m013_memory_actions(raw: sqlite3.Connection) -> None:
    """A receipt for every memory action a person takes (forget, restore, pin, unpin, purge),
    and when a message's text was purged: a purged message keeps its row, position and id."""
    raw.execute(
        "CREATE TABLE memory_actions (id TEXT PRIMARY KEY, namespace TEXT NOT NULL, "
        "kind TEXT NOT NULL CHECK (kind IN ('forget', 'restore', 'pin', 'unpin', 'purge')), "
        "target_id TEXT NOT NULL, actor TEXT NOT NULL CHECK (actor IN ('user', 'agent')), "
        "detail_json TEXT NOT NULL DEFAULT '{}', created_at TEXT NOT NULL)"
    )
    raw.execute("CREATE INDEX memory_actions_target ON memory_actions(target_id, created_at)")
    raw.execute("ALTER TABLE messages ADD COLUMN purged_at TEXT")


def _m014_block_ready_times(raw: sqlite3.Connection) -> None:
    """When a block became ready (the chat's "block ready" rows); blocks made ready before
    this column existed take their last update, the closest time known."""
    raw.execute("ALTER TABLE blocks ADD COLUMN ready_at TEXT")
    raw.execute("UPDATE blocks SET ready_at = updated_at WHERE processing_status = 'ready'")


def _m015_overview_indexes(raw: sqlite3.Connection) -> None:
    """The memory page's counts and lists read indexes only: blocks and jobs of a space by
    state, its jobs and usage receipts newest first, its receipts that adopted something."""
    _run_script(
        raw,
        """
        CREATE INDEX blocks_space_status ON blocks(namespace, processing_status);
        CREATE INDEX jobs_space_state ON jobs(namespace, status, kind);
        CREATE INDEX jobs_space_recent ON jobs(namespace, updated_at, id);
        CREATE INDEX jobs_space_state_recent ON jobs(namespace, status, updated_at, id);
        CREATE INDEX usage_receipts_recent ON usage_receipts(namespace, created_at, receipt_id);
        CREATE INDEX usage_receipts_adopted ON usage_receipts(namespace)
            WHERE event_ids_json != '[]'
        """,
    )


def _m017_topics(raw: sqlite3.Connection) -> None:
    """The topic catalog (§5): chapters with their JSON sections and overview, members with
    the fingerprint each was projected at, events queued in batches (a job's target), each
    space's bootstrap under a projector version. The historical budget lives in ``meta``."""
    _run_script(
        raw,
        """
        CREATE TABLE topics (
            pk INTEGER PRIMARY KEY,
            id TEXT NOT NULL UNIQUE,
            namespace TEXT NOT NULL,
            title TEXT NOT NULL,
            description TEXT NOT NULL DEFAULT '',
            category TEXT NOT NULL DEFAULT 'other',
            status TEXT NOT NULL CHECK (status IN ('ready', 'pending')),
            sections_json TEXT NOT NULL DEFAULT '[]',
            overview_json TEXT NOT NULL DEFAULT '[]',
            keywords_json TEXT NOT NULL DEFAULT '[]',
            has_agent INTEGER NOT NULL DEFAULT 0,
            projector_version INTEGER NOT NULL,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            invalidated_at TEXT
        );
        CREATE INDEX topics_order ON topics(namespace, created_at, id);
        CREATE TABLE topic_members (
            topic_id TEXT NOT NULL,
            event_id TEXT NOT NULL,
            namespace TEXT NOT NULL,
            position INTEGER NOT NULL,
            fingerprint TEXT,
            seen_at TEXT NOT NULL,
            category TEXT NOT NULL,
            pool TEXT NOT NULL,
            PRIMARY KEY (topic_id, event_id)
        ) WITHOUT ROWID;
        CREATE INDEX topic_members_event ON topic_members(event_id);
        CREATE INDEX topic_members_namespace ON topic_members(namespace);
        CREATE TABLE topic_batches (
            id TEXT PRIMARY KEY,
            namespace TEXT NOT NULL,
            historical INTEGER NOT NULL,
            topic_id TEXT,
            created_at TEXT NOT NULL
        );
        CREATE TABLE topic_queue (
            event_id TEXT PRIMARY KEY,
            namespace TEXT NOT NULL,
            batch_id TEXT NOT NULL,
            position INTEGER NOT NULL
        );
        CREATE INDEX topic_queue_batch ON topic_queue(batch_id, position);
        CREATE INDEX topic_queue_namespace ON topic_queue(namespace);
        CREATE TABLE topic_state (
            namespace TEXT PRIMARY KEY,
            projector_version INTEGER NOT NULL,
            frozen_events INTEGER NOT NULL,
            created_at TEXT NOT NULL
        )
        """,
    )


def _m018_graph(raw: sqlite3.Connection) -> None:
    """The knowledge graph (spec §4): nodes with aliases, bi-temporal facts and edges, the
    events each record comes from, and projection batches (the events of each job)."""
    _run_script(
        raw,
        """
        CREATE TABLE graph_nodes (
            pk INTEGER PRIMARY KEY,
            id TEXT NOT NULL UNIQUE,
            namespace TEXT NOT NULL,
            name TEXT NOT NULL,
            type TEXT NOT NULL
                CHECK (type IN ('person', 'project', 'organization', 'tool', 'place')),
            name_key TEXT NOT NULL,
            tags_json TEXT NOT NULL DEFAULT '[]',
            status TEXT NOT NULL DEFAULT 'active'
                CHECK (status IN ('active', 'superseded', 'disputed', 'archived')),
            confidence REAL NOT NULL DEFAULT 0.8,
            source_count INTEGER NOT NULL DEFAULT 0,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL
        );
        CREATE INDEX graph_nodes_key ON graph_nodes(namespace, name_key, type);
        CREATE INDEX graph_nodes_importance ON graph_nodes(namespace, source_count DESC, pk);
        CREATE TABLE graph_aliases (
            node_id TEXT NOT NULL REFERENCES graph_nodes(id) ON DELETE CASCADE,
            namespace TEXT NOT NULL,
            alias TEXT NOT NULL,
            alias_key TEXT NOT NULL,
            PRIMARY KEY (node_id, alias_key)
        );
        CREATE INDEX graph_aliases_key ON graph_aliases(namespace, alias_key);
        CREATE TABLE graph_facts (
            id TEXT PRIMARY KEY,
            node_id TEXT NOT NULL REFERENCES graph_nodes(id) ON DELETE CASCADE,
            key TEXT NOT NULL,
            value_json TEXT NOT NULL,
            status TEXT NOT NULL DEFAULT 'active'
                CHECK (status IN ('active', 'superseded', 'disputed', 'archived')),
            confidence REAL NOT NULL DEFAULT 0.8,
            valid_from TEXT,
            valid_to TEXT,
            stated_at TEXT,
            learned_at TEXT NOT NULL,
            superseded_at TEXT,
            superseded_by TEXT
        );
        CREATE INDEX graph_facts_node ON graph_facts(node_id, key, status);
        CREATE INDEX graph_facts_learned ON graph_facts(node_id, learned_at);
        CREATE TABLE graph_edges (
            id TEXT PRIMARY KEY,
            namespace TEXT NOT NULL,
            from_node_id TEXT NOT NULL REFERENCES graph_nodes(id) ON DELETE CASCADE,
            to_node_id TEXT NOT NULL REFERENCES graph_nodes(id) ON DELETE CASCADE,
            relation TEXT NOT NULL,
            status TEXT NOT NULL DEFAULT 'active'
                CHECK (status IN ('active', 'superseded', 'disputed', 'archived')),
            confidence REAL NOT NULL DEFAULT 0.8,
            valid_from TEXT,
            valid_to TEXT,
            stated_at TEXT,
            learned_at TEXT NOT NULL,
            superseded_at TEXT,
            superseded_by TEXT
        );
        CREATE INDEX graph_edges_from ON graph_edges(from_node_id, relation, status);
        CREATE INDEX graph_edges_from_learned ON graph_edges(from_node_id, learned_at);
        CREATE INDEX graph_edges_to ON graph_edges(to_node_id, learned_at);
        CREATE TABLE graph_sources (
            record_kind TEXT NOT NULL CHECK (record_kind IN ('node', 'fact', 'edge')),
            record_id TEXT NOT NULL,
            event_id TEXT NOT NULL,
            PRIMARY KEY (record_kind, record_id, event_id)
        ) WITHOUT ROWID;
        CREATE INDEX graph_sources_event ON graph_sources(event_id);
        CREATE TABLE graph_terms (
            namespace TEXT NOT NULL,
            term TEXT NOT NULL,
            node_id TEXT NOT NULL,
            PRIMARY KEY (namespace, term, node_id)
        ) WITHOUT ROWID;
        CREATE INDEX graph_terms_node ON graph_terms(node_id);
        CREATE TABLE graph_duplicates (
            node_id TEXT NOT NULL,
            other_id TEXT NOT NULL,
            namespace TEXT NOT NULL,
            reason TEXT NOT NULL,
            created_at TEXT NOT NULL,
            PRIMARY KEY (node_id, other_id)
        ) WITHOUT ROWID;
        CREATE INDEX graph_duplicates_space ON graph_duplicates(namespace);
        CREATE TABLE graph_batches (
            id TEXT PRIMARY KEY,
            namespace TEXT NOT NULL,
            priority INTEGER NOT NULL DEFAULT 1000,
            projector_version INTEGER NOT NULL,
            node_ids_json TEXT NOT NULL DEFAULT '[]',
            edge_ids_json TEXT NOT NULL DEFAULT '[]',
            reason TEXT,
            created_at TEXT NOT NULL
        );
        CREATE TABLE graph_batch_events (
            batch_id TEXT NOT NULL REFERENCES graph_batches(id),
            event_id TEXT NOT NULL,
            PRIMARY KEY (batch_id, event_id)
        );
        CREATE INDEX graph_batch_events_event ON graph_batch_events(event_id)
        """,
    )


def _m019_topic_spare(raw: sqlite3.Connection) -> None:
    """The topic reads of every turn made independent of the space's size: the fallback
    entries' index (``topic_spare``: each visible event in no chapter without agent events,
    with its category, and the counts per category) and a ``touched`` flag on chapter
    members whose event changed since it was seen, both filled from the data as it is and
    kept by triggers from then on."""
    create_topic_spare(raw)
    for statement in TOUCH_SCHEMA:
        raw.execute(statement)


def _m016_timeline(raw: sqlite3.Connection) -> None:
    """Receipts for corrections and resolved conflicts (SQLite cannot alter a CHECK, so the
    table is rebuilt), and the indexes the timeline pages walk: events by chronology (all
    statuses, one status) and active events still marked in conflict."""
    raw.execute(
        "CREATE TABLE memory_actions_new (id TEXT PRIMARY KEY, namespace TEXT NOT NULL, "
        "kind TEXT NOT NULL CHECK (kind IN "
        "('forget', 'restore', 'pin', 'unpin', 'purge', 'correct', 'resolve')), "
        "target_id TEXT NOT NULL, actor TEXT NOT NULL CHECK (actor IN ('user', 'agent')), "
        "detail_json TEXT NOT NULL DEFAULT '{}', created_at TEXT NOT NULL)"
    )
    raw.execute("INSERT INTO memory_actions_new SELECT * FROM memory_actions")
    raw.execute("DROP TABLE memory_actions")
    raw.execute("ALTER TABLE memory_actions_new RENAME TO memory_actions")
    raw.execute("CREATE INDEX memory_actions_target ON memory_actions(target_id, created_at)")
    for statement in TIMELINE_INDEXES:
        raw.execute(statement)


def _m020_imports(raw: sqlite3.Connection) -> None:
    """External-memory import jobs (spec §11.4): the pasted text, status and progress, one
    row per candidate with its decision (written once) and the user's choice; a committed
    job names its batch, the permanent source block its events cite."""
    _run_script(
        raw,
        """
        CREATE TABLE import_jobs (
            id TEXT PRIMARY KEY,
            namespace TEXT NOT NULL,
            status TEXT NOT NULL CHECK (status IN ('extracting', 'processing',
                'awaiting_confirmation', 'ready', 'committing', 'committed', 'undone', 'failed')),
            format TEXT NOT NULL,
            source_system TEXT NOT NULL,
            text TEXT NOT NULL,
            payload TEXT NOT NULL DEFAULT '{}',
            processed INTEGER NOT NULL DEFAULT 0,
            total INTEGER NOT NULL DEFAULT 0,
            error TEXT,
            batch_id TEXT UNIQUE,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            committed_at TEXT,
            undone_at TEXT
        );
        CREATE INDEX import_jobs_namespace ON import_jobs(namespace, created_at);
        CREATE INDEX import_jobs_status ON import_jobs(status);
        CREATE TABLE import_items (
            job_id TEXT NOT NULL REFERENCES import_jobs(id),
            idx INTEGER NOT NULL,
            candidate_json TEXT NOT NULL,
            decision_json TEXT,
            choice TEXT,
            PRIMARY KEY (job_id, idx)
        ) WITHOUT ROWID
        """,
    )


def _m021_graph_field_sources(raw: sqlite3.Connection) -> None:
    """Per-field provenance of node aliases and tags (spec §4 ``metadataProvenance``): the
    events that gave each one, so a forget or an import undo deletes an alias or tag left
    without a source. Existing aliases and tags are given their node's sources."""
    _run_script(
        raw,
        """
        CREATE TABLE graph_field_sources (
            node_id TEXT NOT NULL,
            field TEXT NOT NULL CHECK (field IN ('alias', 'tag')),
            value_key TEXT NOT NULL,
            event_id TEXT NOT NULL,
            PRIMARY KEY (node_id, field, value_key, event_id)
        ) WITHOUT ROWID;
        CREATE INDEX graph_field_sources_event ON graph_field_sources(event_id);
        INSERT OR IGNORE INTO graph_field_sources
            SELECT a.node_id, 'alias', a.alias_key, s.event_id FROM graph_aliases a
            JOIN graph_sources s ON s.record_kind = 'node' AND s.record_id = a.node_id;
        INSERT OR IGNORE INTO graph_field_sources
            SELECT n.id, 'tag', j.value, s.event_id FROM graph_nodes n, json_each(n.tags_json) j
            JOIN graph_sources s ON s.record_kind = 'node' AND s.record_id = n.id
        """,
    )


MIGRATIONS: list[Callable[[sqlite3.Connection], None]] = [
    _m001_conversation,
    _m002_jobs,
    _m003_block_lookup,
    _m004_events,
    _m005_evidence_gate,
    _m006_profile,
    _m007_search_at_scale,
    _m008_index_sealed_only,
    _m009_sealed_messages_index,
    _m010_block_ordered_fts_rowids,
    _m011_index_stats,
    _m012_job_leases,
    _m013_memory_actions,
    _m014_block_ready_times,
    _m015_overview_indexes,
    _m016_timeline,
    _m017_topics,
    _m018_graph,
    _m019_topic_spare,
    _m020_imports,
    _m021_graph_field_sources,
]
SCHEMA_VERSION = len(MIGRATIONS)


def current_version(raw: sqlite3.Connection) -> int:
    raw.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations "
        "(version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)"
    )
    row = raw.execute("SELECT MAX(version) FROM schema_migrations").fetchone()
    return int(row[0] or 0)


def migrate(raw: sqlite3.Connection, target: int = SCHEMA_VERSION) -> int:
    """Bring the file up to ``target``; refuse a file newer than this code."""
    found = current_version(raw)
    if found > SCHEMA_VERSION:
        raise SchemaTooNew(
            f"database schema version {found} is newer than this StrataGate "
            f"(supports up to {SCHEMA_VERSION}); upgrade StrataGate to open it"
        )
    for version in range(found + 1, target + 1):
        raw.execute("BEGIN IMMEDIATE")
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
        _maintain_index(raw)
    return target


def _maintain_index(raw: sqlite3.Connection) -> None:
    """Rebuild the search index only when it is stale: an open takes no write lock
    otherwise, so parallel opens never wait on each other's long writes."""
    if index_is_current(raw):
        return
    raw.execute("BEGIN IMMEDIATE")
    try:
        ensure_index(raw)
    except BaseException:
        raw.execute("ROLLBACK")
        raise
    raw.execute("COMMIT")
