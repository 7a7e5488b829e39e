"""Memory spaces as the user sees them: every namespace with what it holds.

Counts come from the counters recording keeps (threads, blocks) and the events index, so
listing the spaces never scans messages.
"""

import sqlite3

from ..profile.spaces import SpaceSummary

_SUMMARIES = (
    "SELECT n.namespace, n.block_count, n.updated_at, count(t.thread_id) AS threads, "
    "coalesce(sum(t.message_count), 0) AS messages, "
    "coalesce(sum(t.message_count - t.sealed_position), 0) AS open_messages, "
    "(SELECT count(*) FROM events e WHERE e.namespace = n.namespace "
    "AND e.status IN ('active', 'superseded')) AS events "
    "FROM namespaces n LEFT JOIN threads t ON t.namespace = n.namespace "
)


def space_summaries(raw: sqlite3.Connection, space: str | None = None) -> list[SpaceSummary]:
    """Every space (or the one named), most recently used first."""
    where, params = ("WHERE n.namespace = ? ", [space]) if space is not None else ("", [])
    rows = raw.execute(
        f"{_SUMMARIES}{where}GROUP BY n.namespace ORDER BY n.updated_at DESC, n.namespace", params
    ).fetchall()
    return [
        SpaceSummary(
            namespace=row["namespace"],
            threads=int(row["threads"]),
            messages=int(row["messages"]),
            open_messages=int(row["open_messages"]),
            blocks=int(row["block_count"]),
            events=int(row["events"]),
            updated_at=row["updated_at"],
        )
        for row in rows
    ]


def space_names(raw: sqlite3.Connection) -> list[str]:
    """Every namespace, most recently used first, without counting anything (the web
    app's space selector asks on every page)."""
    rows = raw.execute("SELECT namespace FROM namespaces ORDER BY updated_at DESC, namespace")
    return [row[0] for row in rows]
