"""Statements and round trips per call on PostgreSQL, counted where psycopg sends them.

On a local socket each statement is a round trip (~0.1–0.3 ms plus psycopg's own work),
so their number per call is a deterministic measure of what a call costs there, beside
its noisy latency (issue #30). ``counting()`` wraps ``psycopg.Cursor.execute`` and
``executemany`` for the block: every statement the engine sends passes through them
(``Connection.execute`` opens a cursor and calls its ``execute``), whether a row module's
translated SQL, a PostgreSQL module's own, or the unit's ``BEGIN`` / ``COMMIT`` and the
pool's check of a connection as it is taken (an empty statement). A ``BEGIN`` sent in a
pipeline with the unit's first statement (``postgres/pooled.py``) is a unit but no round
trip of its own.
"""

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import psycopg
from psycopg import pq

_CONTROL = ("BEGIN", "COMMIT", "ROLLBACK")


@dataclass
class Counts:
    """What one call sent: the engine's statements, its units (one ``BEGIN`` each), and
    every round trip (statements, transaction control, the pool's checks)."""

    statements: int = 0
    units: int = 0
    trips: int = 0
    texts: list[str] = field(default_factory=list)

    def add(self, query: Any, pipelined: bool = False) -> None:
        text = str(query).strip()
        self.trips += not (pipelined and text.startswith("BEGIN"))
        if text.startswith("BEGIN"):
            self.units += 1
        if text and not text.startswith(_CONTROL):
            self.statements += 1
            self.texts.append(text)


@contextmanager
def counting() -> Iterator[Counts]:
    """Counts of every statement psycopg sends in the block (all threads: one call at a
    time is measured, so the reader pool's threads all count for it)."""
    counts = Counts()
    execute, executemany = psycopg.Cursor.execute, psycopg.Cursor.executemany

    def counted_execute(self: Any, query: Any, *args: Any, **kwargs: Any) -> Any:
        counts.add(query, self.connection.pgconn.pipeline_status != pq.PipelineStatus.OFF)
        return execute(self, query, *args, **kwargs)

    def counted_many(self: Any, query: Any, *args: Any, **kwargs: Any) -> Any:
        counts.add(query)
        return executemany(self, query, *args, **kwargs)

    psycopg.Cursor.execute = counted_execute  # type: ignore[method-assign]
    psycopg.Cursor.executemany = counted_many  # type: ignore[method-assign]
    try:
        yield counts
    finally:
        psycopg.Cursor.execute = execute  # type: ignore[method-assign]
        psycopg.Cursor.executemany = executemany  # type: ignore[method-assign]
