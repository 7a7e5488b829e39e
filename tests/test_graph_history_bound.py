"""A view's read holds every current statement of a node and only its ``history`` newest
replaced ones (``graph_records._bounded``): read plainly while no node has more than that,
through the window query when one does; both give what the window alone gave."""

import sqlite3

import pytest

from stratagate_plugin.core.store import graph_records
from stratagate_plugin.core.store.migrations import migrate
from stratagate_plugin.core.store.search_index import register_functions

AT = "2025-01-01T00:00:{:02d}+00:00"


def graph_file(replaced: int, current: int) -> sqlite3.Connection:
    raw = sqlite3.connect(":memory:", isolation_level=None)
    raw.row_factory = sqlite3.Row
    register_functions(raw)
    migrate(raw)
    for node_id, name in (("n1", "Ana"), ("n2", "Rome")):
        raw.execute(
            "INSERT INTO graph_nodes(id, namespace, name, type, name_key, created_at, "
            "updated_at) VALUES (?, 's', ?, 'person', ?, ?, ?)",
            (node_id, name, name.lower(), AT.format(0), AT.format(0)),
        )
    for i in range(replaced + current):
        status, gone = ("superseded", AT.format(59)) if i < replaced else ("active", None)
        learned = AT.format(i % 7)  # ties in learned_at, as a batch writes them
        raw.execute(
            "INSERT INTO graph_facts(id, node_id, key, value_json, status, learned_at, "
            "superseded_at) VALUES (?, 'n1', 'city', '\"Rome\"', ?, ?, ?)",
            (f"f{i:03d}", status, learned, gone),
        )
        raw.execute(
            "INSERT INTO graph_edges(id, namespace, from_node_id, to_node_id, relation, "
            "status, learned_at, superseded_at) VALUES (?, 's', 'n1', 'n2', 'lives_in', ?, ?, ?)",
            (f"e{i:03d}", status, learned, gone),
        )
    return raw


def window_only(raw: sqlite3.Connection, table: str, ends: tuple[str, ...], history: int) -> list:
    rows = graph_records._newest_rows(raw, table, ends, ["n1", "n2"], history, None)
    return sorted(rows.values(), key=lambda row: (row["learned_at"], row["id"]))


@pytest.mark.parametrize("replaced", [0, 3, 4, 9])
def test_the_bounded_read_equals_the_window_query(replaced: int) -> None:
    raw = graph_file(replaced, current=2)
    for table, ends in (
        ("graph_facts", ("node_id",)),
        ("graph_edges", ("from_node_id", "to_node_id")),
    ):
        read = graph_records._bounded(raw, table, ends, ["n1", "n2"], 4, None)
        assert [row["id"] for row in read] == [
            row["id"] for row in window_only(raw, table, ends, 4)
        ]
        kept = [row for row in read if row["status"] == "superseded"]
        assert len(kept) == min(replaced, 4) and len(read) == len(kept) + 2
