"""The storage contract on PostgreSQL (issue 30): the unit of work (``db.py``), the schema's
migrations (``migrations/``), and the row modules' SQL translated to run there
(``dialect.py``, ``compat.py``, ``engine_db.py``), with PostgreSQL's own modules where the
meaning differs (``full_text.py``, ``job_claims.py``).

``PostgresDatabase`` is imported on first use, so a row module that asks one of the small
PostgreSQL modules a question costs SQLite users no psycopg import.
"""

from typing import Any

__all__ = ["PostgresDatabase"]


def __getattr__(name: str) -> Any:
    if name == "PostgresDatabase":
        from .db import PostgresDatabase

        return PostgresDatabase
    raise AttributeError(name)
