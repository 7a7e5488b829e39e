"""The fallback entries' index (spec §5.1, §5.5): visible events no shown chapter holds,
the space's unfiled events (the tables keep the names migration 19 stored: ``topic_spare``).

The directory and ``memory_list_topics`` run on every turn, and a large space has tens of
thousands of events in no chapter; recounting them on each read (the JSON category, the
chapter check per event) made both grow with the space. So ``topic_spare`` keeps one row
per visible event that no chapter without agent events holds — its category stored, and
whether an agent chapter holds it — and ``topic_spare_counts`` the rows per category.

Which events are entries, and their category, is the topics' rule (``topics/unfiled.py``),
not SQL's: since migration 26 a write only marks the events whose entry it may have changed
(``topic_spare_marks``, by triggers that hold no rule: any insert, status, pool, space,
criticality or event-type change (``_EVENT_TYPE``, the one field of the temporal JSON an
entry's source holds: since migration 27, so the graph writing ``participant_node_ids``
marks nothing), deletion, chapter placement, a chapter added, deleted or turning
``has_agent``, whichever code wrote it), and the rule re-files them
(``marked_sources``, then ``refile``) before the entries are read. ``topic_spare_counts``
is kept equal to the rows it counts by the two counting triggers of migration 19.

A fallback entry at agent weight > 0 is a row no chapter holds at all; at weight 0 (agent
events and their chapters hidden) a row of a conversation event, chapter or not.
"""

import sqlite3
from collections.abc import Iterable, Sequence
from typing import Any

from ..text.search_terms import tokenize
from .event_search_rows import has_event_index
from .search_index import prefilter
from .units import alone

_SHOWN = (
    "s.namespace = ? AND (? <= 0 OR s.agent_chapter = 0) AND (? > 0 OR s.pool = 'conversation')"
)
REFILING = "topic refiling"  # the marks are the database's, not a space's
FALLBACK_CANDIDATES = 100  # fallback matches of a query ranked further; a page shows ≤ 20
_HELD = (
    "EXISTS (SELECT 1 FROM topic_members m JOIN topics t ON t.id = m.topic_id "
    "WHERE m.event_id = e.id AND t.has_agent {0} 0)"
)
_EVENT_TYPE = (
    "CASE WHEN json_valid(e.temporal_json) THEN json_extract(e.temporal_json, '$.event_type') END"
)


def spare_marked(raw: sqlite3.Connection) -> bool:
    return bool(raw.execute("SELECT EXISTS (SELECT 1 FROM topic_spare_marks)").fetchone()[0])


def marked_sources(raw: sqlite3.Connection) -> tuple[list[int], list[tuple[Any, ...]]]:
    """The marked events' keys, and (pk, namespace, status, pool, criticality, event type,
    held by a plain chapter, held by an agent chapter) of those still stored. Read alone
    (``REFILING``) to the commit: two re-filings of the same marks at once would both file
    their entries."""
    alone(raw, REFILING)
    marked = [row[0] for row in raw.execute("SELECT event_pk FROM topic_spare_marks")]
    if not marked:
        return [], []
    rows = raw.execute(
        f"SELECT e.pk, e.namespace, e.status, e.pool, e.criticality, {_EVENT_TYPE}, "
        f"{_HELD.format('=')}, {_HELD.format('!=')} FROM topic_spare_marks k "
        "JOIN events e ON e.pk = k.event_pk ORDER BY e.pk"
    )
    return marked, [tuple(row) for row in rows]


def refile(
    raw: sqlite3.Connection, marked: Sequence[int], entries: Iterable[tuple[Any, ...]]
) -> None:
    """The entries of ``marked`` replaced by ``entries`` (pk, namespace, category, pool,
    agent chapter); their marks cleared (the counts follow by trigger)."""
    for start in range(0, len(marked), 500):
        chunk = list(marked[start : start + 500])
        marks = ", ".join("?" * len(chunk))
        raw.execute(f"DELETE FROM topic_spare WHERE event_pk IN ({marks})", chunk)
        raw.execute(f"DELETE FROM topic_spare_marks WHERE event_pk IN ({marks})", chunk)
    raw.executemany(
        "INSERT INTO topic_spare(event_pk, namespace, category, pool, agent_chapter) "
        "VALUES (?, ?, ?, ?, ?)",
        [(pk, space, category, pool, int(agent)) for pk, space, category, pool, agent in entries],
    )


def fallback_counts(raw: sqlite3.Connection, space: str, agent_weight: float) -> dict[str, int]:
    """How many fallback entries (visible events in no shown chapter) each category has
    (categories with none left out; the catalog orders them)."""
    rows = raw.execute(
        f"SELECT s.category, SUM(s.n) FROM topic_spare_counts s WHERE {_SHOWN} GROUP BY s.category",
        (space, agent_weight, agent_weight),
    ).fetchall()
    return {row[0]: int(row[1]) for row in rows if row[1]}


def fallback_rows(
    raw: sqlite3.Connection,
    space: str,
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
    params: list[Any] = [space, agent_weight, agent_weight]
    if category is not None:
        sql += " AND s.category = ?"
        params.append(category)
    sql += " ORDER BY s.event_pk LIMIT ? OFFSET ?"
    return raw.execute(sql, [*params, limit, offset]).fetchall()


def matching_fallbacks(
    raw: sqlite3.Connection,
    space: str,
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
        rows = fallback_rows(raw, space, agent_weight, category, -1, 0)
        return [row for row in rows if wanted.intersection(tokenize(row[1]))][:cap]
    found = prefilter(raw, "event_fts", tokens)
    if found is None:
        return []
    sql = (
        "SELECT e.id, e.title, s.category FROM event_fts f JOIN topic_spare s ON "
        f"s.event_pk = f.rowid JOIN events e ON e.pk = s.event_pk WHERE event_fts MATCH ? "
        f"AND {_SHOWN}"
    )
    params: list[Any] = [found.match, space, agent_weight, agent_weight]
    if category is not None:
        sql += " AND s.category = ?"
        params.append(category)
    sql += f" ORDER BY {'f.rank' if found.ranked else 'f.rowid DESC'} LIMIT ?"
    return raw.execute(sql, [*params, cap]).fetchall()
