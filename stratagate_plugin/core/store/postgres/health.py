"""``stratagate doctor`` for a memory on a PostgreSQL server.

The server keeps its own pages whole (checksums, WAL), so what can go wrong is ours: a
schema older or newer than this StrataGate, an index left invalid by an interrupted
``CREATE INDEX CONCURRENTLY`` or a failed ``REINDEX``, and search rows out of step with
the messages and events they index (a row missing: a message no search finds; a row
left over: a purged text still findable). Backups are the server's business
(``pg_dump``), so the report says how to take one rather than listing files.
"""

from dataclasses import dataclass, field
from typing import Any

import psycopg

from ...errors import StorageError
from .db import database_label, first_line
from .migrations import SCHEMA_VERSION

# (what is wrong, the query counting it)
SEARCH_CHECKS = (
    (
        "sealed messages without a search row",
        "SELECT COUNT(*) FROM messages m WHERE m.fts_rowid IS NOT NULL AND NOT EXISTS "
        "(SELECT 1 FROM message_search s WHERE s.fts_rowid = m.fts_rowid)",
    ),
    (
        "message search rows whose message is gone",
        "SELECT COUNT(*) FROM message_search s WHERE NOT EXISTS "
        "(SELECT 1 FROM messages m WHERE m.fts_rowid = s.fts_rowid)",
    ),
    (
        "events without a search row",
        "SELECT COUNT(*) FROM events e WHERE NOT EXISTS "
        "(SELECT 1 FROM event_search s WHERE s.event_pk = e.pk)",
    ),
    (
        "event search rows whose event is gone",
        "SELECT COUNT(*) FROM event_search s WHERE NOT EXISTS "
        "(SELECT 1 FROM events e WHERE e.pk = s.event_pk)",
    ),
)


@dataclass
class ServerReport:
    name: str
    version: int
    expected: int
    problems: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.problems


def check_server(url: str) -> ServerReport:
    """What is wrong with the memory at ``url``; a server that cannot be reached is one
    ``StorageError`` line."""
    name = database_label(url)
    try:
        with psycopg.connect(url, autocommit=True, connect_timeout=10) as conn:
            conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
            return _examined(conn, name)
    except psycopg.Error as error:
        raise StorageError(f"cannot check {name}: {first_line(error)}") from None


def _examined(conn: psycopg.Connection[Any], name: str) -> ServerReport:
    report = ServerReport(name, _version(conn), SCHEMA_VERSION)
    if report.version != report.expected:
        report.problems.append(_version_problem(report))
        return report  # the other checks read tables this version may not have
    report.problems += [f"invalid index {index}" for index in _invalid_indexes(conn)]
    for what, query in SEARCH_CHECKS:
        found = _one(conn, query)
        if found:
            report.problems.append(f"{found} {what}")
    report.counts = {t: _one(conn, f"SELECT COUNT(*) FROM {t}") for t in ("messages", "events")}
    return report


def _version(conn: psycopg.Connection[Any]) -> int:
    exists = _one(conn, "SELECT COUNT(*) FROM pg_tables WHERE tablename = 'schema_migrations'")
    return _one(conn, "SELECT COALESCE(MAX(version), 0) FROM schema_migrations") if exists else 0


def _version_problem(report: ServerReport) -> str:
    if report.version > report.expected:
        return (
            f"schema version {report.version} was written by a newer StrataGate "
            f"(this one knows {report.expected}): upgrade StrataGate"
        )
    return (
        f"schema version {report.version} of {report.expected}: run "
        "`stratagate db migrate URL` (opening it with StrataGate migrates it too)"
    )


def _invalid_indexes(conn: psycopg.Connection[Any]) -> list[str]:
    rows = conn.execute(
        "SELECT c.relname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
        "JOIN pg_namespace n ON n.oid = c.relnamespace "
        "WHERE n.nspname = current_schema() AND NOT i.indisvalid ORDER BY 1"
    )
    return [row[0] for row in rows]


def _one(conn: psycopg.Connection[Any], query: str) -> int:
    row = conn.execute(query).fetchone()
    return int(row[0]) if row else 0
