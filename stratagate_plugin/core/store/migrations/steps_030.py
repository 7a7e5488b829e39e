"""Migration steps 30 onward: the pages' stored sizes (a node's visible sources, a block's
L5 tokens), the spaces' chapter tokens. Frozen: each step's DDL, and the one rule a
back-fill needs, is written out as it was when the step was made, and nothing of the
package is imported.

A new step goes at the end of this module (``mNNN_what_it_does``, the next number) and at
the end of ``MIGRATIONS`` in ``__init__.py``.
"""

import json
import re
import sqlite3
from typing import Any

_SEEN = "('active', 'superseded')"  # the statuses a graph view shows as sources
_CITING = "SELECT record_id FROM graph_sources WHERE record_kind = 'node' AND event_id = {0}.id"
_SEEN_EVENT = f"EXISTS (SELECT 1 FROM events WHERE id = {{0}}.event_id AND status IN {_SEEN})"
_COUNT = (
    "(SELECT COUNT(*) FROM graph_sources s JOIN events e ON e.id = s.event_id "
    f"WHERE s.record_kind = 'node' AND s.record_id = {{0}}.id AND e.status IN {_SEEN})"
)
_MOVE = "UPDATE graph_nodes SET visible_sources = visible_sources {0} 1 WHERE "
_VISIBLE_TRIGGERS = (
    "CREATE TRIGGER graph_visible_cited AFTER INSERT ON graph_sources "
    f"WHEN NEW.record_kind = 'node' BEGIN {_MOVE.format('+')}id = NEW.record_id "
    f"AND {_SEEN_EVENT.format('NEW')}; END",
    "CREATE TRIGGER graph_visible_uncited AFTER DELETE ON graph_sources "
    f"WHEN OLD.record_kind = 'node' BEGIN {_MOVE.format('-')}id = OLD.record_id "
    f"AND {_SEEN_EVENT.format('OLD')}; END",
    f"CREATE TRIGGER graph_visible_event_added AFTER INSERT ON events WHEN NEW.status IN {_SEEN} "
    f"BEGIN {_MOVE.format('+')}id IN ({_CITING.format('NEW')}); END",
    f"CREATE TRIGGER graph_visible_event_deleted AFTER DELETE ON events WHEN OLD.status IN {_SEEN} "
    f"BEGIN {_MOVE.format('-')}id IN ({_CITING.format('OLD')}); END",
    "CREATE TRIGGER graph_visible_event_changed AFTER UPDATE OF id, status ON events "
    f"WHEN OLD.id IS NOT NEW.id OR (OLD.status IN {_SEEN}) IS NOT (NEW.status IN {_SEEN}) BEGIN "
    f"{_MOVE.format('-')}OLD.status IN {_SEEN} AND id IN ({_CITING.format('OLD')}); "
    f"{_MOVE.format('+')}NEW.status IN {_SEEN} AND id IN ({_CITING.format('NEW')}); END",
    "CREATE TRIGGER graph_visible_node_added AFTER INSERT ON graph_nodes BEGIN "
    f"UPDATE graph_nodes SET visible_sources = {_COUNT.format('NEW')} WHERE pk = NEW.pk; END",
    "CREATE TRIGGER graph_visible_node_renamed AFTER UPDATE OF id ON graph_nodes BEGIN "
    f"UPDATE graph_nodes SET visible_sources = {_COUNT.format('NEW')} WHERE pk = NEW.pk; END",
)


def m030_node_visible_sources(raw: sqlite3.Connection) -> None:
    """``graph_nodes.visible_sources``: how many of the node's cited events a view shows
    (active or superseded), filled from the data and kept by triggers on the node's
    sources and on its events' status, so the graph's listing reads no sources."""
    raw.execute("ALTER TABLE graph_nodes ADD COLUMN visible_sources INTEGER NOT NULL DEFAULT 0")
    raw.execute(f"UPDATE graph_nodes SET visible_sources = {_COUNT.format('graph_nodes')}")
    for statement in _VISIBLE_TRIGGERS:
        raw.execute(statement)


def m031_block_raw_tokens(raw: sqlite3.Connection) -> None:
    """``blocks.raw_tokens``: the estimated tokens of the block's L5 view, written when it
    seals (and again when a purge changes its messages), so the block rail sizes L5
    without reading the messages; every existing block's is computed here."""
    raw.execute("ALTER TABLE blocks ADD COLUMN raw_tokens INTEGER")
    rows = raw.execute(
        "SELECT block_id, role, content, tool_calls_json FROM messages "
        "WHERE block_id IS NOT NULL ORDER BY block_id, position"
    )
    said: dict[str, list[tuple[str, str, str]]] = {}
    for block_id, role, content, traces in rows:
        said.setdefault(block_id, []).append((role, content, traces))
    raw.executemany(
        "UPDATE blocks SET raw_tokens = ? WHERE id = ?",
        [(raw_tokens(messages), block_id) for block_id, messages in said.items()],
    )


_NEW_TOKEN = (
    "INSERT INTO topic_generations(namespace, token) VALUES ({0}.namespace, random()) "
    "ON CONFLICT(namespace) DO UPDATE SET token = excluded.token;"
)
_GENERATION_TRIGGERS = (
    "CREATE TRIGGER topic_generation_added AFTER INSERT ON topics "
    f"BEGIN {_NEW_TOKEN.format('NEW')} END",
    "CREATE TRIGGER topic_generation_changed AFTER UPDATE ON topics "
    f"BEGIN {_NEW_TOKEN.format('OLD')} {_NEW_TOKEN.format('NEW')} END",
    "CREATE TRIGGER topic_generation_deleted AFTER DELETE ON topics "
    f"BEGIN {_NEW_TOKEN.format('OLD')} END",
)


def m032_topic_generations(raw: sqlite3.Connection) -> None:
    """``topic_generations``: per space, a random token drawn anew by triggers whenever a
    chapter row is inserted, updated or deleted. A process caching what it derived from a
    space's chapters (the directory's word index) reuses it while the token is the one it
    was built at: random rather than counted, so a rolled-back write's token never returns
    for other rows, and a copy of the file shares its token only with the same rows."""
    raw.execute(
        "CREATE TABLE topic_generations (namespace TEXT PRIMARY KEY, token INTEGER NOT NULL)"
    )
    raw.execute(
        "INSERT INTO topic_generations(namespace, token) "
        "SELECT namespace, random() FROM topics GROUP BY namespace"
    )
    for statement in _GENERATION_TRIGGERS:
        raw.execute(statement)


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


def m033_offline_job_index(raw: sqlite3.Connection) -> None:
    """``jobs_derived_offline``: the jobs the offline model finished because the model
    failed, by space and age, so the jobs page reads those few instead of every job of
    the space (2.4 ms at 20,000 jobs, growing with every job a space ever ran)."""
    raw.execute(
        "CREATE INDEX jobs_derived_offline ON jobs(namespace, created_at, id) "
        "WHERE derived_by = 'offline-fallback'"
    )


def m034_job_priority(raw: sqlite3.Connection) -> None:
    """``jobs.priority`` (higher first: a graph batch's priority, 1 for an incremental
    topic batch, 0 for a historical one), ``jobs_pending``, the pending jobs of a kind in
    claim order, and ``jobs_pending_spaces``, the same per space (a claim that leaves busy
    spaces out reads the others'), so a claim reads its first due job instead of ordering
    every pending one (11 ms a claim, in the write lock, with 20,000 back-fill jobs
    queued)."""
    raw.execute("ALTER TABLE jobs ADD COLUMN priority INTEGER NOT NULL DEFAULT 0")
    raw.execute(
        "UPDATE jobs SET priority = (SELECT b.priority FROM graph_batches b "
        "WHERE b.id = jobs.target_id) WHERE kind = 'graph_projection' "
        "AND EXISTS (SELECT 1 FROM graph_batches b WHERE b.id = jobs.target_id)"
    )
    raw.execute(
        "UPDATE jobs SET priority = 1 WHERE kind = 'topic_projection' AND EXISTS "
        "(SELECT 1 FROM topic_batches b WHERE b.id = jobs.target_id AND NOT b.historical)"
    )
    raw.execute(
        "CREATE INDEX jobs_pending ON jobs(kind, priority DESC, created_at, id) "
        "WHERE status = 'pending'"
    )
    raw.execute(
        "CREATE INDEX jobs_pending_spaces ON jobs(kind, namespace, priority DESC, created_at, id) "
        "WHERE status = 'pending'"
    )


def m035_unfinished_jobs_index(raw: sqlite3.Connection) -> None:
    """``jobs_unfinished``: a space's pending, running and failed jobs of a kind by age,
    so the topics page reads its first page of them (and their counts) without sorting
    every pending one (1.0 + 0.5 ms a page with 7,600 topic jobs queued)."""
    raw.execute(
        "CREATE INDEX jobs_unfinished ON jobs(namespace, kind, created_at, id) "
        "WHERE status IN ('pending', 'running', 'failed')"
    )
