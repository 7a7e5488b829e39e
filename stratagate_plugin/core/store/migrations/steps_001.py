"""Migration steps 1–12: conversations, jobs, event cards, the evidence gate, the profile,
the search index's supports and job leases. Frozen: each step's DDL is written out as it
was when the step was made, and nothing of the package is imported but ``script``."""

import sqlite3

from .script import run_script


def m001_conversation(raw: sqlite3.Connection) -> None:
    run_script(
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


def m002_jobs(raw: sqlite3.Connection) -> None:
    run_script(
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


def m003_block_lookup(raw: sqlite3.Connection) -> None:
    """Newest ready position per thread (decay); partial, so sealing never touches it."""
    raw.execute(
        "CREATE INDEX blocks_ready ON blocks(namespace, thread_id, ready_position) "
        "WHERE ready_position IS NOT NULL"
    )


def m004_events(raw: sqlite3.Connection) -> None:
    run_script(
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


def m005_evidence_gate(raw: sqlite3.Connection) -> None:
    run_script(
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


def m006_profile(raw: sqlite3.Connection) -> None:
    run_script(
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


def m007_search_at_scale(raw: sqlite3.Connection) -> None:
    """Stored BM25 documents of events (no re-tokenising) and an index of pinned/safety ones.

    The documents are the tokenizer's, live code a frozen step cannot run: the step marks
    the search index stale, and the runner's index maintenance rebuilds it, storing every
    event's document as it goes."""
    raw.execute(
        "CREATE TABLE event_documents (pk INTEGER PRIMARY KEY, stamp TEXT NOT NULL, "
        "length INTEGER NOT NULL, counts_json TEXT NOT NULL)"
    )
    raw.execute(
        "CREATE INDEX events_bypass ON events(namespace, status) "
        "WHERE pinned = 1 OR criticality = 'safety'"
    )
    raw.execute("DELETE FROM meta WHERE key = 'fts_tokenizer_version'")


def m008_index_sealed_only(raw: sqlite3.Connection) -> None:
    """Messages enter the FTS index when sealed (readers search sealed L5 only)."""
    if _has_message_index(raw):
        raw.execute(
            "DELETE FROM message_fts WHERE rowid IN "
            "(SELECT pk FROM messages WHERE block_id IS NULL)"
        )


def m009_sealed_messages_index(raw: sqlite3.Connection) -> None:
    """Index messages by block only once sealed: recording a turn no longer touches it."""
    raw.execute("DROP INDEX messages_block")
    raw.execute(
        "CREATE INDEX messages_block ON messages(block_id, position) WHERE block_id IS NOT NULL"
    )


def m010_block_ordered_fts_rowids(raw: sqlite3.Connection) -> None:
    """FTS rows get consecutive ids per block (``fts_rowid``) instead of the message pk.

    A block's messages are interleaved with other threads' in pk order, so indexing them
    under their pks wrote about a dozen scattered index pages per block.
    """
    raw.execute("ALTER TABLE messages ADD COLUMN fts_rowid INTEGER")
    raw.execute("UPDATE messages SET fts_rowid = pk WHERE block_id IS NOT NULL")
    raw.execute(
        "CREATE UNIQUE INDEX messages_fts_rowid ON messages(fts_rowid) WHERE fts_rowid IS NOT NULL"
    )


def m011_index_stats(raw: sqlite3.Connection) -> None:
    """Namespace counts of indexed messages, their tokens and blocks, kept at seal time:
    BM25's corpus size and average length without scanning the namespace per query."""
    raw.execute(
        "CREATE TABLE message_index_stats (namespace TEXT PRIMARY KEY, "
        "messages INTEGER NOT NULL, tokens INTEGER NOT NULL, blocks INTEGER NOT NULL)"
    )
    if _has_message_index(raw):
        raw.execute(
            "INSERT INTO message_index_stats(namespace, messages, tokens, blocks) "
            f"SELECT m.namespace, count(*), coalesce(sum({_FTS_TOKEN_COUNT}), 0), "
            "count(DISTINCT m.block_id) FROM messages m JOIN message_fts f "
            "ON f.rowid = m.fts_rowid WHERE m.block_id IS NOT NULL GROUP BY m.namespace"
        )


def _has_message_index(raw: sqlite3.Connection) -> bool:
    """Whether the FTS5 message index exists (absent where SQLite has no FTS5)."""
    row = raw.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'message_fts'"
    ).fetchone()
    return row is not None


_FTS_TOKEN_COUNT = (  # tokens in an FTS row's text: one space-separated term each
    "CASE WHEN f.tokens = '' THEN 0 ELSE length(f.tokens) - length(replace(f.tokens, ' ', '')) "
    "+ 1 END"
)


def m012_job_leases(raw: sqlite3.Connection) -> None:
    """A running job is leased to one worker (``owner``) until ``lease_expires_at``;
    ``claims`` counts every hand-out (a manual retry resets ``attempts``, never this), so a
    result is applied only under the claim that produced it."""
    raw.execute("ALTER TABLE jobs ADD COLUMN owner TEXT")
    raw.execute("ALTER TABLE jobs ADD COLUMN lease_expires_at TEXT")
    raw.execute("ALTER TABLE jobs ADD COLUMN claims INTEGER NOT NULL DEFAULT 0")
    raw.execute("UPDATE jobs SET claims = attempts")
