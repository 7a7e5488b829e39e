"""PostgreSQL steps after the first (the whole schema at SQLite's step 26), each beside the
SQLite step that makes the same change. Frozen: DDL written out, nothing live imported."""

from typing import Any

import psycopg


def m002_marks_follow_the_event_type(conn: psycopg.Connection[Any]) -> None:
    """SQLite's step 27: an event's fallback entry reads one field of its temporal JSON,
    ``event_type`` (NULL when the JSON is not valid), so only a change of it marks the
    event, not the graph writing ``participant_node_ids`` into it at every projection."""
    conn.execute(
        """
CREATE FUNCTION stratagate_event_type(temporal text) RETURNS text
    LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
    RETURN temporal::jsonb ->> 'event_type';
EXCEPTION WHEN others THEN
    RETURN NULL;
END $$;
DROP TRIGGER topic_marks_event_changed ON events;
CREATE TRIGGER topic_marks_event_changed AFTER UPDATE ON events FOR EACH ROW
    WHEN (OLD.status IS DISTINCT FROM NEW.status OR OLD.pool IS DISTINCT FROM NEW.pool
        OR OLD.namespace IS DISTINCT FROM NEW.namespace
        OR OLD.criticality IS DISTINCT FROM NEW.criticality
        OR stratagate_event_type(OLD.temporal_json)
            IS DISTINCT FROM stratagate_event_type(NEW.temporal_json))
    EXECUTE FUNCTION topic_mark_event();
"""
    )


def m003_event_impact_index_tables(conn: psycopg.Connection[Any]) -> None:
    """SQLite's event impact index (``event_term_index``, live code's derived tables, no
    SQLite step): the same tables here, as the raw index's are, so the schemas stay alike.
    Left empty when written (events ranked by ``ts_rank``); live code fills them since."""
    conn.execute(
        """
CREATE TABLE event_terms (
    term text NOT NULL, pk bigint NOT NULL, count bigint NOT NULL, length bigint NOT NULL,
    namespace text, pool text, PRIMARY KEY (term, pk)
);
CREATE TABLE event_term_totals (
    id bigint PRIMARY KEY CHECK (id = 1), rows bigint NOT NULL, tokens bigint NOT NULL
)
"""
    )


def m004_page_indexes(conn: psycopg.Connection[Any]) -> None:
    """SQLite's step 28: ``events_timeline`` holds ``pk`` and ``status`` (a deep events
    page filters and orders in the index) and ``events_id_status`` answers the statuses of
    the events a graph page cites from the index alone."""
    conn.execute(
        """
DROP INDEX events_timeline;
CREATE INDEX events_timeline ON events(namespace, (COALESCE(
    (temporal_json::jsonb)->>'happened_start', (temporal_json::jsonb)->>'happened_end',
    (temporal_json::jsonb)->>'mentioned_at', created_at)), pk, status);
CREATE INDEX events_id_status ON events(id, status);
"""
    )


def m005_term_postings_keyed(conn: psycopg.Connection[Any]) -> None:
    """The raw impact index's version 2 on SQLite keys ``term_postings`` by (space, term,
    chunk) (``WITHOUT ROWID``, clustered): here the same columns become the primary key."""
    conn.execute(
        """
ALTER TABLE term_postings DROP CONSTRAINT term_postings_namespace_term_chunk_key;
ALTER TABLE term_postings ADD PRIMARY KEY (namespace, term, chunk)
"""
    )


def m006_message_facts(conn: psycopg.Connection[Any]) -> None:
    """SQLite's ``message_facts`` (live code's derived table, no SQLite step): each indexed
    conversation message's thread, position, rowid, block sequence, length and label."""
    conn.execute(
        """
CREATE TABLE message_facts (
    namespace text NOT NULL, thread_id text NOT NULL, position bigint NOT NULL,
    fts_rowid bigint NOT NULL, id text NOT NULL, block_id text NOT NULL,
    block_sequence bigint NOT NULL, echo bigint NOT NULL, length bigint NOT NULL,
    label text NOT NULL, PRIMARY KEY (namespace, thread_id, position)
);
CREATE UNIQUE INDEX message_facts_rowid ON message_facts(fts_rowid)
"""
    )


def m007_event_states(conn: psycopg.Connection[Any]) -> None:
    """SQLite's step 29: ``event_states``, the columns event search reads of each
    candidate, filled from ``events`` and kept by triggers (PostgreSQL's search reads
    ``events`` itself; the table keeps the schemas, and a copy either way, alike)."""
    conn.execute(
        """
CREATE TABLE event_states (
    pk bigint PRIMARY KEY, namespace text NOT NULL, pool text NOT NULL, id text NOT NULL,
    status text NOT NULL, superseded_by text, updated_at text NOT NULL
);
INSERT INTO event_states(pk, namespace, pool, id, status, superseded_by, updated_at)
    SELECT pk, namespace, pool, id, status, superseded_by, updated_at FROM events;
CREATE FUNCTION event_state_keep() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP <> 'INSERT' THEN
        DELETE FROM event_states WHERE pk = OLD.pk;
    END IF;
    IF TG_OP <> 'DELETE' THEN
        INSERT INTO event_states(pk, namespace, pool, id, status, superseded_by, updated_at)
        VALUES (NEW.pk, NEW.namespace, NEW.pool, NEW.id, NEW.status, NEW.superseded_by,
            NEW.updated_at);
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER event_states_added AFTER INSERT ON events
    FOR EACH ROW EXECUTE FUNCTION event_state_keep();
CREATE TRIGGER event_states_changed AFTER UPDATE OF
    pk, namespace, pool, id, status, superseded_by, updated_at ON events
    FOR EACH ROW EXECUTE FUNCTION event_state_keep();
CREATE TRIGGER event_states_deleted AFTER DELETE ON events
    FOR EACH ROW EXECUTE FUNCTION event_state_keep();
"""
    )
