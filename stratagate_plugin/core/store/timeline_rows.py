"""Timeline reads: the filtered, paged event listing, the conflict queue, version chains.

The listing walks the ``events_timeline`` index (migrations 16 and 28) on each event's chronology
(happened ?? mentioned ?? created, the ``CHRONOLOGY`` expression, exactly as indexed), newest
first, and stops after a page: LIMIT/OFFSET, never every row of a space. Statuses few
events have (forgotten, archived, superseded) are read by status instead and sorted: walking
the chronology for a status nobody has would visit the whole space. Text is matched
through the FTS5 event index (every query term, as tokenised for search); the structured
filters are checked on the rows the index walk reaches.
"""

import json
import sqlite3
from typing import Any

from ..text.search_terms import fts_encode, query_tokens
from ..timeline.filters import TimelineFilter
from .event_search_rows import has_event_index

CHRONOLOGY = (
    "COALESCE(json_extract(temporal_json, '$.happened_start'), "
    "json_extract(temporal_json, '$.happened_end'), "
    "json_extract(temporal_json, '$.mentioned_at'), created_at)"
)
CONFLICTED = (
    "status = 'active' AND json_array_length(temporal_json, '$.conflicts_with_event_ids') > 0"
)
MAX_CHAIN = 16
FEW = {"superseded", "forgotten", "archived"}  # statuses few events have: found, then sorted


def rows_by_id(raw: sqlite3.Connection, event_ids: list[str]) -> list[sqlite3.Row]:
    """Event rows by id alone, whatever their status (only the unique id index can serve
    this: a namespace or status term would let the planner walk a whole space instead)."""
    return raw.execute(
        "SELECT * FROM events WHERE id IN (SELECT value FROM json_each(?))",
        (json.dumps(event_ids),),
    ).fetchall()


def timeline_rows(
    raw: sqlite3.Connection, query: TimelineFilter, offset: int, limit: int
) -> list[sqlite3.Row]:
    """One page of event rows (with ``chronology``), newest chronology first."""
    clauses, params = _conditions(raw, query)
    index = "events_namespace" if set(query.statuses) <= FEW else "events_timeline"
    sql = (
        f"SELECT *, {CHRONOLOGY} AS chronology FROM events INDEXED BY {index} "
        f"WHERE {' AND '.join(clauses)} "
        f"ORDER BY {CHRONOLOGY} DESC, pk DESC LIMIT ? OFFSET ?"
    )
    return raw.execute(sql, [*params, limit, offset]).fetchall()


def _conditions(raw: sqlite3.Connection, query: TimelineFilter) -> tuple[list[str], list[Any]]:
    statuses = query.statuses
    clauses = ["namespace = ?", f"status IN ({','.join('?' * len(statuses))})"]
    params: list[Any] = [query.namespace, *statuses]
    for clause, value in (
        (f"{CHRONOLOGY} >= ?", query.low),
        (f"{CHRONOLOGY} < ?", query.high),
        ("pool = ?", query.source),
        ("json_extract(temporal_json, '$.event_type') = ?", query.event_type),
    ):
        if value is not None:
            clauses.append(clause)
            params.append(value)
    if query.participant:
        clauses.append(
            "EXISTS (SELECT 1 FROM json_each(temporal_json, '$.participants') p "
            "WHERE p.value LIKE ? ESCAPE '\\')"
        )
        params.append(f"%{_escaped(query.participant)}%")
    if query.text:
        clause, value = _text_condition(raw, query.text)
        clauses.append(clause)
        params.append(value)
    return clauses, params


def _text_condition(raw: sqlite3.Connection, text: str) -> tuple[str, str]:
    """Every search term of ``text`` in the FTS5 event index; a title/summary LIKE without it."""
    tokens = list(dict.fromkeys(query_tokens(text)))
    if tokens and has_event_index(raw):
        match = " AND ".join(fts_encode(token) for token in tokens)
        return "pk IN (SELECT rowid FROM event_fts WHERE event_fts MATCH ?)", match
    return "(title || ' ' || summary) LIKE ? ESCAPE '\\'", f"%{_escaped(text)}%"


def _escaped(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def conflict_pairs(
    raw: sqlite3.Connection, space: str, offset: int, limit: int
) -> list[tuple[str, str]]:
    """(newer, older) ids of active events linked as conflicting, each pair once, newest
    first; a link to an event that is no longer active is not a conflict to resolve."""
    rows = raw.execute(
        "SELECT e.id, o.id FROM events e INDEXED BY events_conflicted "
        "JOIN json_each(e.temporal_json, '$.conflicts_with_event_ids') j "
        "JOIN events o ON o.id = j.value AND o.status = 'active' "
        "WHERE e.namespace = ? AND e.status = 'active' "
        "AND json_array_length(e.temporal_json, '$.conflicts_with_event_ids') > 0 "
        "AND (e.pk > o.pk OR NOT EXISTS (SELECT 1 FROM "
        "json_each(o.temporal_json, '$.conflicts_with_event_ids') b WHERE b.value = e.id)) "
        "ORDER BY e.pk DESC, o.pk DESC LIMIT ? OFFSET ?",
        (space, limit, offset),
    ).fetchall()
    return [(row[0], row[1]) for row in rows]


def version_chain(raw: sqlite3.Connection, event_id: str) -> list[str]:
    """The ids of the event's versions, oldest first: back through the ids it supersedes
    (the one that names it as ``superseded_by``) and on through ``superseded_by``, at most
    ``MAX_CHAIN`` each way (cycles stop)."""
    chain = [event_id]
    for _ in range(MAX_CHAIN):
        older = _replaced(raw, chain[0])
        if older is None or older in chain:
            break
        chain.insert(0, older)
    for _ in range(MAX_CHAIN):
        row = raw.execute("SELECT superseded_by FROM events WHERE id = ?", (chain[-1],)).fetchone()
        if row is None or row[0] is None or row[0] in chain:
            break
        chain.append(row[0])
    return chain


def _replaced(raw: sqlite3.Connection, event_id: str) -> str | None:
    """The newest card among those ``event_id`` lists as superseded that points back to it."""
    row = raw.execute(
        "SELECT o.id FROM events e JOIN json_each(e.temporal_json, '$.supersedes_event_ids') j "
        "JOIN events o ON o.id = j.value AND o.superseded_by = e.id WHERE e.id = ? "
        "ORDER BY o.pk DESC LIMIT 1",
        (event_id,),
    ).fetchone()
    return None if row is None else str(row[0])
