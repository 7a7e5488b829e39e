"""The storage contract on PostgreSQL (issue 30), built up capability by capability.

So far: the unit of work (``db.py``) and the schema's migrations (``migrations/``); the
row modules and the capability storages come next.
"""

from .db import PostgresDatabase

__all__ = ["PostgresDatabase"]
