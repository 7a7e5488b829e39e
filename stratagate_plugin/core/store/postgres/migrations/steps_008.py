"""PostgreSQL steps 8 onward, each beside the SQLite step that makes the same change (30
onward: the pages' stored sizes, the spaces' chapter tokens). Frozen: DDL and the one
rule a back-fill needs written out, nothing live imported."""

import json
import re
from typing import Any

import psycopg

_SEEN = "('active', 'superseded')"


def m008_node_visible_sources(conn: psycopg.Connection[Any]) -> None:
    """SQLite's step 30: ``graph_nodes.visible_sources``, how many of the node's cited
    events a view shows (active or superseded), filled and kept by triggers on the node's
    sources and on its events' status."""
    count = (
        "(SELECT COUNT(*) FROM graph_sources s JOIN events e ON e.id = s.event_id "
        f"WHERE s.record_kind = 'node' AND s.record_id = {{0}}.id AND e.status IN {_SEEN})"
    )
    conn.execute(
        f"""
ALTER TABLE graph_nodes ADD COLUMN visible_sources bigint NOT NULL DEFAULT 0;
UPDATE graph_nodes SET visible_sources = {count.format("graph_nodes")};
CREATE FUNCTION graph_visible_move(event text, step bigint) RETURNS void
    LANGUAGE sql AS $$
    UPDATE graph_nodes SET visible_sources = visible_sources + step WHERE id IN
        (SELECT record_id FROM graph_sources WHERE record_kind = 'node' AND event_id = event)
$$;
CREATE FUNCTION graph_visible_source_keep() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        UPDATE graph_nodes SET visible_sources = visible_sources + 1 WHERE id = NEW.record_id
            AND EXISTS (SELECT 1 FROM events WHERE id = NEW.event_id AND status IN {_SEEN});
    ELSE
        UPDATE graph_nodes SET visible_sources = visible_sources - 1 WHERE id = OLD.record_id
            AND EXISTS (SELECT 1 FROM events WHERE id = OLD.event_id AND status IN {_SEEN});
    END IF;
    RETURN NULL;
END $$;
CREATE FUNCTION graph_visible_event_keep() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP <> 'INSERT' AND OLD.status IN {_SEEN} THEN
        PERFORM graph_visible_move(OLD.id, -1);
    END IF;
    IF TG_OP <> 'DELETE' AND NEW.status IN {_SEEN} THEN
        PERFORM graph_visible_move(NEW.id, 1);
    END IF;
    RETURN NULL;
END $$;
CREATE FUNCTION graph_visible_node_count() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE graph_nodes SET visible_sources = {count.format("NEW")} WHERE pk = NEW.pk;
    RETURN NULL;
END $$;
CREATE TRIGGER graph_visible_cited AFTER INSERT ON graph_sources FOR EACH ROW
    WHEN (NEW.record_kind = 'node') EXECUTE FUNCTION graph_visible_source_keep();
CREATE TRIGGER graph_visible_uncited AFTER DELETE ON graph_sources FOR EACH ROW
    WHEN (OLD.record_kind = 'node') EXECUTE FUNCTION graph_visible_source_keep();
CREATE TRIGGER graph_visible_event_added AFTER INSERT ON events FOR EACH ROW
    WHEN (NEW.status IN {_SEEN}) EXECUTE FUNCTION graph_visible_event_keep();
CREATE TRIGGER graph_visible_event_deleted AFTER DELETE ON events FOR EACH ROW
    WHEN (OLD.status IN {_SEEN}) EXECUTE FUNCTION graph_visible_event_keep();
CREATE TRIGGER graph_visible_event_changed AFTER UPDATE OF id, status ON events FOR EACH ROW
    WHEN (OLD.id IS DISTINCT FROM NEW.id
        OR (OLD.status IN {_SEEN}) IS DISTINCT FROM (NEW.status IN {_SEEN}))
    EXECUTE FUNCTION graph_visible_event_keep();
CREATE TRIGGER graph_visible_node_added AFTER INSERT ON graph_nodes FOR EACH ROW
    EXECUTE FUNCTION graph_visible_node_count();
CREATE TRIGGER graph_visible_node_renamed AFTER UPDATE OF id ON graph_nodes FOR EACH ROW
    EXECUTE FUNCTION graph_visible_node_count();
"""
    )


def m009_block_raw_tokens(conn: psycopg.Connection[Any]) -> None:
    """SQLite's step 31: ``blocks.raw_tokens``, the estimated tokens of the block's L5
    view, written when it seals; every existing block's computed here."""
    conn.execute("ALTER TABLE blocks ADD COLUMN raw_tokens bigint")
    rows = conn.execute(
        "SELECT block_id, role, content, tool_calls_json FROM messages "
        "WHERE block_id IS NOT NULL ORDER BY block_id, position"
    )
    said: dict[str, list[tuple[str, str, str]]] = {}
    for block_id, role, content, traces in rows:
        said.setdefault(block_id, []).append((role, content, traces))
    with conn.cursor() as cursor:
        cursor.executemany(
            "UPDATE blocks SET raw_tokens = %s WHERE id = %s",
            [(raw_tokens(messages), block_id) for block_id, messages in said.items()],
        )


def m010_topic_generations(conn: psycopg.Connection[Any]) -> None:
    """SQLite's step 32: ``topic_generations``, per space a random token drawn anew by
    triggers (SQLite's names) whenever a chapter row is inserted, updated or deleted
    (what a process caches of a space's chapters is reused while the token is the one it
    was built at)."""
    token = "(floor(random() * 9.2e18) - 4.6e18)::bigint"
    conn.execute(
        f"""
CREATE TABLE topic_generations (namespace text PRIMARY KEY, token bigint NOT NULL);
INSERT INTO topic_generations(namespace, token)
    SELECT namespace, {token} FROM topics GROUP BY namespace;
CREATE FUNCTION topic_generation_draw(space text) RETURNS void LANGUAGE sql AS $$
    INSERT INTO topic_generations(namespace, token) VALUES (space, {token})
    ON CONFLICT (namespace) DO UPDATE SET token = EXCLUDED.token
$$;
CREATE FUNCTION topic_generation_keep() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP <> 'INSERT' THEN
        PERFORM topic_generation_draw(OLD.namespace);
    END IF;
    IF TG_OP <> 'DELETE' THEN
        PERFORM topic_generation_draw(NEW.namespace);
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER topic_generation_added AFTER INSERT ON topics
    FOR EACH ROW EXECUTE FUNCTION topic_generation_keep();
CREATE TRIGGER topic_generation_changed AFTER UPDATE ON topics
    FOR EACH ROW EXECUTE FUNCTION topic_generation_keep();
CREATE TRIGGER topic_generation_deleted AFTER DELETE ON topics
    FOR EACH ROW EXECUTE FUNCTION topic_generation_keep();
"""
    )


def m011_offline_job_index(conn: psycopg.Connection[Any]) -> None:
    """SQLite's step 33: ``jobs_derived_offline``, the jobs the offline model finished
    because the model failed, by space and age (the jobs page reads only those)."""
    conn.execute(
        "CREATE INDEX jobs_derived_offline ON jobs(namespace, created_at, id) "
        "WHERE derived_by = 'offline-fallback'"
    )


def m012_job_priority(conn: psycopg.Connection[Any]) -> None:
    """SQLite's step 34: ``jobs.priority`` (higher first: a graph batch's priority, 1 for
    an incremental topic batch, 0 for a historical one), ``jobs_pending``, the pending
    jobs of a kind in claim order, and ``jobs_pending_spaces``, the same per space (a
    claim reads its first due job, not every one)."""
    conn.execute(
        """
ALTER TABLE jobs ADD COLUMN priority bigint NOT NULL DEFAULT 0;
UPDATE jobs SET priority = b.priority FROM graph_batches b
    WHERE jobs.kind = 'graph_projection' AND b.id = jobs.target_id;
UPDATE jobs SET priority = 1 FROM topic_batches b
    WHERE jobs.kind = 'topic_projection' AND b.id = jobs.target_id AND b.historical = 0;
CREATE INDEX jobs_pending ON jobs(kind, priority DESC, created_at, id) WHERE status = 'pending';
CREATE INDEX jobs_pending_spaces ON jobs(kind, namespace, priority DESC, created_at, id)
    WHERE status = 'pending';
"""
    )


def m013_unfinished_jobs_index(conn: psycopg.Connection[Any]) -> None:
    """SQLite's step 35: ``jobs_unfinished``, a space's pending, running and failed jobs
    of a kind by age (the topics page reads a page of them and their counts)."""
    conn.execute(
        "CREATE INDEX jobs_unfinished ON jobs(namespace, kind, created_at, id) "
        "WHERE status IN ('pending', 'running', 'failed')"
    )


def raw_tokens(messages: list[tuple[str, str, str]]) -> int:
    """The L5 view's estimated tokens (the transcript's and the token budget's rules as
    they were): each message ``role: content`` and a raw JSON line per tool call."""
    entries = []
    for role, content, traces in messages:
        lines = [f"{role}: {content}"]
        for trace in json.loads(traces) if traces != "[]" else ():
            payload = {k: _valid(trace.get(k)) for k in ("name", "arguments", "result")}
            lines.append("Tool call (raw): " + json.dumps(payload, ensure_ascii=False))
        entries.append("\n".join(lines))
    text = "\n\n".join(entries)
    runs = _ASCII_RUN.findall(text)
    return sum((len(run) + 3) // 4 for run in runs) + len(text) - sum(len(r) for r in runs)


_ASCII_RUN = re.compile(r"[\x00-\x7f]+")
_SURROGATE = re.compile("[\ud800-\udfff]")


def _valid(value: Any) -> Any:
    """A trace's value as its record holds it: NUL and lone surrogates as U+FFFD."""
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value.replace("\x00", "\ufffd"))
    if isinstance(value, list):
        return [_valid(item) for item in value]
    if isinstance(value, dict):
        return {_valid(str(key)): _valid(item) for key, item in value.items()}
    return value
