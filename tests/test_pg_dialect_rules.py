"""Idioms of the row modules that PostgreSQL spells otherwise, checked on the private server:
each answers as SQLite does (``sqlite3`` in memory beside it)."""

import sqlite3

import psycopg

from stratagate_plugin.core.store.postgres.compat import CompatConnection
from stratagate_plugin.core.store.postgres.db import Row, row_factory
from stratagate_plugin.core.store.postgres.dialect import Schema

EMPTY_LISTS = [
    "SELECT 1 AS one WHERE 1 IN ()",
    "SELECT 1 AS one WHERE 1 NOT IN ()",
    "SELECT 1 AS one WHERE 'a' IN () OR 2 NOT IN ( )",
]


def test_an_empty_in_list_is_false_and_an_empty_not_in_list_true(pg_url: str) -> None:
    sqlite = sqlite3.connect(":memory:")
    with psycopg.connect(pg_url, autocommit=True, row_factory=row_factory) as conn:
        server = CompatConnection(conn, Schema())
        for sql in EMPTY_LISTS:
            expected = [tuple(row) for row in sqlite.execute(sql).fetchall()]
            assert [tuple(row) for row in server.execute(sql).fetchall()] == expected, sql
    sqlite.close()


def test_rows_compare_as_sqlite3_rows_do() -> None:
    names = {"a": 0, "b": 1}
    assert Row(names, (1, "x")) == Row(dict(names), [1, "x"])
    assert Row(names, (1, "x")) != Row(names, (1, "y"))
    assert Row(names, (1, "x")) != Row({"a": 0, "c": 1}, (1, "x"))
    assert Row(names, (1, "x")) != (1, "x")  # as sqlite3.Row, never equal to a tuple
    assert len({Row(names, (1, "x")), Row(names, (1, "x"))}) == 1


def test_rank_ties_come_in_key_order_as_fts5_leaves_them(pg_url: str) -> None:
    """Equal ranks (one token, documents alike): FTS5 returns them by rowid; so must the
    server, or a ``LIMIT`` keeps different rows from one run to the next."""
    sql = "SELECT f.rowid FROM message_fts f WHERE message_fts MATCH ? ORDER BY f.rank LIMIT 3"
    keys = (30, 10, 20, 5, 50)
    sqlite = sqlite3.connect(":memory:")
    sqlite.execute("CREATE VIRTUAL TABLE message_fts USING fts5(tokens)")
    with psycopg.connect(pg_url, autocommit=True, row_factory=row_factory) as conn:
        conn.execute(
            "CREATE TABLE message_search (fts_rowid bigint PRIMARY KEY, tokens text NOT NULL, "
            "terms tsvector GENERATED ALWAYS AS (to_tsvector('simple', tokens)) STORED)"
        )
        server = CompatConnection(conn, Schema())
        for key in keys:
            conn.execute("INSERT INTO message_search VALUES (%s, 'tabc tdef')", (key,))
            sqlite.execute("INSERT INTO message_fts(rowid, tokens) VALUES (?, 'tabc tdef')", (key,))
        expected = [tuple(row) for row in sqlite.execute(sql, ("tabc",)).fetchall()]
        assert [tuple(row) for row in server.execute(sql, ("tabc",)).fetchall()] == expected
    assert expected == [(5,), (10,), (20,)]
    sqlite.close()
