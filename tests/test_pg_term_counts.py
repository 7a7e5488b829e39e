"""PostgreSQL's remembered term counts (``postgres/full_text.term_counts``).

A common term's bounded count reads ~2,000 rows, so counts are remembered per database as
SQLite remembers them per file: kept until the search table's document and token totals
change (read in the same statement, also when another process added a row), a zero always
counted afresh, and never inherited by a database made again under the same name.
"""

from collections.abc import AsyncIterator, Sequence
from typing import Any

import pytest
from pg_cluster import Cluster

from stratagate_plugin.core.config import MemoryConfig
from stratagate_plugin.core.memory import StrataGate
from stratagate_plugin.core.store import event_term_index
from stratagate_plugin.core.store.postgres.full_text import term_counts
from stratagate_plugin.core.text.search_terms import fts_encode

BUDGET = 2000


async def _open(url: str) -> StrataGate:
    return await StrataGate.open(url, MemoryConfig())


@pytest.fixture
async def memory(pg_url: str) -> AsyncIterator[StrataGate]:
    sg = await _open(pg_url)
    yield sg
    await sg.close()


async def _add(memory: StrataGate, rows: Sequence[tuple[int, list[str]]]) -> None:
    """Search rows written into ``event_search`` and the impact index, as an event's write
    leaves them (its totals moved as the unit ends)."""

    def write(raw: Any) -> None:
        for pk, tokens in rows:
            raw.raw.execute(
                "INSERT INTO event_search(event_pk, tokens) VALUES (%s, %s)",
                (pk, " ".join(fts_encode(token) for token in tokens)),
            )
            event_term_index.add(raw, pk, tokens)

    await memory.db.write(write)


async def _delete(memory: StrataGate, pk: int) -> None:
    def delete(raw: Any) -> None:
        event_term_index.remove(raw, [pk])
        raw.raw.execute("DELETE FROM event_search WHERE event_pk = %s", (pk,))

    await memory.db.write(delete)


async def _counts(memory: StrataGate, tokens: list[str]) -> dict[str, int]:
    return await memory.db.read(lambda raw: term_counts(raw, "event_fts", tokens, BUDGET))


async def test_counts_are_counted_again_when_the_table_changes(memory: StrataGate) -> None:
    await _add(memory, [(1, ["w:violin", "w:case"]), (2, ["w:violin"]), (3, ["w:park"])])
    assert await _counts(memory, ["w:violin", "w:cello"]) == {"w:violin": 2, "w:cello": 0}
    await _delete(memory, 1)  # the table's rows changed: counted again
    assert await _counts(memory, ["w:violin"]) == {"w:violin": 1}
    await _add(memory, [(4, ["w:cello", "w:violin"])])  # a new row: counted again
    assert await _counts(memory, ["w:violin", "w:cello"]) == {"w:violin": 2, "w:cello": 1}


async def test_a_zero_is_counted_afresh(memory: StrataGate) -> None:
    await _add(memory, [(5, ["w:oboe"])])
    assert await _counts(memory, ["w:harp"]) == {"w:harp": 0}
    await memory.db.write(  # the impact index gains a posting, the totals stay as they were
        lambda raw: raw.raw.execute(
            "INSERT INTO event_terms(term, pk, count, length, namespace, pool) "
            "VALUES ('w:harp', 5, 1, 1, NULL, NULL)"
        )
    )
    assert await _counts(memory, ["w:harp"]) == {"w:harp": 1}


async def test_counts_come_from_the_search_table_while_the_impact_index_is_not_current(
    memory: StrataGate,
) -> None:
    """The impact index holds the search table's terms, so either gives the same counts;
    here they differ on purpose, to show which one was read."""
    await _add(memory, [(1, ["w:violin", "w:cello"]), (2, ["w:violin", "w:cello"])])
    await memory.db.write(lambda raw: raw.raw.execute("DELETE FROM event_terms WHERE pk = 2"))
    assert await _counts(memory, ["w:violin"]) == {"w:violin": 1}  # the impact index
    key = event_term_index.VERSION_KEY
    await memory.db.write(lambda raw: raw.raw.execute("DELETE FROM meta WHERE key = %s", (key,)))
    assert await _counts(memory, ["w:cello"]) == {"w:cello": 2}  # GIN over event_search


async def test_message_counts_sum_every_space_up_to_the_budget(memory: StrataGate) -> None:
    """A message term's documents are its count in each space's impact index, summed (the
    search table is one for every space), bounded as the GIN probe was."""

    def write(raw: Any) -> None:
        for space, messages in (("one", 1500), ("two", 700), ("three", 4)):
            raw.raw.execute(
                "INSERT INTO namespaces(namespace, block_turn_size, block_decay_lambda, "
                "created_at, updated_at) VALUES (%s, 12, 0.3, '', '')",
                (space,),
            )
            raw.raw.execute(
                "INSERT INTO term_counts(namespace, term, messages, blocks) "
                "VALUES (%s, 'w:fjord', %s, 1), (%s, 'w:skerry', 2, 1)",
                (space, messages, space),
            )

    await memory.db.write(write)
    counted = await memory.db.read(
        lambda raw: term_counts(raw, "message_fts", ["w:fjord", "w:skerry", "w:cove"], BUDGET)
    )
    assert counted == {"w:fjord": BUDGET + 1, "w:skerry": 6, "w:cove": 0}


async def test_another_process_row_is_seen(pg_url: str, memory: StrataGate) -> None:
    await _add(memory, [(1, ["w:violin"])])
    assert await _counts(memory, ["w:violin"]) == {"w:violin": 1}
    other = await _open(pg_url)
    try:
        await _add(other, [(2, ["w:violin"])])
    finally:
        await other.close()
    assert await _counts(memory, ["w:violin"]) == {"w:violin": 2}


async def test_a_database_made_again_under_its_name_inherits_nothing(
    pg_cluster: Cluster,
) -> None:
    name = "test_counts_again"
    for tokens, expected in ((["w:violin", "w:violin"], 2), (["w:violin", "w:harp"], 1)):
        with pg_cluster.admin() as admin:
            admin.execute(f"DROP DATABASE IF EXISTS {name}")
            admin.execute(f"CREATE DATABASE {name}")
        memory = await _open(pg_cluster.url(name))
        try:  # the same totals (2 rows of 1 token) both times
            await _add(memory, [(1, [tokens[0]]), (2, [tokens[1]])])
            assert await _counts(memory, ["w:violin"]) == {"w:violin": expected}
        finally:
            await memory.close()
    with pg_cluster.admin() as admin:
        admin.execute(f"DROP DATABASE {name}")
