"""Purge on PostgreSQL keeps SQLite's promise in the server's terms: once the rows are
erased and the tables compacted (``VACUUM (FULL)``), the words are in no row, no search
row, and no byte of the files of the database's relations in the server's data directory
(read here straight from the test cluster's ``data`` dir, not through the engine)."""

from collections.abc import AsyncIterator
from pathlib import Path

import psycopg
import pytest
from pg_cluster import Cluster

from stratagate_plugin.core.clock import utc_now
from stratagate_plugin.core.config import MemoryConfig
from stratagate_plugin.core.curation.actions import PURGE_RULES
from stratagate_plugin.core.memory import StrataGate
from stratagate_plugin.core.purge.storage import ReceiptDraft, TextPurgePlan
from stratagate_plugin.core.purge.words import Needles
from stratagate_plugin.core.store.postgres.purge import PostgresPurgeStorage
from stratagate_plugin.core.topics.sync import sync_space

SECRET = "80417263"
_FILES = (
    "SELECT pg_relation_filepath(c.oid) FROM pg_class c JOIN pg_namespace n ON n.oid = "
    "c.relnamespace WHERE n.nspname IN (current_schema(), 'pg_toast') AND c.relkind IN "
    "('r', 'i', 't') AND pg_relation_filepath(c.oid) IS NOT NULL"
)


@pytest.fixture
async def engine(pg_url: str) -> AsyncIterator[StrataGate]:
    memory = await StrataGate.open(pg_url, MemoryConfig(block_turn_size=2))
    yield memory
    await memory.close()


def _draft(plan: TextPurgePlan, erased: dict[str, int]) -> ReceiptDraft:
    return ReceiptDraft("ns", "text", "user", {"hashes": plan.hashes, "counts": erased})


def hits_in_data_dir(cluster: Cluster, url: str) -> int:
    """Occurrences of the secret in the files of this database's relations (tables, TOAST,
    indexes), read from the cluster's data dir."""
    with psycopg.connect(url) as conn:
        paths = [cluster.data / row[0] for row in conn.execute(_FILES)]
    return sum(_hits(path) for path in paths)


def _hits(path: Path) -> int:
    found = 0
    for segment in [path, *path.parent.glob(f"{path.name}.[0-9]*")]:
        if segment.exists():
            found += segment.read_bytes().count(SECRET.encode())
    return found


async def test_pg_purge_leaves_the_words_in_no_row_and_no_relation_file(
    engine: StrataGate, pg_cluster: Cluster, pg_url: str
) -> None:
    for turn in range(6):
        await engine.blocks.append_turn("ns", "t", user=f"My locker code is {SECRET} ({turn}).")
    await engine.derivation.process_pending()
    store = engine.storage.purge
    assert isinstance(store, PostgresPurgeStorage)
    words = Needles([SECRET])
    assert await store.leftovers(words)  # the check sees the words where they are
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("CHECKPOINT")  # the pages on disk, as a running server would have
    assert hits_in_data_dir(pg_cluster, pg_url) > 0
    await store.erase(words, utc_now(), _draft, PURGE_RULES, sync_space)
    assert await store.leftovers(words) == {}
    assert await store.file_holds(words)  # dead row versions keep the old text
    await store.compact()
    await store.checkpoint()
    assert hits_in_data_dir(pg_cluster, pg_url) == 0
    scanned = await store.scan(words)
    assert scanned and not any(scanned.values())  # the engine read the files, found none
    assert await store.file_holds(words) is False


async def test_pg_purge_through_the_engine_compacts_and_finds_nothing_left(
    engine: StrataGate,
) -> None:
    await engine.blocks.append_turn("ns", "t", user=f"The alarm code is {SECRET}.")
    outcome = await engine.purge.words(Needles([SECRET]))
    assert outcome.erased["messages"] == 1 and outcome.vacuumed and outcome.left == {}
    assert not any((await engine.purge.check(Needles([SECRET]))).values())
