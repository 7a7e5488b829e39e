"""Migrations 13 onward: curation actions, overview and timeline indexes, the topic
catalog, the knowledge graph, external-memory imports, truthful provenance, who derived what
(``migrations.py`` runs them)."""

import sqlite3

from .schema_script import run_script as _run_script
from .timeline_rows import TIMELINE_INDEXES
from .topic_rows import TOUCH_SCHEMA
from .topic_spare import create as create_topic_spare


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


def _m022_provenance(raw: sqlite3.Connection) -> None:
    """Truthful sources. A message composed from memory (its turn adopted evidence) is marked
    with the refs it adopted, so it is never a new event's source; an event written during
    a turn (``memory_remember``) waits in ``pending_citations`` for that turn's user message,
    cited in the same transaction that records the turn."""
    _run_script(
        raw,
        """
        ALTER TABLE messages ADD COLUMN composed_from_memory INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE messages ADD COLUMN adopted_refs_json TEXT NOT NULL DEFAULT '[]';
        CREATE TABLE pending_citations (
            event_id TEXT PRIMARY KEY,
            namespace TEXT NOT NULL,
            thread_id TEXT NOT NULL,
            created_at TEXT NOT NULL
        ) WITHOUT ROWID;
        CREATE INDEX pending_citations_thread ON pending_citations(namespace, thread_id)
        """,
    )


def _m023_derived_by(raw: sqlite3.Connection) -> None:
    """Who derived a block's views, an event card and a job's result: the model's name,
    "offline", or "offline-fallback" when the model failed and the offline model's result
    was kept so memory still fills (issue 31); ``derive_error`` holds the model's error as
    one line. NULL: derived before this column, by whatever model ran then."""
    _run_script(
        raw,
        """
        ALTER TABLE blocks ADD COLUMN derived_by TEXT;
        ALTER TABLE blocks ADD COLUMN derive_error TEXT;
        ALTER TABLE events ADD COLUMN derived_by TEXT;
        ALTER TABLE events ADD COLUMN derive_error TEXT;
        ALTER TABLE jobs ADD COLUMN derived_by TEXT;
        CREATE INDEX blocks_derived_offline ON blocks(namespace, updated_at)
            WHERE derived_by = 'offline-fallback'
        """,
    )


LATER_MIGRATIONS = [  # numbers 13 onward, in order (each name says its number)
    _m013_memory_actions,
    _m014_block_ready_times,
    _m015_overview_indexes,
    _m016_timeline,
    _m017_topics,
    _m018_graph,
    _m019_topic_spare,
    _m020_imports,
    _m021_graph_field_sources,
    _m022_provenance,
    _m023_derived_by,
]
