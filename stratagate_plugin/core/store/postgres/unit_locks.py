"""Units that must run alone, on PostgreSQL: an advisory lock per unit and space.

SQLite runs one write at a time (``BEGIN IMMEDIATE`` takes the file's write lock), so a
unit that reads and then writes on what it read (a topic claim: the first due job of a
space with none running; a projection resolving names to the nodes already there) is
never raced. PostgreSQL's READ COMMITTED writes run side by side and do not see each
other's uncommitted rows: two such units would both decide on the same read (two jobs of a
space running, a node made twice). ``pg_advisory_xact_lock`` keyed by the unit's name and
its space makes the second wait for the first to commit, then read what it wrote; the lock
goes with the transaction (commit, rollback, or a lost connection), so nothing is left held.
"""

import sqlite3

_LOCK = "SELECT pg_advisory_xact_lock(hashtextextended(?, 0))"


def hold(raw: sqlite3.Connection, unit: str, space: str) -> None:
    """Wait for, then hold to the end of this transaction, the lock of ``unit`` in ``space``."""
    raw.execute(_LOCK, (f"{unit}:{space}",))
