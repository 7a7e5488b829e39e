"""``stratagate doctor --db postgresql://…``: a memory on the server checked as a file is.

A copied memory is ok; a search row removed behind the engine's back, an index made
invalid, a database never migrated and a server that does not answer are each named in
one line, with what to do; backups are said to be the server's (``pg_dump``).
"""

from pathlib import Path

import psycopg
from test_db_copy import cli, made_memory


def doctor(url: str) -> tuple[int, str, str]:
    done = cli("doctor", "--db", url)
    return done.returncode, done.stdout, done.stderr


async def test_a_copied_memory_is_ok_and_a_missing_search_row_is_found(
    tmp_path: Path, pg_url: str
) -> None:
    await made_memory(tmp_path / "m.db")
    assert cli("db", "copy", str(tmp_path / "m.db"), pg_url).returncode == 0
    code, out, err = doctor(pg_url)
    assert code == 0, err
    assert ": ok (schema" in out and "10 messages, 6 events" in out and "pg_dump" in out
    with psycopg.connect(pg_url) as conn:
        conn.execute(
            "DELETE FROM message_search "
            "WHERE fts_rowid = (SELECT MIN(fts_rowid) FROM message_search)"
        )
        conn.execute(
            "UPDATE pg_index SET indisvalid = false "
            "WHERE indexrelid = 'event_search_terms'::regclass"
        )
    code, out, _ = doctor(pg_url)
    assert code == 1
    assert "1 sealed messages without a search row" in out
    assert "invalid index event_search_terms" in out and "REINDEX" in out


def test_a_database_never_migrated_says_to_migrate(pg_url: str) -> None:
    code, out, _ = doctor(pg_url)
    assert code == 1 and "schema version 0 of" in out and "stratagate db migrate" in out


def test_a_server_that_does_not_answer_is_one_line(tmp_path: Path) -> None:
    code, out, err = doctor(f"postgresql:///memory?host={tmp_path}&port=1")
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "cannot check PostgreSQL database memory" in err
