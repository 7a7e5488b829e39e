"""Erasing words from the database, in the caller's one transaction (issue 25).

The words arrive as ``purge.storage.Words``: how they match, scrub a cell and decide an
event's outcome is the purge's rule (``purge/words.py``), applied here through SQL functions.
``plan_words`` finds every row holding the words; ``erase_words`` replaces them with a
tombstone inside each of those rows, then re-derives what was built on them: the messages
leave and re-enter the search index with their new text, their blocks' L4/L3 are re-made by
rule and L0–L2 blanked and queued, an event whose every quote held the words is forgotten
and blanked (with its graph statements, ``strip_event_provenance``), another holding them
is edited and re-indexed, and the topic chapters of the touched spaces are re-synced. Every
other free-text column (``FREE_TEXT``) is swept the same way. ``leftovers`` then checks
every text cell of every table, so what a plan or a receipt says is measured, not assumed.
"""

import json
import sqlite3
from collections.abc import Callable
from datetime import datetime
from typing import NamedTuple

from ..clock import iso
from ..curation.storage import PurgeRules
from ..events.storage import EventRules
from ..purge.storage import TOMBSTONE, PlanItem, TextPurgePlan
from ..purge.storage import Words as Needles
from ..text.search_terms import fts_document
from . import term_index
from .curation_rows import blank_event, rederive_block
from .graph_writes import rebuild_terms
from .search_index import FTS_TOKEN_COUNT, has_index, reindex_event
from .units import on_postgres

_EVENT_TEXT = ("title", "summary", "tags_json", "quotes_json", "temporal_json")
_EVENT_JSON = ("tags_json", "quotes_json", "temporal_json", "catalog_hints_json")
_BLOCK_VIEWS = ("l4_readable", "l3_condensed", "l0_title", "l0_tags_json", "l1_summary")
FREE_TEXT: dict[str, tuple[str, ...]] = {  # besides messages, events and blocks
    "blocks": ("l2_keypoints_json", "derive_error"),
    "events": ("derive_error",),  # a model's error kept with an offline-fallback card
    "jobs": ("last_error", "detail"),
    "batches": ("titles_json", "assessment_json"),
    "usage_receipts": ("audit_json", "payload"),
    "profile_fields": ("value",),
    "profile_changes": ("old_value", "new_value"),
    "profile_proposals": ("value",),
    "memory_actions": ("detail_json",),
    "topics": ("title", "description", "sections_json", "overview_json", "keywords_json"),
    "graph_nodes": ("name", "name_key", "tags_json"),
    "graph_aliases": ("alias", "alias_key"),
    "graph_facts": ("key", "value_json"),
    "graph_edges": ("relation",),
    "graph_terms": ("term",),
    "graph_field_sources": ("value_key",),
    "graph_duplicates": ("reason",),
    "graph_batches": ("reason",),
    "import_jobs": ("text", "payload", "error"),
    "import_items": ("candidate_json", "decision_json"),
    "threads": ("title",),
}


class Rederivers(NamedTuple):
    """The owners' rules an erase re-derives by, inside its transaction."""

    rules: PurgeRules
    """A block's layers, a blanked card's temporal fields, a receipt's payload."""
    events: EventRules
    """An edited or blanked card's stored search document."""
    topics: Callable[[sqlite3.Connection, str, datetime], None]
    """A space's topics synced over this connection (``topics/sync.py``'s rule)."""


JOURNAL_KEY = "purge_pending"  # meta: a purge committed, its file not yet compacted
_UNIQUE_KEYS = {"name_key", "alias_key", "value_key", "term"}  # a tombstone made unique


def register(raw: sqlite3.Connection, needles: Needles) -> None:
    """SQL functions over the needles: ``sg_holds(x)``, ``sg_scrub(x)``, ``sg_scrub_key(x)``."""
    raw.create_function("sg_holds", 1, needles.holds)
    raw.create_function("sg_scrub", 1, needles.scrub_cell)
    raw.create_function("sg_scrub_key", 1, needles.scrub_key)


def plan_words(raw: sqlite3.Connection, needles: Needles) -> TextPurgePlan:
    register(raw, needles)
    messages = _message_items(raw, needles)
    events = _event_items(raw, needles)
    blocks = _block_items(raw, {block for _, block in messages if block})
    return TextPurgePlan(
        hashes=needles.hashes(),
        messages=[item for item, _ in messages],
        events=events,
        blocks=blocks,
        cells=_cell_counts(raw),
    )


def _message_items(raw: sqlite3.Connection, needles: Needles) -> list[tuple[PlanItem, str | None]]:
    rows = raw.execute(
        "SELECT id, namespace, role, created_at, content, block_id FROM messages "
        "WHERE sg_holds(content) OR sg_holds(tool_calls_json) ORDER BY pk"
    ).fetchall()
    return [
        (
            PlanItem(
                kind=f"message ({row['role']})",
                id=row["id"],
                namespace=row["namespace"],
                at=row["created_at"],
                excerpt=needles.excerpt(row["content"]),
            ),
            row["block_id"],
        )
        for row in rows
    ]


def _event_items(raw: sqlite3.Connection, needles: Needles) -> list[PlanItem]:
    holds = " OR ".join(f"sg_holds({c})" for c in (*_EVENT_TEXT, "catalog_hints_json"))
    rows = raw.execute(
        f"SELECT id, namespace, title, summary, quotes_json, status, created_at FROM events "
        f"WHERE {holds} ORDER BY pk"
    ).fetchall()
    items = []
    for row in rows:
        whole = needles.forgets(json.loads(row["quotes_json"]), [row["title"], row["summary"]])
        items.append(
            PlanItem(
                kind=f"event ({row['status']})",
                id=row["id"],
                namespace=row["namespace"],
                at=row["created_at"],
                excerpt=needles.excerpt(row["title"]),
                outcome="forgotten" if whole else "edited",
            )
        )
    return items


def _block_items(raw: sqlite3.Connection, from_messages: set[str]) -> list[PlanItem]:
    holds = " OR ".join(f"sg_holds({c})" for c in (*_BLOCK_VIEWS, "l2_keypoints_json"))
    rows = raw.execute(
        f"SELECT id, namespace, created_at FROM blocks WHERE id IN "
        f"(SELECT value FROM json_each(?)) OR {holds} ORDER BY sequence",
        (json.dumps(sorted(from_messages)),),
    ).fetchall()
    return [
        PlanItem(
            kind="block",
            id=r["id"],
            namespace=r["namespace"],
            at=r["created_at"],
            outcome="re-derived",
        )
        for r in rows
    ]


def _cell_counts(raw: sqlite3.Connection) -> dict[str, int]:
    counts = {}
    for table, columns in FREE_TEXT.items():
        for column in columns:
            n = raw.execute(f"SELECT count(*) FROM {table} WHERE sg_holds({column})").fetchone()
            if n[0]:
                counts[f"{table}.{column}"] = int(n[0])
    return counts


def erase_words(
    raw: sqlite3.Connection,
    needles: Needles,
    plan: TextPurgePlan,
    now: datetime,
    rederive: Rederivers,
) -> dict[str, int]:
    """Tombstone the words in every row of ``plan`` and re-derive what was built on them
    (blocks' layers, forgotten cards, swept receipts' payloads, the touched spaces' topics,
    by the rules in ``rederive``); what was changed, counted by kind."""
    register(raw, needles)
    if on_postgres(raw):
        from .postgres.job_claims import hold_spaces_jobs

        hold_spaces_jobs(raw, plan.spaces())
    stamp = iso(now)
    _erase_messages(raw, [item.id for item in plan.messages], stamp)
    for block in plan.blocks:
        rederive_block(raw, block.id, stamp, rederive.rules)
    for item in plan.events:
        if item.outcome == "forgotten":
            blank_event(raw, item.id, TOMBSTONE, stamp, rederive.rules, rederive.events)
        else:
            _edit_event(raw, item.id, stamp, rederive.events)
    release_running_jobs(raw, plan.spaces(), stamp)
    for space in plan.spaces():
        rederive.topics(raw, space, now)
    swept = sweep(raw)
    swept += raw.execute("DELETE FROM profile_fields WHERE value = ?", (TOMBSTONE,)).rowcount
    _rebuild_graph_terms(raw)
    _recompute_receipt_payloads(raw, rederive.rules)
    optimize_index(raw)
    return {
        "messages": len(plan.messages),
        "blocks": len(plan.blocks),
        "events_forgotten": len(plan.forgotten_events()),
        "events_edited": len(plan.events) - len(plan.forgotten_events()),
        "other_rows": swept,
    }


def release_running_jobs(raw: sqlite3.Connection, spaces: list[str], stamp: str) -> int:
    """Every job running in the spaces loses its claim and is queued again: a worker that
    read the words before the purge cannot apply what it made of them (``jobs.holds``
    fails) and runs again on what is left."""
    return raw.execute(
        "UPDATE jobs SET status = 'pending', owner = NULL, lease_expires_at = NULL, "
        "attempts = max(attempts - 1, 0), next_retry_at = NULL, updated_at = ? "
        "WHERE status = 'running' AND namespace IN "
        "(SELECT value FROM json_each(?))",
        (stamp, json.dumps(spaces)),
    ).rowcount


def _erase_messages(raw: sqlite3.Connection, ids: list[str], stamp: str) -> None:
    rows = raw.execute(
        "SELECT id, namespace, fts_rowid FROM messages WHERE id IN "
        "(SELECT value FROM json_each(?))",
        (json.dumps(ids),),
    ).fetchall()
    raw.execute(
        "UPDATE messages SET content = sg_scrub(content), tool_calls_json = "
        "sg_scrub(tool_calls_json), purged_at = coalesce(purged_at, ?) "
        "WHERE id IN (SELECT value FROM json_each(?))",
        (stamp, json.dumps(ids)),
    )
    if has_index(raw):
        for row in rows:
            if row["fts_rowid"] is not None:
                _reindex_message(raw, row["namespace"], int(row["fts_rowid"]))


def _reindex_message(raw: sqlite3.Connection, space: str, rowid: int) -> None:
    """The message's FTS row again from its new text, the space's token count moved by the
    difference (it stays one indexed message of its block)."""
    old = raw.execute(
        f"SELECT {FTS_TOKEN_COUNT} FROM message_fts f WHERE f.rowid = ?", (rowid,)
    ).fetchone()
    content = raw.execute("SELECT content FROM messages WHERE fts_rowid = ?", (rowid,)).fetchone()
    document = fts_document(content[0])
    term_index.remove(raw, term_index.messages_at(raw, [rowid]))
    raw.execute("DELETE FROM message_fts WHERE rowid = ?", (rowid,))
    raw.execute("INSERT INTO message_fts(rowid, tokens) VALUES (?, ?)", (rowid, document))
    term_index.add(raw, term_index.messages_at(raw, [rowid]))
    new = document.count(" ") + 1 if document else 0
    raw.execute(
        "UPDATE message_index_stats SET tokens = tokens - ? + ? WHERE namespace = ?",
        (int(old[0]) if old else 0, new, space),
    )


def _edit_event(raw: sqlite3.Connection, event_id: str, stamp: str, rules: EventRules) -> None:
    sets = ", ".join(f"{c} = sg_scrub({c})" for c in ("title", "summary", *_EVENT_JSON))
    raw.execute(f"UPDATE events SET {sets}, updated_at = ? WHERE id = ?", (stamp, event_id))
    reindex_event(raw, event_id, rules)


def sweep(raw: sqlite3.Connection) -> int:
    """Every ``FREE_TEXT`` column scrubbed where it holds the words; a key column gets a
    tombstone made unique, so no constraint can stop the purge. Rows changed."""
    changed = 0
    for table, columns in FREE_TEXT.items():
        for column in columns:
            scrub = "sg_scrub_key" if column in _UNIQUE_KEYS else "sg_scrub"
            changed += raw.execute(
                f"UPDATE OR IGNORE {table} SET {column} = {scrub}({column}) "
                f"WHERE sg_holds({column})"
            ).rowcount
            changed += raw.execute(f"DELETE FROM {table} WHERE sg_holds({column})").rowcount
    return changed


def _rebuild_graph_terms(raw: sqlite3.Connection) -> None:
    """Nodes whose terms were swept get their terms again from their (scrubbed) text."""
    rows = raw.execute(
        "SELECT DISTINCT node_id FROM graph_terms WHERE instr(term, ?) = 1", (TOMBSTONE,)
    ).fetchall()
    rebuild_terms(raw, [row[0] for row in rows])


def _recompute_receipt_payloads(raw: sqlite3.Connection, rules: PurgeRules) -> None:
    """A receipt's payload is its canonical JSON: recomputed where the audit was swept, so
    an identical replay is still recognised."""
    rows = raw.execute(
        "SELECT rowid, event_ids_json, audit_json FROM usage_receipts "
        "WHERE instr(audit_json, ?) > 0",
        (TOMBSTONE,),
    ).fetchall()
    for rowid, event_ids_json, audit_json in rows:
        payload = rules.receipt_payload(json.loads(event_ids_json), json.loads(audit_json))
        raw.execute("UPDATE usage_receipts SET payload = ? WHERE rowid = ?", (payload, rowid))


def optimize_index(raw: sqlite3.Connection) -> None:
    """Merge each FTS index into one segment, so no older segment keeps a deleted term
    (PostgreSQL's GIN indexes have none: its purge rebuilds them, ``postgres/purge.py``)."""
    if on_postgres(raw):
        return
    for table in ("message_fts", "event_fts"):
        try:
            raw.execute(f"INSERT INTO {table}({table}) VALUES ('optimize')")
        except sqlite3.OperationalError as error:
            if f"no such table: {table}" not in str(error):
                raise


def leftovers(raw: sqlite3.Connection, needles: Needles) -> dict[str, int]:
    """Every text cell of every table (FTS shadow tables too) still holding the words, and
    every index term of them still in a search index's segments."""
    register(raw, needles)
    found = _index_terms_left(raw, needles)
    tables = raw.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
        "AND sql NOT LIKE 'CREATE VIRTUAL%'"
    ).fetchall()
    for (table,) in tables:
        for column in raw.execute(f"PRAGMA table_info({table})").fetchall():
            name = column[1]
            n = raw.execute(f'SELECT count(*) FROM "{table}" WHERE sg_holds("{name}")').fetchone()
            if n[0]:
                found[f"{table}.{name}"] = int(n[0])
    return found


def _index_terms_left(raw: sqlite3.Connection, needles: Needles) -> dict[str, int]:
    """Documents per index still holding a term of the words (read through ``fts5vocab``,
    which walks the segments themselves)."""
    found: dict[str, int] = {}
    if not needles.index_terms or not has_index(raw):
        return found
    for table in ("message_fts", "event_fts"):
        raw.execute(
            f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.sg_{table}_vocab "
            f"USING fts5vocab(main, '{table}', 'row')"
        )
        n = raw.execute(
            f"SELECT coalesce(sum(doc), 0) FROM temp.sg_{table}_vocab WHERE term IN "
            "(SELECT value FROM json_each(?))",
            (json.dumps(needles.index_terms),),
        ).fetchone()[0]
        if n:
            found[f"{table} (index terms)"] = int(n)
    return found


def write_journal(raw: sqlite3.Connection, receipt_id: str) -> None:
    """Written in the purge's transaction; cleared once the file is compacted."""
    raw.execute(
        "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)",
        (JOURNAL_KEY, json.dumps({"receipt": receipt_id})),
    )


def journal(raw: sqlite3.Connection) -> str | None:
    """The receipt id of a purge whose file was not compacted yet, else None."""
    row = raw.execute("SELECT value FROM meta WHERE key = ?", (JOURNAL_KEY,)).fetchone()
    return None if row is None else str(json.loads(row[0])["receipt"])


def clear_journal(raw: sqlite3.Connection) -> None:
    raw.execute("DELETE FROM meta WHERE key = ?", (JOURNAL_KEY,))


def profile_values(raw: sqlite3.Connection, field: str) -> list[str]:
    """Every value the profile field has held: now, in its history, in proposals."""
    rows = raw.execute(
        "SELECT value FROM profile_fields WHERE field = ? UNION SELECT old_value FROM "
        "profile_changes WHERE field = ? UNION SELECT new_value FROM profile_changes "
        "WHERE field = ? UNION SELECT value FROM profile_proposals WHERE field = ?",
        (field,) * 4,
    ).fetchall()
    return [str(row[0]) for row in rows if row[0]]
