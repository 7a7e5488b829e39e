-- index blocks_ready on blocks
CREATE INDEX blocks_ready ON blocks(namespace, thread_id, ready_position) WHERE ready_position IS NOT NULL;
-- index blocks_space_status on blocks
CREATE INDEX blocks_space_status ON blocks(namespace, processing_status);
-- index event_sources_message on event_sources
CREATE INDEX event_sources_message ON event_sources(message_id)
        ;
-- index events_block on events
CREATE INDEX events_block ON events(source_block_id);
-- index events_bypass on events
CREATE INDEX events_bypass ON events(namespace, status) WHERE pinned = 1 OR criticality = 'safety';
-- index events_conflicted on events
CREATE INDEX events_conflicted ON events(namespace) WHERE status = 'active' AND json_array_length(temporal_json, '$.conflicts_with_event_ids') > 0;
-- index events_namespace on events
CREATE INDEX events_namespace ON events(namespace, status, pool);
-- index events_timeline on events
CREATE INDEX events_timeline ON events(namespace, COALESCE(json_extract(temporal_json, '$.happened_start'), json_extract(temporal_json, '$.happened_end'), json_extract(temporal_json, '$.mentioned_at'), created_at));
-- index graph_aliases_key on graph_aliases
CREATE INDEX graph_aliases_key ON graph_aliases(namespace, alias_key);
-- index graph_batch_events_event on graph_batch_events
CREATE INDEX graph_batch_events_event ON graph_batch_events(event_id)
        ;
-- index graph_duplicates_space on graph_duplicates
CREATE INDEX graph_duplicates_space ON graph_duplicates(namespace);
-- index graph_edges_from on graph_edges
CREATE INDEX graph_edges_from ON graph_edges(from_node_id, relation, status);
-- index graph_edges_from_learned on graph_edges
CREATE INDEX graph_edges_from_learned ON graph_edges(from_node_id, learned_at);
-- index graph_edges_to on graph_edges
CREATE INDEX graph_edges_to ON graph_edges(to_node_id, learned_at);
-- index graph_facts_learned on graph_facts
CREATE INDEX graph_facts_learned ON graph_facts(node_id, learned_at);
-- index graph_facts_node on graph_facts
CREATE INDEX graph_facts_node ON graph_facts(node_id, key, status);
-- index graph_field_sources_event on graph_field_sources
CREATE INDEX graph_field_sources_event ON graph_field_sources(event_id);
-- index graph_nodes_importance on graph_nodes
CREATE INDEX graph_nodes_importance ON graph_nodes(namespace, source_count DESC, pk);
-- index graph_nodes_key on graph_nodes
CREATE INDEX graph_nodes_key ON graph_nodes(namespace, name_key, type);
-- index graph_sources_event on graph_sources
CREATE INDEX graph_sources_event ON graph_sources(event_id);
-- index graph_terms_node on graph_terms
CREATE INDEX graph_terms_node ON graph_terms(node_id);
-- index import_jobs_namespace on import_jobs
CREATE INDEX import_jobs_namespace ON import_jobs(namespace, created_at);
-- index import_jobs_status on import_jobs
CREATE INDEX import_jobs_status ON import_jobs(status);
-- index jobs_due on jobs
CREATE INDEX jobs_due ON jobs(status, next_retry_at);
-- index jobs_space_recent on jobs
CREATE INDEX jobs_space_recent ON jobs(namespace, updated_at, id);
-- index jobs_space_state on jobs
CREATE INDEX jobs_space_state ON jobs(namespace, status, kind);
-- index jobs_space_state_recent on jobs
CREATE INDEX jobs_space_state_recent ON jobs(namespace, status, updated_at, id);
-- index memory_actions_target on memory_actions
CREATE INDEX memory_actions_target ON memory_actions(target_id, created_at);
-- index messages_block on messages
CREATE INDEX messages_block ON messages(block_id, position) WHERE block_id IS NOT NULL;
-- index messages_fts_rowid on messages
CREATE UNIQUE INDEX messages_fts_rowid ON messages(fts_rowid) WHERE fts_rowid IS NOT NULL;
-- index pending_citations_thread on pending_citations
CREATE INDEX pending_citations_thread ON pending_citations(namespace, thread_id)
        ;
-- index profile_proposals_pending on profile_proposals
CREATE INDEX profile_proposals_pending ON profile_proposals(thread_key, status)
        ;
-- index sqlite_autoindex_batches_1 on batches
-- (automatic);
-- index sqlite_autoindex_batches_2 on batches
-- (automatic);
-- index sqlite_autoindex_blocks_1 on blocks
-- (automatic);
-- index sqlite_autoindex_blocks_2 on blocks
-- (automatic);
-- index sqlite_autoindex_blocks_3 on blocks
-- (automatic);
-- index sqlite_autoindex_event_sources_1 on event_sources
-- (automatic);
-- index sqlite_autoindex_events_1 on events
-- (automatic);
-- index sqlite_autoindex_graph_aliases_1 on graph_aliases
-- (automatic);
-- index sqlite_autoindex_graph_batch_events_1 on graph_batch_events
-- (automatic);
-- index sqlite_autoindex_graph_batches_1 on graph_batches
-- (automatic);
-- index sqlite_autoindex_graph_edges_1 on graph_edges
-- (automatic);
-- index sqlite_autoindex_graph_facts_1 on graph_facts
-- (automatic);
-- index sqlite_autoindex_graph_nodes_1 on graph_nodes
-- (automatic);
-- index sqlite_autoindex_import_jobs_1 on import_jobs
-- (automatic);
-- index sqlite_autoindex_import_jobs_2 on import_jobs
-- (automatic);
-- index sqlite_autoindex_jobs_1 on jobs
-- (automatic);
-- index sqlite_autoindex_jobs_2 on jobs
-- (automatic);
-- index sqlite_autoindex_memory_actions_1 on memory_actions
-- (automatic);
-- index sqlite_autoindex_message_index_stats_1 on message_index_stats
-- (automatic);
-- index sqlite_autoindex_messages_1 on messages
-- (automatic);
-- index sqlite_autoindex_messages_2 on messages
-- (automatic);
-- index sqlite_autoindex_meta_1 on meta
-- (automatic);
-- index sqlite_autoindex_namespaces_1 on namespaces
-- (automatic);
-- index sqlite_autoindex_profile_fields_1 on profile_fields
-- (automatic);
-- index sqlite_autoindex_profile_proposals_1 on profile_proposals
-- (automatic);
-- index sqlite_autoindex_threads_1 on threads
-- (automatic);
-- index sqlite_autoindex_topic_batches_1 on topic_batches
-- (automatic);
-- index sqlite_autoindex_topic_queue_1 on topic_queue
-- (automatic);
-- index sqlite_autoindex_topic_state_1 on topic_state
-- (automatic);
-- index sqlite_autoindex_topics_1 on topics
-- (automatic);
-- index sqlite_autoindex_usage_receipts_1 on usage_receipts
-- (automatic);
-- index topic_members_event on topic_members
CREATE INDEX topic_members_event ON topic_members(event_id);
-- index topic_members_namespace on topic_members
CREATE INDEX topic_members_namespace ON topic_members(namespace);
-- index topic_members_touched on topic_members
CREATE INDEX topic_members_touched ON topic_members(namespace) WHERE touched = 1 OR fingerprint IS NULL;
-- index topic_queue_batch on topic_queue
CREATE INDEX topic_queue_batch ON topic_queue(batch_id, position);
-- index topic_queue_namespace on topic_queue
CREATE INDEX topic_queue_namespace ON topic_queue(namespace);
-- index topic_spare_category on topic_spare
CREATE INDEX topic_spare_category ON topic_spare(namespace, category, event_pk);
-- index topic_spare_order on topic_spare
CREATE INDEX topic_spare_order ON topic_spare(namespace, event_pk);
-- index topics_order on topics
CREATE INDEX topics_order ON topics(namespace, created_at, id);
-- index usage_receipts_adopted on usage_receipts
CREATE INDEX usage_receipts_adopted ON usage_receipts(namespace)
            WHERE event_ids_json != '[]'
        ;
-- index usage_receipts_batch on usage_receipts
CREATE INDEX usage_receipts_batch ON usage_receipts(batch_id)
        ;
-- index usage_receipts_recent on usage_receipts
CREATE INDEX usage_receipts_recent ON usage_receipts(namespace, created_at, receipt_id);
-- table batches on batches
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
-- table blocks on blocks
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
            updated_at TEXT NOT NULL, ready_at TEXT,
            UNIQUE (namespace, sequence),
            UNIQUE (namespace, thread_id, thread_sequence)
        );
-- table event_documents on event_documents
CREATE TABLE event_documents (pk INTEGER PRIMARY KEY, stamp TEXT NOT NULL, length INTEGER NOT NULL, counts_json TEXT NOT NULL);
-- table event_fts on event_fts
CREATE VIRTUAL TABLE event_fts USING fts5(tokens);
-- table event_fts_config on event_fts_config
CREATE TABLE 'event_fts_config'(k PRIMARY KEY, v) WITHOUT ROWID;
-- table event_fts_content on event_fts_content
CREATE TABLE 'event_fts_content'(id INTEGER PRIMARY KEY, c0);
-- table event_fts_data on event_fts_data
CREATE TABLE 'event_fts_data'(id INTEGER PRIMARY KEY, block BLOB);
-- table event_fts_docsize on event_fts_docsize
CREATE TABLE 'event_fts_docsize'(id INTEGER PRIMARY KEY, sz BLOB);
-- table event_fts_idx on event_fts_idx
CREATE TABLE 'event_fts_idx'(segid, term, pgno, PRIMARY KEY(segid, term)) WITHOUT ROWID;
-- table event_sources on event_sources
CREATE TABLE event_sources (
            event_id TEXT NOT NULL REFERENCES events(id),
            message_id TEXT NOT NULL REFERENCES messages(id),
            position INTEGER NOT NULL,
            PRIMARY KEY (event_id, message_id)
        );
-- table events on events
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
-- table graph_aliases on graph_aliases
CREATE TABLE graph_aliases (
            node_id TEXT NOT NULL REFERENCES graph_nodes(id) ON DELETE CASCADE,
            namespace TEXT NOT NULL,
            alias TEXT NOT NULL,
            alias_key TEXT NOT NULL,
            PRIMARY KEY (node_id, alias_key)
        );
-- table graph_batch_events on graph_batch_events
CREATE TABLE graph_batch_events (
            batch_id TEXT NOT NULL REFERENCES graph_batches(id),
            event_id TEXT NOT NULL,
            PRIMARY KEY (batch_id, event_id)
        );
-- table graph_batches on graph_batches
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
-- table graph_duplicates on graph_duplicates
CREATE TABLE graph_duplicates (
            node_id TEXT NOT NULL,
            other_id TEXT NOT NULL,
            namespace TEXT NOT NULL,
            reason TEXT NOT NULL,
            created_at TEXT NOT NULL,
            PRIMARY KEY (node_id, other_id)
        ) WITHOUT ROWID;
-- table graph_edges on graph_edges
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
-- table graph_facts on graph_facts
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
-- table graph_field_sources on graph_field_sources
CREATE TABLE graph_field_sources (
            node_id TEXT NOT NULL,
            field TEXT NOT NULL CHECK (field IN ('alias', 'tag')),
            value_key TEXT NOT NULL,
            event_id TEXT NOT NULL,
            PRIMARY KEY (node_id, field, value_key, event_id)
        ) WITHOUT ROWID;
-- table graph_nodes on graph_nodes
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
-- table graph_sources on graph_sources
CREATE TABLE graph_sources (
            record_kind TEXT NOT NULL CHECK (record_kind IN ('node', 'fact', 'edge')),
            record_id TEXT NOT NULL,
            event_id TEXT NOT NULL,
            PRIMARY KEY (record_kind, record_id, event_id)
        ) WITHOUT ROWID;
-- table graph_terms on graph_terms
CREATE TABLE graph_terms (
            namespace TEXT NOT NULL,
            term TEXT NOT NULL,
            node_id TEXT NOT NULL,
            PRIMARY KEY (namespace, term, node_id)
        ) WITHOUT ROWID;
-- table import_items on import_items
CREATE TABLE import_items (
            job_id TEXT NOT NULL REFERENCES import_jobs(id),
            idx INTEGER NOT NULL,
            candidate_json TEXT NOT NULL,
            decision_json TEXT,
            choice TEXT,
            PRIMARY KEY (job_id, idx)
        ) WITHOUT ROWID
        ;
-- table import_jobs on import_jobs
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
-- table ingestion_receipts on ingestion_receipts
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
-- table jobs on jobs
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
            updated_at TEXT NOT NULL, detail TEXT, owner TEXT, lease_expires_at TEXT, claims INTEGER NOT NULL DEFAULT 0,
            UNIQUE (kind, target_id)
        );
-- table memory_actions on memory_actions
CREATE TABLE "memory_actions" (id TEXT PRIMARY KEY, namespace TEXT NOT NULL, kind TEXT NOT NULL CHECK (kind IN ('forget', 'restore', 'pin', 'unpin', 'purge', 'correct', 'resolve')), target_id TEXT NOT NULL, actor TEXT NOT NULL CHECK (actor IN ('user', 'agent')), detail_json TEXT NOT NULL DEFAULT '{}', created_at TEXT NOT NULL);
-- table message_fts on message_fts
CREATE VIRTUAL TABLE message_fts USING fts5(tokens);
-- table message_fts_config on message_fts_config
CREATE TABLE 'message_fts_config'(k PRIMARY KEY, v) WITHOUT ROWID;
-- table message_fts_content on message_fts_content
CREATE TABLE 'message_fts_content'(id INTEGER PRIMARY KEY, c0);
-- table message_fts_data on message_fts_data
CREATE TABLE 'message_fts_data'(id INTEGER PRIMARY KEY, block BLOB);
-- table message_fts_docsize on message_fts_docsize
CREATE TABLE 'message_fts_docsize'(id INTEGER PRIMARY KEY, sz BLOB);
-- table message_fts_idx on message_fts_idx
CREATE TABLE 'message_fts_idx'(segid, term, pgno, PRIMARY KEY(segid, term)) WITHOUT ROWID;
-- table message_index_stats on message_index_stats
CREATE TABLE message_index_stats (namespace TEXT PRIMARY KEY, messages INTEGER NOT NULL, tokens INTEGER NOT NULL, blocks INTEGER NOT NULL);
-- table messages on messages
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
            created_at TEXT NOT NULL, fts_rowid INTEGER, purged_at TEXT, composed_from_memory INTEGER NOT NULL DEFAULT 0, adopted_refs_json TEXT NOT NULL DEFAULT '[]',
            FOREIGN KEY (namespace, thread_id) REFERENCES threads(namespace, thread_id),
            UNIQUE (namespace, thread_id, position)
        );
-- table meta on meta
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
-- table namespaces on namespaces
CREATE TABLE namespaces (
            namespace TEXT PRIMARY KEY,
            current_turn INTEGER NOT NULL DEFAULT 0,
            block_count INTEGER NOT NULL DEFAULT 0,
            block_turn_size INTEGER NOT NULL CHECK (block_turn_size >= 1),
            block_decay_lambda REAL NOT NULL CHECK (block_decay_lambda >= 0),
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL
        );
-- table pending_citations on pending_citations
CREATE TABLE pending_citations (
            event_id TEXT PRIMARY KEY,
            namespace TEXT NOT NULL,
            thread_id TEXT NOT NULL,
            created_at TEXT NOT NULL
        ) WITHOUT ROWID;
-- table profile_changes on profile_changes
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
-- table profile_fields on profile_fields
CREATE TABLE profile_fields (
            field TEXT PRIMARY KEY,
            value TEXT NOT NULL,
            revision INTEGER NOT NULL,
            updated_at TEXT NOT NULL
        );
-- table profile_proposals on profile_proposals
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
-- table schema_migrations on schema_migrations
CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL);
-- table threads on threads
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
-- table topic_batches on topic_batches
CREATE TABLE topic_batches (
            id TEXT PRIMARY KEY,
            namespace TEXT NOT NULL,
            historical INTEGER NOT NULL,
            topic_id TEXT,
            created_at TEXT NOT NULL
        );
-- table topic_members on topic_members
CREATE TABLE topic_members (
            topic_id TEXT NOT NULL,
            event_id TEXT NOT NULL,
            namespace TEXT NOT NULL,
            position INTEGER NOT NULL,
            fingerprint TEXT,
            seen_at TEXT NOT NULL,
            category TEXT NOT NULL,
            pool TEXT NOT NULL, touched INTEGER NOT NULL DEFAULT 0,
            PRIMARY KEY (topic_id, event_id)
        ) WITHOUT ROWID;
-- table topic_queue on topic_queue
CREATE TABLE topic_queue (
            event_id TEXT PRIMARY KEY,
            namespace TEXT NOT NULL,
            batch_id TEXT NOT NULL,
            position INTEGER NOT NULL
        );
-- table topic_spare on topic_spare
CREATE TABLE topic_spare (event_pk INTEGER PRIMARY KEY, namespace TEXT NOT NULL, category TEXT NOT NULL, pool TEXT NOT NULL, agent_chapter INTEGER NOT NULL);
-- table topic_spare_counts on topic_spare_counts
CREATE TABLE topic_spare_counts (namespace TEXT NOT NULL, category TEXT NOT NULL, pool TEXT NOT NULL, agent_chapter INTEGER NOT NULL, n INTEGER NOT NULL, PRIMARY KEY (namespace, category, pool, agent_chapter)) WITHOUT ROWID;
-- table topic_state on topic_state
CREATE TABLE topic_state (
            namespace TEXT PRIMARY KEY,
            projector_version INTEGER NOT NULL,
            frozen_events INTEGER NOT NULL,
            created_at TEXT NOT NULL
        );
-- table topics on topics
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
-- table usage_receipts on usage_receipts
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
-- trigger topic_members_gone on events
CREATE TRIGGER topic_members_gone AFTER DELETE ON events BEGIN UPDATE topic_members SET touched = 1 WHERE event_id = OLD.id; END;
-- trigger topic_members_touch on events
CREATE TRIGGER topic_members_touch AFTER UPDATE ON events WHEN OLD.updated_at IS NOT NEW.updated_at OR OLD.status IS NOT NEW.status BEGIN UPDATE topic_members SET touched = 1 WHERE event_id = NEW.id AND touched = 0; END;
-- trigger topic_spare_chapter_added on topics
CREATE TRIGGER topic_spare_chapter_added AFTER INSERT ON topics BEGIN DELETE FROM topic_spare WHERE event_pk IN (SELECT e.pk FROM events e WHERE e.id IN (SELECT event_id FROM topic_members WHERE topic_id = NEW.id)); INSERT INTO topic_spare(event_pk, namespace, category, pool, agent_chapter) SELECT e.pk, e.namespace, CASE WHEN e.criticality != 'routine' THEN 'preferences' ELSE CASE json_extract(e.temporal_json, '$.event_type') WHEN 'decision' THEN 'decisions' WHEN 'plan' THEN 'decisions' WHEN 'change' THEN 'decisions' WHEN 'cancellation' THEN 'decisions' WHEN 'release' THEN 'work' WHEN 'task_completed' THEN 'work' WHEN 'migration' THEN 'work' WHEN 'incident' THEN 'work' WHEN 'meeting' THEN 'relationships' WHEN 'collaboration' THEN 'relationships' ELSE 'other' END END, e.pool, EXISTS (SELECT 1 FROM topic_members m JOIN topics t ON t.id = m.topic_id WHERE m.event_id = e.id AND t.has_agent != 0) FROM events e WHERE e.id IN (SELECT event_id FROM topic_members WHERE topic_id = NEW.id) AND e.status IN ('active', 'superseded') AND NOT EXISTS (SELECT 1 FROM topic_members m JOIN topics t ON t.id = m.topic_id WHERE m.event_id = e.id AND t.has_agent = 0); END;
-- trigger topic_spare_chapter_deleted on topics
CREATE TRIGGER topic_spare_chapter_deleted AFTER DELETE ON topics BEGIN DELETE FROM topic_spare WHERE event_pk IN (SELECT e.pk FROM events e WHERE e.id IN (SELECT event_id FROM topic_members WHERE topic_id = OLD.id)); INSERT INTO topic_spare(event_pk, namespace, category, pool, agent_chapter) SELECT e.pk, e.namespace, CASE WHEN e.criticality != 'routine' THEN 'preferences' ELSE CASE json_extract(e.temporal_json, '$.event_type') WHEN 'decision' THEN 'decisions' WHEN 'plan' THEN 'decisions' WHEN 'change' THEN 'decisions' WHEN 'cancellation' THEN 'decisions' WHEN 'release' THEN 'work' WHEN 'task_completed' THEN 'work' WHEN 'migration' THEN 'work' WHEN 'incident' THEN 'work' WHEN 'meeting' THEN 'relationships' WHEN 'collaboration' THEN 'relationships' ELSE 'other' END END, e.pool, EXISTS (SELECT 1 FROM topic_members m JOIN topics t ON t.id = m.topic_id WHERE m.event_id = e.id AND t.has_agent != 0) FROM events e WHERE e.id IN (SELECT event_id FROM topic_members WHERE topic_id = OLD.id) AND e.status IN ('active', 'superseded') AND NOT EXISTS (SELECT 1 FROM topic_members m JOIN topics t ON t.id = m.topic_id WHERE m.event_id = e.id AND t.has_agent = 0); END;
-- trigger topic_spare_chapter_turned on topics
CREATE TRIGGER topic_spare_chapter_turned AFTER UPDATE OF has_agent ON topics WHEN OLD.has_agent IS NOT NEW.has_agent BEGIN DELETE FROM topic_spare WHERE event_pk IN (SELECT e.pk FROM events e WHERE e.id IN (SELECT event_id FROM topic_members WHERE topic_id = NEW.id)); INSERT INTO topic_spare(event_pk, namespace, category, pool, agent_chapter) SELECT e.pk, e.namespace, CASE WHEN e.criticality != 'routine' THEN 'preferences' ELSE CASE json_extract(e.temporal_json, '$.event_type') WHEN 'decision' THEN 'decisions' WHEN 'plan' THEN 'decisions' WHEN 'change' THEN 'decisions' WHEN 'cancellation' THEN 'decisions' WHEN 'release' THEN 'work' WHEN 'task_completed' THEN 'work' WHEN 'migration' THEN 'work' WHEN 'incident' THEN 'work' WHEN 'meeting' THEN 'relationships' WHEN 'collaboration' THEN 'relationships' ELSE 'other' END END, e.pool, EXISTS (SELECT 1 FROM topic_members m JOIN topics t ON t.id = m.topic_id WHERE m.event_id = e.id AND t.has_agent != 0) FROM events e WHERE e.id IN (SELECT event_id FROM topic_members WHERE topic_id = NEW.id) AND e.status IN ('active', 'superseded') AND NOT EXISTS (SELECT 1 FROM topic_members m JOIN topics t ON t.id = m.topic_id WHERE m.event_id = e.id AND t.has_agent = 0); END;
-- trigger topic_spare_counted on topic_spare
CREATE TRIGGER topic_spare_counted AFTER INSERT ON topic_spare BEGIN INSERT INTO topic_spare_counts(namespace, category, pool, agent_chapter, n) VALUES (NEW.namespace, NEW.category, NEW.pool, NEW.agent_chapter, 1) ON CONFLICT DO UPDATE SET n = n + 1; END;
-- trigger topic_spare_event_added on events
CREATE TRIGGER topic_spare_event_added AFTER INSERT ON events BEGIN INSERT INTO topic_spare(event_pk, namespace, category, pool, agent_chapter) SELECT e.pk, e.namespace, CASE WHEN e.criticality != 'routine' THEN 'preferences' ELSE CASE json_extract(e.temporal_json, '$.event_type') WHEN 'decision' THEN 'decisions' WHEN 'plan' THEN 'decisions' WHEN 'change' THEN 'decisions' WHEN 'cancellation' THEN 'decisions' WHEN 'release' THEN 'work' WHEN 'task_completed' THEN 'work' WHEN 'migration' THEN 'work' WHEN 'incident' THEN 'work' WHEN 'meeting' THEN 'relationships' WHEN 'collaboration' THEN 'relationships' ELSE 'other' END END, e.pool, EXISTS (SELECT 1 FROM topic_members m JOIN topics t ON t.id = m.topic_id WHERE m.event_id = e.id AND t.has_agent != 0) FROM events e WHERE e.pk = NEW.pk AND e.status IN ('active', 'superseded') AND NOT EXISTS (SELECT 1 FROM topic_members m JOIN topics t ON t.id = m.topic_id WHERE m.event_id = e.id AND t.has_agent = 0); END;
-- trigger topic_spare_event_changed on events
CREATE TRIGGER topic_spare_event_changed AFTER UPDATE ON events WHEN OLD.status IS NOT NEW.status OR OLD.pool IS NOT NEW.pool OR OLD.namespace IS NOT NEW.namespace OR OLD.criticality IS NOT NEW.criticality OR json_extract(OLD.temporal_json, '$.event_type') IS NOT json_extract(NEW.temporal_json, '$.event_type') BEGIN DELETE FROM topic_spare WHERE event_pk IN (SELECT e.pk FROM events e WHERE e.pk = NEW.pk); INSERT INTO topic_spare(event_pk, namespace, category, pool, agent_chapter) SELECT e.pk, e.namespace, CASE WHEN e.criticality != 'routine' THEN 'preferences' ELSE CASE json_extract(e.temporal_json, '$.event_type') WHEN 'decision' THEN 'decisions' WHEN 'plan' THEN 'decisions' WHEN 'change' THEN 'decisions' WHEN 'cancellation' THEN 'decisions' WHEN 'release' THEN 'work' WHEN 'task_completed' THEN 'work' WHEN 'migration' THEN 'work' WHEN 'incident' THEN 'work' WHEN 'meeting' THEN 'relationships' WHEN 'collaboration' THEN 'relationships' ELSE 'other' END END, e.pool, EXISTS (SELECT 1 FROM topic_members m JOIN topics t ON t.id = m.topic_id WHERE m.event_id = e.id AND t.has_agent != 0) FROM events e WHERE e.pk = NEW.pk AND e.status IN ('active', 'superseded') AND NOT EXISTS (SELECT 1 FROM topic_members m JOIN topics t ON t.id = m.topic_id WHERE m.event_id = e.id AND t.has_agent = 0); END;
-- trigger topic_spare_event_deleted on events
CREATE TRIGGER topic_spare_event_deleted AFTER DELETE ON events BEGIN DELETE FROM topic_spare WHERE event_pk = OLD.pk; END;
-- trigger topic_spare_moved on topic_members
CREATE TRIGGER topic_spare_moved AFTER UPDATE OF topic_id, event_id ON topic_members BEGIN DELETE FROM topic_spare WHERE event_pk IN (SELECT e.pk FROM events e WHERE e.id IN (OLD.event_id, NEW.event_id)); INSERT INTO topic_spare(event_pk, namespace, category, pool, agent_chapter) SELECT e.pk, e.namespace, CASE WHEN e.criticality != 'routine' THEN 'preferences' ELSE CASE json_extract(e.temporal_json, '$.event_type') WHEN 'decision' THEN 'decisions' WHEN 'plan' THEN 'decisions' WHEN 'change' THEN 'decisions' WHEN 'cancellation' THEN 'decisions' WHEN 'release' THEN 'work' WHEN 'task_completed' THEN 'work' WHEN 'migration' THEN 'work' WHEN 'incident' THEN 'work' WHEN 'meeting' THEN 'relationships' WHEN 'collaboration' THEN 'relationships' ELSE 'other' END END, e.pool, EXISTS (SELECT 1 FROM topic_members m JOIN topics t ON t.id = m.topic_id WHERE m.event_id = e.id AND t.has_agent != 0) FROM events e WHERE e.id IN (OLD.event_id, NEW.event_id) AND e.status IN ('active', 'superseded') AND NOT EXISTS (SELECT 1 FROM topic_members m JOIN topics t ON t.id = m.topic_id WHERE m.event_id = e.id AND t.has_agent = 0); END;
-- trigger topic_spare_placed on topic_members
CREATE TRIGGER topic_spare_placed AFTER INSERT ON topic_members BEGIN DELETE FROM topic_spare WHERE event_pk IN (SELECT e.pk FROM events e WHERE e.id = NEW.event_id); INSERT INTO topic_spare(event_pk, namespace, category, pool, agent_chapter) SELECT e.pk, e.namespace, CASE WHEN e.criticality != 'routine' THEN 'preferences' ELSE CASE json_extract(e.temporal_json, '$.event_type') WHEN 'decision' THEN 'decisions' WHEN 'plan' THEN 'decisions' WHEN 'change' THEN 'decisions' WHEN 'cancellation' THEN 'decisions' WHEN 'release' THEN 'work' WHEN 'task_completed' THEN 'work' WHEN 'migration' THEN 'work' WHEN 'incident' THEN 'work' WHEN 'meeting' THEN 'relationships' WHEN 'collaboration' THEN 'relationships' ELSE 'other' END END, e.pool, EXISTS (SELECT 1 FROM topic_members m JOIN topics t ON t.id = m.topic_id WHERE m.event_id = e.id AND t.has_agent != 0) FROM events e WHERE e.id = NEW.event_id AND e.status IN ('active', 'superseded') AND NOT EXISTS (SELECT 1 FROM topic_members m JOIN topics t ON t.id = m.topic_id WHERE m.event_id = e.id AND t.has_agent = 0); END;
-- trigger topic_spare_uncounted on topic_spare
CREATE TRIGGER topic_spare_uncounted AFTER DELETE ON topic_spare BEGIN UPDATE topic_spare_counts SET n = n - 1 WHERE namespace = OLD.namespace AND category = OLD.category AND pool = OLD.pool AND agent_chapter = OLD.agent_chapter; END;
-- trigger topic_spare_unplaced on topic_members
CREATE TRIGGER topic_spare_unplaced AFTER DELETE ON topic_members BEGIN DELETE FROM topic_spare WHERE event_pk IN (SELECT e.pk FROM events e WHERE e.id = OLD.event_id); INSERT INTO topic_spare(event_pk, namespace, category, pool, agent_chapter) SELECT e.pk, e.namespace, CASE WHEN e.criticality != 'routine' THEN 'preferences' ELSE CASE json_extract(e.temporal_json, '$.event_type') WHEN 'decision' THEN 'decisions' WHEN 'plan' THEN 'decisions' WHEN 'change' THEN 'decisions' WHEN 'cancellation' THEN 'decisions' WHEN 'release' THEN 'work' WHEN 'task_completed' THEN 'work' WHEN 'migration' THEN 'work' WHEN 'incident' THEN 'work' WHEN 'meeting' THEN 'relationships' WHEN 'collaboration' THEN 'relationships' ELSE 'other' END END, e.pool, EXISTS (SELECT 1 FROM topic_members m JOIN topics t ON t.id = m.topic_id WHERE m.event_id = e.id AND t.has_agent != 0) FROM events e WHERE e.id = OLD.event_id AND e.status IN ('active', 'superseded') AND NOT EXISTS (SELECT 1 FROM topic_members m JOIN topics t ON t.id = m.topic_id WHERE m.event_id = e.id AND t.has_agent = 0); END;
