"""Deleting a whole memory space: every row of it, in the caller's one transaction.

A space's rows are those with its ``namespace`` and those hanging off them by id (an
event's sources and search document, a node's facts and sources, an import job's items, the
search index rows of its messages and events). Foreign keys are checked at the commit
(``defer_foreign_keys``), so the order of the deletes does not matter. The caller runs it
with ``secure_delete`` on and vacuums after (``purge_files``).
"""

import sqlite3

from . import event_term_index
from .units import on_postgres

_IN_SPACE = "(SELECT {key} FROM {table} WHERE namespace = ?)"
DEPENDENT = (  # (table, where) for rows without a namespace of their own
    ("event_sources", f"event_id IN {_IN_SPACE.format(key='id', table='events')}"),
    ("event_documents", f"pk IN {_IN_SPACE.format(key='pk', table='events')}"),
    ("graph_facts", f"node_id IN {_IN_SPACE.format(key='id', table='graph_nodes')}"),
    ("graph_field_sources", f"node_id IN {_IN_SPACE.format(key='id', table='graph_nodes')}"),
    ("graph_sources", f"event_id IN {_IN_SPACE.format(key='id', table='events')}"),
    ("graph_batch_events", f"batch_id IN {_IN_SPACE.format(key='id', table='graph_batches')}"),
    ("import_items", f"job_id IN {_IN_SPACE.format(key='id', table='import_jobs')}"),
)
_FTS = (
    ("message_fts", f"rowid IN {_IN_SPACE.format(key='fts_rowid', table='messages')}"),
    ("event_fts", f"rowid IN {_IN_SPACE.format(key='pk', table='events')}"),
)


def space_tables(raw: sqlite3.Connection) -> list[str]:
    """Every ordinary table with a ``namespace`` column."""
    if on_postgres(raw):
        from .postgres.purge import namespace_tables

        return namespace_tables(raw)
    names = raw.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
        "AND sql NOT LIKE 'CREATE VIRTUAL%' ORDER BY name"
    ).fetchall()
    return [
        table
        for (table,) in names
        if any(col[1] == "namespace" for col in raw.execute(f'PRAGMA table_info("{table}")'))
    ]


def space_rows(raw: sqlite3.Connection, space: str) -> dict[str, int]:
    """What deleting the space deletes: rows by table (none when it does not exist)."""
    counts = {}
    for table, where in _dependent(raw):
        n = raw.execute(f"SELECT count(*) FROM {table} WHERE {where}", (space,)).fetchone()
        if n[0]:
            counts[table] = int(n[0])
    for table in space_tables(raw):
        n = raw.execute(f"SELECT count(*) FROM {table} WHERE namespace = ?", (space,))
        found = int(n.fetchone()[0])
        if found:
            counts[table] = found
    return counts


def space_threads(raw: sqlite3.Connection, space: str) -> list[str]:
    rows = raw.execute(
        "SELECT thread_id FROM threads WHERE namespace = ? ORDER BY thread_id", (space,)
    ).fetchall()
    return [str(row[0]) for row in rows]


def delete_space(raw: sqlite3.Connection, space: str) -> dict[str, int]:
    """Delete every row of the space; rows deleted by table."""
    if on_postgres(raw):
        from .postgres.purge import defer_foreign_keys

        defer_foreign_keys(raw)
    else:
        raw.execute("PRAGMA defer_foreign_keys = ON")
    event_term_index.remove_space(raw, space)  # read from the FTS rows deleted below
    deleted = {}
    for table, where in [*_fts(raw), *_dependent(raw)]:
        n = raw.execute(f"DELETE FROM {table} WHERE {where}", (space,)).rowcount
        if n > 0:
            deleted[table] = n
    for table in space_tables(raw):
        n = raw.execute(f"DELETE FROM {table} WHERE namespace = ?", (space,)).rowcount
        if n > 0:
            deleted[table] = n
    return deleted


def _dependent(raw: sqlite3.Connection) -> list[tuple[str, str]]:
    present = _tables(raw)
    return [(t, w) for t, w in DEPENDENT if t in present]


def _fts(raw: sqlite3.Connection) -> list[tuple[str, str]]:
    present = _tables(raw)
    return [(t, w) for t, w in _FTS if t in present]


def _tables(raw: sqlite3.Connection) -> set[str]:
    return {row[0] for row in raw.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
