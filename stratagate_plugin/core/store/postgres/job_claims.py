"""Job claims on PostgreSQL: several app processes claim from one queue at once.

SQLite serialises writers (``BEGIN IMMEDIATE``), so a claim's read of the first due job and
its lease are never raced. On PostgreSQL two READ COMMITTED claims could both read the same
first due job; locking the chosen row and skipping rows another claim holds locked
(``FOR UPDATE … SKIP LOCKED``) gives each claimant a different job without waiting. Leases
stay as on SQLite (owner, expiry, taken back when expired).
"""

SKIP_LOCKED = " FOR UPDATE OF due SKIP LOCKED"
"""Appended to a claim's ``SELECT … FROM jobs AS due … LIMIT 1``."""
