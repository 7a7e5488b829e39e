"""``db copy``: a whole memory from SQLite to PostgreSQL and back, losslessly.

A memory with turns in two spaces (English and Chinese), derived blocks, events, graph,
topics and a purge is copied to the private PostgreSQL server and from there to a second
file: every table of the second file equals the first's, row for row, ids and times and
search text included, the engine opened on the copy answers the same searches, and its
next ids do not collide. A destination that already holds a memory is refused whole.
"""

import sqlite3
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest
from test_event_term_index import stored_and_recomputed

from stratagate_plugin.core.config import MemoryConfig
from stratagate_plugin.core.errors import InvalidInput, NotFound
from stratagate_plugin.core.events.documents import EVENT_RULES
from stratagate_plugin.core.memory import StrataGate
from stratagate_plugin.core.store.copy import copy_between
from stratagate_plugin.core.text.search_terms import fts_document

TURNS = [
    ("en", "I moved the kiln firing to Friday. Ana visits Rome on May 3."),
    ("en", "My sister Lena works as a nurse in Porto; she loves tide pools."),
    ("en", "Actually the kiln firing is on Saturday now, not Friday."),
    ("zh", "我下个月去杭州出差，顺便看望外婆。"),
    ("zh", "我的猫叫豆豆，它三岁了，喜欢晒太阳。"),
]


async def made_memory(path: Path) -> None:
    async with await StrataGate.open(path, MemoryConfig(block_turn_size=1)) as memory:
        for number, (space, text) in enumerate(TURNS):
            await memory.blocks.append_turn(
                space, "t", user=text, assistant="Noted.", receipt_id=f"r{number}"
            )
        await memory.derivation.process_pending()
        await memory.derivation.process_pending()


def dump(path: Path) -> dict[str, list[tuple[object, ...]]]:
    """Every table's rows (FTS5's through its own table, with rowids), sorted."""
    raw = sqlite3.connect(path)
    names = [
        n
        for (n,) in raw.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        if n != "schema_migrations" and not n.startswith(("sqlite_", "message_fts_", "event_fts_"))
    ]
    tables = {}
    for name in names:
        rows = raw.execute(f'SELECT rowid, * FROM "{name}"').fetchall() if _rowid(raw, name) else []
        tables[name] = sorted(rows or raw.execute(f'SELECT * FROM "{name}"').fetchall(), key=repr)
    raw.close()
    return tables


def _rowid(raw: sqlite3.Connection, name: str) -> bool:
    try:
        raw.execute(f'SELECT rowid FROM "{name}" LIMIT 0')
    except sqlite3.OperationalError:
        return False
    return True


async def test_a_memory_goes_to_postgresql_and_back_unchanged(tmp_path: Path, pg_url: str) -> None:
    first, second = tmp_path / "first.db", tmp_path / "second.db"
    await made_memory(first)
    before = dump(first)
    assert before["events"] and before["message_fts"] and before["graph_nodes"]

    there = await copy_between(str(first), pg_url, EVENT_RULES)
    back = await copy_between(pg_url, str(second), EVENT_RULES)

    assert there.mismatched == [] and back.mismatched == []
    assert there.rows["events"] == len(before["events"]) > 0
    assert there.rows["message_search"] == len(before["message_fts"])
    assert there.total == back.total
    assert dump(second) == before
    with psycopg.connect(pg_url) as conn:
        found = conn.execute(
            "SELECT fts_rowid FROM message_search WHERE terms @@ %s::tsquery",
            (fts_document("kiln"),),
        ).fetchall()
    assert found, "PostgreSQL's own full text finds the copied tokens"
    with psycopg.connect(pg_url) as conn:  # analysed: the planner knows the copied rows
        planned = conn.execute(
            "SELECT reltuples FROM pg_class WHERE relname = 'messages' AND relkind = 'r'"
        ).fetchone()
    assert planned is not None and planned[0] == len(before["messages"])


async def test_the_copy_answers_as_the_original_and_goes_on_writing(
    tmp_path: Path, pg_url: str
) -> None:
    first, second = tmp_path / "first.db", tmp_path / "second.db"
    await made_memory(first)
    await copy_between(str(first), pg_url, EVENT_RULES)
    await copy_between(pg_url, str(second), EVENT_RULES)
    answers = []
    for path in (first, pg_url, second):  # PostgreSQL ranks events as SQLite does
        async with await StrataGate.open(path) as memory:
            hits = await memory.events.search("en", "kiln firing Saturday", track_retrieval=False)
            raw = await memory.retrieval.search_raw("zh", "杭州 外婆")
            answers.append(([(h.card.id, h.rank_score) for h in hits], [h.message.id for h in raw]))
    assert answers[0] == answers[1] == answers[2] and answers[0][0] and answers[0][1]
    async with await StrataGate.open(pg_url) as memory:  # the copied event index is whole
        stored, recomputed = await stored_and_recomputed(memory)
    assert stored == recomputed and stored["postings"]
    async with await StrataGate.open(second, MemoryConfig(block_turn_size=1)) as memory:
        await memory.blocks.append_turn(
            "en", "t", user="The kiln is fixed.", assistant="Good.", receipt_id="r9"
        )
    with psycopg.connect(pg_url) as conn:  # identities moved past the copied ids
        next_pk = conn.execute("SELECT nextval(pg_get_serial_sequence('events', 'pk'))").fetchone()
        top = conn.execute("SELECT MAX(pk) FROM events").fetchone()
    assert next_pk[0] > top[0]


async def test_a_destination_holding_a_memory_is_refused_whole(tmp_path: Path, pg_url: str) -> None:
    first = tmp_path / "first.db"
    await made_memory(first)
    await copy_between(str(first), pg_url, EVENT_RULES)
    with psycopg.connect(pg_url) as conn:
        held = conn.execute("SELECT COUNT(*) FROM messages").fetchone()[0]
    with pytest.raises(InvalidInput, match="already holds a memory"):
        await copy_between(str(first), pg_url, EVENT_RULES)
    with psycopg.connect(pg_url) as conn:
        assert conn.execute("SELECT COUNT(*) FROM messages").fetchone()[0] == held


async def test_a_missing_source_or_the_same_database_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(NotFound, match="no memory at"):
        await copy_between(str(tmp_path / "none.db"), str(tmp_path / "out.db"))
    with pytest.raises(InvalidInput, match="the same database"):
        await copy_between(str(tmp_path / "a.db"), str(tmp_path / "a.db"))
    assert not (tmp_path / "out.db").exists()


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "stratagate_plugin.cli.main", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=120)


async def test_db_commands_migrate_and_copy_through_the_cli(tmp_path: Path, pg_url: str) -> None:
    first, second = tmp_path / "first.db", tmp_path / "second.db"
    await made_memory(first)
    migrated = cli("db", "migrate", pg_url)
    assert migrated.returncode == 0, migrated.stderr
    assert "PostgreSQL database" in migrated.stdout and "this version's schema" in migrated.stdout
    there = cli("db", "copy", str(first), pg_url)
    assert there.returncode == 0, there.stderr
    assert "every table checked equal" in there.stdout and pg_url not in there.stdout
    again = cli("db", "copy", str(first), pg_url)
    assert again.returncode == 2 and "already holds a memory" in again.stderr
    assert again.stderr.count("\n") == 1 and "Traceback" not in again.stderr
    back = cli("db", "copy", pg_url, str(second))
    assert back.returncode == 0, back.stderr
    assert dump(second) == dump(first)


async def test_a_nul_left_in_an_older_sqlite_file_stops_the_copy_in_one_line(
    tmp_path: Path, pg_url: str
) -> None:
    """Text written before NUL became U+FFFD on entry: PostgreSQL cannot hold it, so the
    copy stops whole, naming the table, and the server keeps no half memory."""
    first = tmp_path / "first.db"
    await made_memory(first)
    with sqlite3.connect(first) as raw:
        raw.execute("UPDATE messages SET content = ? WHERE pk = 1", ("gate\x00code",))
    done = cli("db", "copy", str(first), pg_url)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.count("\n") == 1 and "messages" in done.stderr and "NUL" in done.stderr
    with psycopg.connect(pg_url) as conn:
        assert conn.execute("SELECT count(*) FROM messages").fetchone() == (0,)
