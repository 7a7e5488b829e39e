"""The raw channel's pre-filtered candidates ranked by the message impact index
(``store/message_rank.py``) are FTS5's ``ORDER BY rank`` exactly: the same messages in the
same order, ties included, on SQLite and, from the same index, on PostgreSQL (where
``ts_rank`` ordered them before). Run in either pass by itself: it compares a SQLite file
with its copy on the private server."""

import random
import sqlite3
from functools import partial
from pathlib import Path

from stratagate_plugin.core.config import MemoryConfig
from stratagate_plugin.core.events.documents import EVENT_RULES
from stratagate_plugin.core.memory import StrataGate
from stratagate_plugin.core.store import message_rank, raw_search
from stratagate_plugin.core.store.copy import copy_between
from stratagate_plugin.core.text.search_terms import fts_match_any, tokenize

WORDS = ["kiln", "glaze", "violin", "harbour", "lantern", "copper", "meadow"]
FILLER = ["the", "a", "we", "it", "and", "then", "so", "very"]
QUERIES = ["kiln", "kiln glaze", "violin harbour lantern", "copper meadow kiln", "lantern"]


async def made_memory(path: Path) -> None:
    """Two spaces of one-turn blocks: varied lengths and counts, and repeated texts (ties)."""
    pick = random.Random(5)
    async with await StrataGate.open(path, MemoryConfig(block_turn_size=1)) as memory:
        for number in range(40):
            words = pick.choices(WORDS, k=pick.randint(1, 4))
            text = " ".join(words + pick.choices(FILLER, k=pick.randint(0, 12)))
            if number % 7 == 0:
                text = "kiln glaze the"  # the same text again and again: equal ranks
            space = "one" if number % 3 else "two"
            await memory.blocks.append_turn(
                space, "t", user=text, assistant="Noted.", receipt_id=f"r{number}"
            )


def fts5_order(raw: sqlite3.Connection, space: str, terms: list[str], cap: int) -> list[int]:
    rows = raw.execute(
        "SELECT f.rowid FROM message_fts f JOIN messages m ON m.fts_rowid = f.rowid "
        "WHERE message_fts MATCH ? AND m.namespace = ? ORDER BY f.rank LIMIT ?",
        (fts_match_any(terms), space, cap),
    )
    return [int(row[0]) for row in rows]


def both_orders(
    raw: sqlite3.Connection, space: str, terms: list[str], cap: int
) -> tuple[list[int] | None, list[int]]:
    """(the impact index's order, FTS5's own)."""
    return message_rank.ranked_rowids(raw, space, terms, cap), fts5_order(raw, space, terms, cap)


def candidates(raw: sqlite3.Connection, terms: list[str]) -> list[tuple[str, list[str]]]:
    return [
        (match.id, match.tokens) for match in raw_search.sealed_candidates(raw, "one", terms, 3)
    ]


async def test_the_index_ranks_as_fts5_does(tmp_path: Path) -> None:
    await made_memory(tmp_path / "memory.db")
    async with await StrataGate.open(tmp_path / "memory.db") as memory:
        for query in QUERIES:
            terms = tokenize(query)
            for space in ("one", "two"):
                for cap in (1, 3, 5, 100):
                    ranked, expected = await memory.db.read(
                        partial(both_orders, space=space, terms=terms, cap=cap)
                    )
                    assert ranked == expected, (query, space, cap)
                    assert expected or query == "violin harbour lantern"


async def test_postgresql_finds_the_candidates_sqlite_finds(tmp_path: Path, pg_url: str) -> None:
    await made_memory(tmp_path / "memory.db")
    await copy_between(str(tmp_path / "memory.db"), pg_url, EVENT_RULES)
    found = []
    for where in (tmp_path / "memory.db", pg_url):
        async with await StrataGate.open(where) as memory:
            asked = [
                await memory.db.read(partial(candidates, terms=tokenize(query)))
                for query in QUERIES
            ]
            found.append(asked)
    assert found[0] == found[1] and all(found[0])
