"""What a database file must look like after any fault, read with plain ``sqlite3``.

These are the checks of tests/test_crash.py made reusable: SQLite's own integrity and
foreign-key checks, no receipt without its turn's messages, and the full-text index holding
exactly the sealed messages (messages enter it when their block is sealed). Each problem is
one line; an empty list means the file is sound.
"""

import sqlite3
from collections import Counter
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

ORPHAN_RECEIPTS = (
    "SELECT COUNT(*) FROM ingestion_receipts r WHERE NOT EXISTS (SELECT 1 FROM messages m "
    "WHERE m.namespace = r.namespace AND m.thread_id = r.thread_id AND m.turn = r.thread_turn)"
)


@contextmanager
def reading(path: Path) -> Iterator[sqlite3.Connection]:
    conn = sqlite3.connect(path, timeout=30)
    try:
        yield conn
    finally:
        conn.close()


def problems(path: Path) -> list[str]:
    """Every way the file at ``path`` is unsound (empty when it is sound)."""
    if not path.exists():
        return [f"{path} does not exist"]
    try:
        with reading(path) as conn:
            return _problems(conn)
    except sqlite3.Error as error:
        return [f"{path}: {error}"]


def _problems(conn: sqlite3.Connection) -> list[str]:
    found = []
    verdict = [row[0] for row in conn.execute("PRAGMA integrity_check")]
    if verdict != ["ok"]:
        found.append(f"integrity_check: {'; '.join(verdict[:3])}")
    broken = conn.execute("PRAGMA foreign_key_check").fetchall()
    if broken:
        found.append(f"foreign_key_check: {len(broken)} rows, first {broken[0]}")
    orphans = conn.execute(ORPHAN_RECEIPTS).fetchone()[0]
    if orphans:
        found.append(f"{orphans} receipts without their messages")
    sealed = conn.execute("SELECT COUNT(*) FROM messages WHERE block_id IS NOT NULL").fetchone()[0]
    indexed = conn.execute("SELECT COUNT(*) FROM message_fts").fetchone()[0]
    if sealed != indexed:
        found.append(f"full-text index holds {indexed} rows for {sealed} sealed messages")
    return found


def message_counts(path: Path) -> Counter[tuple[str, str, str]]:
    """How many times each (thread, role, content) is stored: a duplicate shows as 2."""
    with reading(path) as conn:
        rows = conn.execute("SELECT thread_id, role, content FROM messages").fetchall()
    return Counter((str(t), str(r), str(c)) for t, r, c in rows)


def turns_missing(expected: Iterable[tuple[str, str, str]], path: Path) -> int:
    """How many of the ``expected`` (thread, role, content) user messages are not stored."""
    stored = message_counts(path)
    return sum(1 for key in expected if key[1] == "user" and key not in stored)


def doubled_messages(path: Path) -> int:
    """Stored messages beyond the first with the same thread, role and content."""
    return sum(count - 1 for count in message_counts(path).values() if count > 1)


def receipt_ids(path: Path) -> set[str]:
    with reading(path) as conn:
        return {str(row[0]) for row in conn.execute("SELECT receipt_id FROM ingestion_receipts")}


def receipt_balance(path: Path) -> str | None:
    """Each receipt is one user + one assistant message (an ``append_turn`` writer)."""
    with reading(path) as conn:
        messages = conn.execute("SELECT COUNT(*) FROM messages").fetchone()[0]
        receipts = conn.execute("SELECT COUNT(*) FROM ingestion_receipts").fetchone()[0]
    return None if messages == 2 * receipts else f"{messages} messages for {receipts} receipts"


def event_keys(path: Path) -> list[tuple[str, str, tuple[str, ...]]]:
    """(block, title, source messages) of every event card, one entry per stored card."""
    with reading(path) as conn:
        rows = conn.execute(
            "SELECT e.source_block_id, e.title, group_concat(s.message_id, ' ') "
            "FROM events e LEFT JOIN event_sources s ON s.event_id = e.id GROUP BY e.id"
        ).fetchall()
    return [(str(b), str(t), tuple(sorted(str(s or "").split()))) for b, t, s in rows]


def duplicate_events(path: Path) -> int:
    """Cards beyond the first with the same block, title and sources: derived twice."""
    return sum(count - 1 for count in Counter(event_keys(path)).values())


def job_statuses(path: Path) -> Counter[str]:
    with reading(path) as conn:
        return Counter(str(row[0]) for row in conn.execute("SELECT status FROM jobs"))
