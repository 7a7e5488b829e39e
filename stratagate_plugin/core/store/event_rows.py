"""Event persistence: cards with their sources, supersede/conflict links, timeline reads.

A card's texts are stored with secret-looking tokens redacted (``text.secrets``): every
writer of cards (derivation, remember, import) passes through ``insert_event``, with the
events capability's ``EventRules`` (its stored search document, the supersede cap).
"""

import json
import sqlite3
from collections.abc import Iterable, Sequence
from typing import Any

from ..clock import iso
from ..errors import NotFound
from ..events.cards import EventCard, event_search_text
from ..events.storage import EventRules
from ..text.search_terms import fts_match_all, fts_match_any, query_tokens
from ..text.secrets import redact_secrets, redact_value
from .postgres.job_claims import HOLDS_TO_COMMIT
from .rows import dump_json, record_from_row
from .search_index import index_event
from .units import on_postgres

VISIBLE = ("active", "superseded")


def insert_event(raw: sqlite3.Connection, card: EventCard, rules: EventRules) -> None:
    card = redacted(card)
    cursor = raw.execute(
        "INSERT INTO events(id, namespace, pool, title, summary, tags_json, quotes_json, "
        "source_block_id, formed_turn, temporal_json, scope, criticality, status, "
        "superseded_by, mention_count, last_adopted_turn, pinned, floor_weight, forced_cap, "
        "catalog_hints_json, created_at, updated_at) "
        "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
        (
            card.id,
            card.namespace,
            card.pool,
            card.title,
            card.summary,
            dump_json(card.tags),
            dump_json(card.quotes),
            card.source_block_id,
            card.formed_turn,
            dump_json(card.temporal),
            card.scope,
            card.criticality,
            card.status,
            card.superseded_by,
            card.mention_count,
            card.last_adopted_turn,
            int(card.pinned),
            card.floor_weight,
            card.forced_cap,
            dump_json(card.catalog_hints),
            iso(card.created_at),
            iso(card.updated_at),
        ),
    )
    raw.executemany(
        "INSERT INTO event_sources(event_id, message_id, position) VALUES (?, ?, ?)",
        [(card.id, message_id, i) for i, message_id in enumerate(card.source_message_ids)],
    )
    text = event_search_text(card.title, card.summary, card.tags, card.quotes, card.temporal)
    index_event(raw, int(cursor.lastrowid or 0), text, rules)
    _apply_links(raw, card, rules.superseded_cap)


def _apply_links(raw: sqlite3.Connection, card: EventCard, cap: float) -> None:
    """Superseded targets are kept, capped at ``cap``; conflicts are linked both ways."""
    now = iso(card.created_at)
    for target in card.temporal.get("supersedes_event_ids", []):
        raw.execute(
            "UPDATE events SET status = 'superseded', superseded_by = ?, forced_cap = ?, "
            "updated_at = ? WHERE id = ? AND namespace = ? AND status IN ('active', 'superseded')",
            (card.id, cap, now, target, card.namespace),
        )
    for target in card.temporal.get("conflicts_with_event_ids", []):
        _add_conflict_backlink(raw, target, card.id, now)


def locked_temporal(raw: sqlite3.Connection, event_id: str) -> dict[str, Any] | None:
    """An event's temporal fields read to be rewritten whole (``None``: no such event). On
    PostgreSQL the row is locked to the commit first (``FOR UPDATE``): writers run side by
    side there, and a restatement's ``last_mentioned_at`` and the graph's
    ``participant_node_ids``, each read and written back, lost one another's (SQLite's one
    writer never races)."""
    lock = HOLDS_TO_COMMIT if on_postgres(raw) else ""
    sql = f"SELECT temporal_json FROM events WHERE id = ?{lock}"
    row = raw.execute(sql, (event_id,)).fetchone()
    return None if row is None else dict(json.loads(row[0]))


def locked_temporals(
    raw: sqlite3.Connection, event_ids: Sequence[str]
) -> dict[str, dict[str, Any]]:
    """Several events' temporal fields read to be rewritten whole, by id; on PostgreSQL
    their rows locked to the commit first, in id order (``locked_temporal``, ``lock_events``)."""
    lock = HOLDS_TO_COMMIT if on_postgres(raw) else ""
    sql = "SELECT id, temporal_json FROM events WHERE id IN (SELECT value FROM json_each(?))"
    rows = raw.execute(f"{sql} ORDER BY id{lock}", (json.dumps(sorted(set(event_ids))),))
    return {row[0]: dict(json.loads(row[1])) for row in rows.fetchall()}


def lock_events(raw: sqlite3.Connection, event_ids: Sequence[str]) -> None:
    """On PostgreSQL, the events' rows locked to the commit (in id order, so two such units
    cannot deadlock): a unit that reads whole cards and writes their temporal fields back
    later (a conflict's resolution) waits for a write-back in flight, then reads it."""
    if on_postgres(raw):
        locked_temporals(raw, event_ids)


def _add_conflict_backlink(raw: sqlite3.Connection, target: str, source: str, now: str) -> None:
    temporal = locked_temporal(raw, target)
    if temporal is None:
        return
    links = temporal.setdefault("conflicts_with_event_ids", [])
    if source not in links:
        links.append(source)
        raw.execute(
            "UPDATE events SET temporal_json = ?, updated_at = ? WHERE id = ?",
            (dump_json(temporal), now, target),
        )


def event_from_row(row: sqlite3.Row, sources: list[str]) -> EventCard:
    return record_from_row(EventCard, row, source_message_ids=sources)


def sources_of(raw: sqlite3.Connection, event_ids: Iterable[str]) -> dict[str, list[str]]:
    ids = list(event_ids)
    found: dict[str, list[str]] = {i: [] for i in ids}
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        rows = raw.execute(
            f"SELECT event_id, message_id FROM event_sources WHERE event_id IN "
            f"({','.join('?' * len(chunk))}) ORDER BY event_id, position",
            chunk,
        ).fetchall()
        for row in rows:
            found[row[0]].append(row[1])
    return found


def events_from_rows(raw: sqlite3.Connection, rows: list[sqlite3.Row]) -> list[EventCard]:
    sources = sources_of(raw, [row["id"] for row in rows])
    return [event_from_row(row, sources[row["id"]]) for row in rows]


def get_event(raw: sqlite3.Connection, event_id: str) -> EventCard:
    row = raw.execute("SELECT * FROM events WHERE id = ?", (event_id,)).fetchone()
    if row is None:
        raise NotFound(f"no event with id {event_id!r}")
    return events_from_rows(raw, [row])[0]


def list_events(
    raw: sqlite3.Connection,
    space: str | None = None,
    statuses: tuple[str, ...] = VISIBLE,
    block_id: str | None = None,
    limit: int = 1000,
    offset: int = 0,
) -> list[EventCard]:
    clauses = [f"status IN ({','.join('?' * len(statuses))})"]
    params: list[Any] = list(statuses)
    for column, value in (("namespace", space), ("source_block_id", block_id)):
        if value is not None:
            clauses.append(f"{column} = ?")
            params.append(value)
    rows = raw.execute(
        f"SELECT * FROM events WHERE {' AND '.join(clauses)} ORDER BY pk LIMIT ? OFFSET ?",
        [*params, limit, offset],
    ).fetchall()
    return events_from_rows(raw, rows)


def recent_events(raw: sqlite3.Connection, space: str, limit: int) -> list[EventCard]:
    """Most recently formed visible events: by source block sequence, formed turn, time, id."""
    rows = raw.execute(
        "SELECT e.* FROM events e LEFT JOIN blocks b ON b.id = e.source_block_id "
        "WHERE e.namespace = ? AND e.status IN ('active', 'superseded') "
        "ORDER BY COALESCE(b.sequence, 0) DESC, e.formed_turn DESC, e.created_at DESC, "
        "e.id DESC LIMIT ?",
        (space, limit),
    ).fetchall()
    return events_from_rows(raw, rows)


def fts_event_candidates(
    raw: sqlite3.Connection, space: str, match: str, limit: int
) -> list[sqlite3.Row]:
    """Visible events whose text shares a token with the query (scan without FTS5).

    The match is a subquery: joined, SQLite walked the space's events and ran the MATCH
    once per event (0.36 s for 2,000 events even when nothing matched)."""
    try:
        return raw.execute(
            "SELECT e.* FROM events e WHERE e.pk IN "
            "(SELECT rowid FROM event_fts WHERE event_fts MATCH ?) "
            "AND e.namespace = ? AND e.status IN ('active', 'superseded') LIMIT ?",
            (match, space, limit),
        ).fetchall()
    except sqlite3.OperationalError as error:
        if "no such table: event_fts" not in str(error):
            raise
    return raw.execute(
        "SELECT * FROM events WHERE namespace = ? AND status IN ('active', 'superseded')",
        (space,),
    ).fetchall()


def sharing_a_token(
    raw: sqlite3.Connection, space: str, text: str, limit: int, *, every: bool = False
) -> list[sqlite3.Row]:
    """Visible event rows sharing a search token with ``text`` — with ``every``, holding
    all of its tokens, as an exact duplicate does — or every visible one, up to ``limit``,
    when ``text`` has no token: the candidates duplicate checks compare."""
    tokens = query_tokens(text)
    if tokens:
        match = fts_match_all(tokens) if every else fts_match_any(tokens)
        return fts_event_candidates(raw, space, match, limit)
    return visible_events(raw, space, limit)


def visible_events(raw: sqlite3.Connection, space: str, limit: int) -> list[sqlite3.Row]:
    """Up to ``limit`` active or superseded event rows of the namespace, in table order."""
    return raw.execute(
        "SELECT * FROM events WHERE namespace = ? AND status IN (?, ?) LIMIT ?",
        (space, *VISIBLE, limit),
    ).fetchall()


def visible_rows(
    raw: sqlite3.Connection, space: str, event_ids: Sequence[str]
) -> list[sqlite3.Row]:
    """The active or superseded rows among ``event_ids`` in the namespace (by id; the unary
    ``+`` keeps the planner on the id index, which hundreds of ids would talk it out of)."""
    found: list[sqlite3.Row] = []
    ids = list(dict.fromkeys(event_ids))
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        found += raw.execute(
            f"SELECT * FROM events WHERE +namespace = ? AND +status IN (?, ?) "
            f"AND id IN ({','.join('?' * len(chunk))})",
            [space, *VISIBLE, *chunk],
        ).fetchall()
    return found


def visible_cards(raw: sqlite3.Connection, space: str, event_ids: Sequence[str]) -> list[EventCard]:
    return events_from_rows(raw, visible_rows(raw, space, event_ids))


def live_event_ids(raw: sqlite3.Connection, event_ids: Iterable[str]) -> set[str]:
    """Those of ``event_ids`` that are still active or superseded."""
    ids = list(dict.fromkeys(event_ids))
    if not ids:
        return set()
    found = raw.execute(
        f"SELECT id FROM events WHERE id IN ({','.join('?' * len(ids))}) AND status IN (?, ?)",
        [*ids, *VISIBLE],
    )
    return {row[0] for row in found}


def redacted(card: EventCard) -> EventCard:
    """The card with secret-looking tokens out of its title, summary, tags and quotes."""
    return card.model_copy(
        update={
            "title": redact_secrets(card.title),
            "summary": redact_secrets(card.summary),
            "tags": redact_value(card.tags),
            "quotes": redact_value(card.quotes),
        }
    )


def add_mention(
    raw: sqlite3.Connection,
    event_id: str,
    message_ids: Sequence[str],
    turn: int,
    mentioned_at: str,
    now: str,
) -> None:
    """A restatement of a live event: its messages join the sources (after the ones it
    has), ``mention_count + 1``, the last adoption moves to ``turn`` (§8, as a duplicate
    agent memory does) and ``temporal.last_mentioned_at`` records when it was said again."""
    temporal = locked_temporal(raw, event_id)
    if temporal is None:
        return
    mentioned = [temporal.get("last_mentioned_at") or "", mentioned_at]
    temporal["last_mentioned_at"] = max(mentioned)
    raw.execute(
        "UPDATE events SET mention_count = mention_count + 1, "
        "last_adopted_turn = MAX(last_adopted_turn, ?), temporal_json = ?, updated_at = ? "
        "WHERE id = ?",
        (turn, dump_json(temporal), now, event_id),
    )
    known = set(sources_of(raw, [event_id])[event_id])
    start = raw.execute(
        "SELECT COALESCE(MAX(position) + 1, 0) FROM event_sources WHERE event_id = ?", (event_id,)
    ).fetchone()[0]
    new = [m for m in dict.fromkeys(message_ids) if m not in known]
    raw.executemany(
        "INSERT INTO event_sources(event_id, message_id, position) VALUES (?, ?, ?)",
        [(event_id, message_id, start + i) for i, message_id in enumerate(new)],
    )
