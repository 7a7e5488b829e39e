"""The fallback entries' own index (spec §5.1, §5.5): visible events no shown chapter holds.

The directory and ``memory_list_topics`` run on every turn, and a large space has tens of
thousands of events in no chapter; recounting them on each read (the JSON category, the
chapter check per event) made both grow with the space. So ``topic_spare`` keeps one row
per visible event that no chapter without agent events holds — its category stored, and
whether an agent chapter holds it — and ``topic_spare_counts`` the rows per category.

Both are kept by SQLite triggers (created by migration 19), not by each write path: any
insert, status change (forget, restore, supersede, purge, archive, an import undone),
correction of type or criticality, chapter placement, a chapter's ``has_agent`` turning
or a deletion keeps them exact in the same transaction, whichever code wrote it. The
category rule is ``topics.categories``' (one ``CASE``, built from ``TYPE_CATEGORY``); a
change of that rule needs a migration that rebuilds these tables.

A fallback entry at agent weight > 0 is a row no chapter holds at all; at weight 0 (agent
events and their chapters hidden) a row of a conversation event, chapter or not.
"""

import sqlite3
from collections.abc import Sequence
from typing import Any

from ..text.search_terms import tokenize
from ..topics.categories import CATEGORIES, TYPE_CATEGORY
from .event_queries_rows import has_event_index
from .search_index import prefilter

_TYPE = "json_extract(e.temporal_json, '$.event_type')"
CATEGORY_SQL = (  # the event type is read once (a simple CASE), not once per type
    f"CASE WHEN e.criticality != 'routine' THEN 'preferences' ELSE CASE {_TYPE} "
    + " ".join(f"WHEN '{kind}' THEN '{cat}'" for kind, cat in TYPE_CATEGORY.items())
    + " ELSE 'other' END END"
)
_HELD = (
    "SELECT 1 FROM topic_members m JOIN topics t ON t.id = m.topic_id "
    "WHERE m.event_id = e.id AND t.has_agent {0} 0"
)
_SPOT = (
    "INSERT INTO topic_spare(event_pk, namespace, category, pool, agent_chapter) "
    f"SELECT e.pk, e.namespace, {CATEGORY_SQL}, e.pool, EXISTS ({_HELD.format('!=')}) "
    "FROM events e WHERE {0} AND e.status IN ('active', 'superseded') "
    f"AND NOT EXISTS ({_HELD.format('=')})"
)
_UNSPOT = "DELETE FROM topic_spare WHERE event_pk IN (SELECT e.pk FROM events e WHERE {0})"
SCHEMA = (
    "CREATE TABLE topic_spare (event_pk INTEGER PRIMARY KEY, namespace TEXT NOT NULL, "
    "category TEXT NOT NULL, pool TEXT NOT NULL, agent_chapter INTEGER NOT NULL)",
    "CREATE INDEX topic_spare_order ON topic_spare(namespace, event_pk)",
    "CREATE INDEX topic_spare_category ON topic_spare(namespace, category, event_pk)",
    "CREATE TABLE topic_spare_counts (namespace TEXT NOT NULL, category TEXT NOT NULL, "
    "pool TEXT NOT NULL, agent_chapter INTEGER NOT NULL, n INTEGER NOT NULL, "
    "PRIMARY KEY (namespace, category, pool, agent_chapter)) WITHOUT ROWID",
)
_KEY = "namespace, category, pool, agent_chapter"


def _respot(where: str) -> str:
    """Trigger body: the events ``where`` selects leave the index and enter it again if
    they are fallback candidates now."""
    return f"{_UNSPOT.format(where)}; {_SPOT.format(where)};"


_MEMBERS = "e.id IN (SELECT event_id FROM topic_members WHERE topic_id = {0}.id)"
_CHANGED = (
    "OLD.status IS NOT NEW.status OR OLD.pool IS NOT NEW.pool OR OLD.namespace IS NOT "
    "NEW.namespace OR OLD.criticality IS NOT NEW.criticality OR "
    "json_extract(OLD.temporal_json, '$.event_type') IS NOT "
    "json_extract(NEW.temporal_json, '$.event_type')"
)
TRIGGERS = (
    "CREATE TRIGGER topic_spare_counted AFTER INSERT ON topic_spare BEGIN "
    f"INSERT INTO topic_spare_counts({_KEY}, n) VALUES (NEW.namespace, NEW.category, "
    "NEW.pool, NEW.agent_chapter, 1) ON CONFLICT DO UPDATE SET n = n + 1; END",
    "CREATE TRIGGER topic_spare_uncounted AFTER DELETE ON topic_spare BEGIN "
    "UPDATE topic_spare_counts SET n = n - 1 WHERE namespace = OLD.namespace AND "
    "category = OLD.category AND pool = OLD.pool AND agent_chapter = OLD.agent_chapter; END",
    "CREATE TRIGGER topic_spare_event_added AFTER INSERT ON events BEGIN "
    f"{_SPOT.format('e.pk = NEW.pk')}; END",
    "CREATE TRIGGER topic_spare_event_changed AFTER UPDATE ON events "
    f"WHEN {_CHANGED} BEGIN {_respot('e.pk = NEW.pk')} END",
    "CREATE TRIGGER topic_spare_event_deleted AFTER DELETE ON events BEGIN "
    "DELETE FROM topic_spare WHERE event_pk = OLD.pk; END",
    "CREATE TRIGGER topic_spare_placed AFTER INSERT ON topic_members BEGIN "
    f"{_respot('e.id = NEW.event_id')} END",
    "CREATE TRIGGER topic_spare_unplaced AFTER DELETE ON topic_members BEGIN "
    f"{_respot('e.id = OLD.event_id')} END",
    "CREATE TRIGGER topic_spare_moved AFTER UPDATE OF topic_id, event_id ON topic_members "
    f"BEGIN {_respot('e.id IN (OLD.event_id, NEW.event_id)')} END",
    "CREATE TRIGGER topic_spare_chapter_added AFTER INSERT ON topics BEGIN "
    f"{_respot(_MEMBERS.format('NEW'))} END",
    "CREATE TRIGGER topic_spare_chapter_turned AFTER UPDATE OF has_agent ON topics "
    f"WHEN OLD.has_agent IS NOT NEW.has_agent BEGIN {_respot(_MEMBERS.format('NEW'))} END",
    "CREATE TRIGGER topic_spare_chapter_deleted AFTER DELETE ON topics BEGIN "
    f"{_respot(_MEMBERS.format('OLD'))} END",
)


def create(raw: sqlite3.Connection) -> None:
    """The tables, filled from the events and chapters as they are, then the triggers."""
    for statement in SCHEMA:
        raw.execute(statement)
    raw.execute(_SPOT.format("1"))
    raw.execute(
        f"INSERT INTO topic_spare_counts({_KEY}, n) SELECT {_KEY}, COUNT(*) FROM topic_spare "
        f"GROUP BY {_KEY}"
    )
    for statement in TRIGGERS:
        raw.execute(statement)


_SHOWN = (
    "s.namespace = ? AND (? <= 0 OR s.agent_chapter = 0) AND (? > 0 OR s.pool = 'conversation')"
)
FALLBACK_CANDIDATES = 100  # fallback matches of a query ranked further; a page shows ≤ 20


def fallback_counts(raw: sqlite3.Connection, namespace: str, agent_weight: float) -> dict[str, int]:
    """How many fallback entries (visible events in no shown chapter) each category has."""
    rows = raw.execute(
        f"SELECT s.category, SUM(s.n) FROM topic_spare_counts s WHERE {_SHOWN} GROUP BY s.category",
        (namespace, agent_weight, agent_weight),
    ).fetchall()
    counts = {row[0]: int(row[1]) for row in rows if row[1]}
    return {c: counts[c] for c in CATEGORIES if c in counts}


def fallback_rows(
    raw: sqlite3.Connection,
    namespace: str,
    agent_weight: float,
    category: str | None,
    limit: int,
    offset: int,
) -> list[sqlite3.Row]:
    """``id, title, category`` of fallback entries in table order (optionally of one
    category)."""
    sql = (
        "SELECT e.id, e.title, s.category FROM topic_spare s JOIN events e ON "
        f"e.pk = s.event_pk WHERE {_SHOWN}"
    )
    params: list[Any] = [namespace, agent_weight, agent_weight]
    if category is not None:
        sql += " AND s.category = ?"
        params.append(category)
    sql += " ORDER BY s.event_pk LIMIT ? OFFSET ?"
    return raw.execute(sql, [*params, limit, offset]).fetchall()


def matching_fallbacks(
    raw: sqlite3.Connection,
    namespace: str,
    agent_weight: float,
    category: str | None,
    tokens: Sequence[str],
    cap: int = FALLBACK_CANDIDATES,
) -> list[sqlite3.Row]:
    """Up to ``cap`` fallback entries sharing a token with the query: FTS5 over the query's
    rarest terms (``search_index.prefilter``), best FTS rank first when that is cheap,
    else newest first. Without FTS5, the entries whose title holds a query token."""
    if not tokens:
        return []
    if not has_event_index(raw):
        wanted = set(tokens)
        rows = fallback_rows(raw, namespace, agent_weight, category, -1, 0)
        return [row for row in rows if wanted.intersection(tokenize(row[1]))][:cap]
    found = prefilter(raw, "event_fts", tokens)
    if found is None:
        return []
    sql = (
        "SELECT e.id, e.title, s.category FROM event_fts f JOIN topic_spare s ON "
        f"s.event_pk = f.rowid JOIN events e ON e.pk = s.event_pk WHERE event_fts MATCH ? "
        f"AND {_SHOWN}"
    )
    params: list[Any] = [found.match, namespace, agent_weight, agent_weight]
    if category is not None:
        sql += " AND s.category = ?"
        params.append(category)
    sql += f" ORDER BY {'f.rank' if found.ranked else 'f.rowid DESC'} LIMIT ?"
    return raw.execute(sql, [*params, cap]).fetchall()
