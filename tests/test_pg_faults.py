"""Faults on PostgreSQL, as ``test_crash.py`` / ``test_faults.py`` on SQLite: an app process
SIGKILLed mid-write, the server restarted mid-transaction, the connection dropped
(``pg_terminate_backend``). Nothing acknowledged is lost, nothing is stored twice, the
failing call is one ``StorageError`` line (what the CLI and the web app print; no
traceback), and the same engine works again on its next call.
"""

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any

import psycopg
import pytest
from pg_cluster import Cluster
from test_crash import run_and_kill

from stratagate_plugin.core.config import MemoryConfig
from stratagate_plugin.core.errors import StorageError
from stratagate_plugin.core.memory import StrataGate
from stratagate_plugin.core.store.postgres.compat import CompatConnection

TURNS = 12
BREAK_AT = 5  # the turn whose transaction loses its connection
_DOUBLED = (
    "SELECT count(*) FROM (SELECT namespace, thread_id, turn, role FROM messages "
    "GROUP BY namespace, thread_id, turn, role HAVING count(*) > 1) AS doubled"
)
_ORPHANS = (
    "SELECT count(*) FROM ingestion_receipts r WHERE NOT EXISTS (SELECT 1 FROM messages m "
    "WHERE m.namespace = r.namespace AND m.thread_id = r.thread_id AND m.turn = r.thread_turn)"
)


def stored(url: str) -> dict[str, Any]:
    """What the database holds, read straight from the server."""
    with psycopg.connect(url) as conn:

        def one(sql: str) -> Any:
            row = conn.execute(sql).fetchone()
            assert row is not None
            return row[0]

        return {
            "receipts": {
                row[0] for row in conn.execute("SELECT receipt_id FROM ingestion_receipts")
            },
            "messages": one("SELECT count(*) FROM messages"),
            "doubled": one(_DOUBLED),
            "orphans": one(_ORPHANS),
            "sealed": one("SELECT count(*) FROM messages WHERE block_id IS NOT NULL"),
            "indexed": one("SELECT count(*) FROM message_search"),
        }


def assert_whole(found: dict[str, Any], acknowledged: set[str]) -> None:
    assert acknowledged <= found["receipts"]  # nothing acknowledged lost
    assert found["messages"] == 2 * len(found["receipts"])  # a user and an assistant each
    assert found["doubled"] == 0 and found["orphans"] == 0  # nothing twice, none half
    assert found["indexed"] == found["sealed"]  # the index holds exactly the sealed messages


async def test_pg_sigkill_of_an_app_process_mid_burst_keeps_every_returned_turn(
    pg_url: str,
) -> None:
    returned = set(await asyncio.to_thread(run_and_kill, pg_url, 120))  # type: ignore[arg-type]
    assert len(returned) >= 120
    found = stored(pg_url)
    assert_whole(found, returned)
    async with await StrataGate.open(pg_url) as memory:  # the killed process's rows are sound
        after = await memory.blocks.append_turn(
            "ns", "t0", user="after the kill", receipt_id="post"
        )
    assert not after.replayed
    assert stored(pg_url)["messages"] == found["messages"] + 2


@pytest.fixture
async def engine(pg_url: str) -> AsyncIterator[StrataGate]:
    memory = await StrataGate.open(pg_url, MemoryConfig(block_turn_size=4))
    yield memory
    await memory.close()


def restart(cluster: Cluster, url: str) -> Callable[[psycopg.Connection[Any]], None]:
    return lambda conn: cluster.restart()


def terminate(cluster: Cluster, url: str) -> Callable[[psycopg.Connection[Any]], None]:
    def drop(conn: psycopg.Connection[Any]) -> None:
        pid = conn.execute("SELECT pg_backend_pid()").fetchone()
        with psycopg.connect(url, autocommit=True) as other:
            other.execute("SELECT pg_terminate_backend(%s)", (pid[0],))  # type: ignore[index]

    return drop


@pytest.mark.parametrize("lose", [restart, terminate], ids=["server-restart", "connection-drop"])
async def test_pg_a_turn_lost_mid_transaction_is_one_line_and_the_engine_goes_on(
    engine: StrataGate,
    pg_cluster: Cluster,
    pg_url: str,
    monkeypatch: pytest.MonkeyPatch,
    lose: Callable[[Cluster, str], Callable[[psycopg.Connection[Any]], None]],
) -> None:
    """The connection breaks right after the turn's messages were inserted, inside its
    transaction: the call fails in one line, nothing of the turn is kept, and the same
    engine records it (and the next ones) on its next calls."""
    breaks = lose(pg_cluster, pg_url)
    state = {"turn": -1, "broken": False}
    original = CompatConnection.execute

    def execute(self: CompatConnection, sql: str, params: Any = ()) -> Any:
        result = original(self, sql, params)
        inserting = sql.lstrip().startswith("INSERT INTO messages")
        if inserting and state["turn"] == BREAK_AT and not state["broken"]:
            state["broken"] = True
            breaks(self.raw)
        return result

    monkeypatch.setattr(CompatConnection, "execute", execute)
    acknowledged, errors = set(), []
    for turn in range(TURNS):
        state["turn"] = turn
        receipt = f"turn:{turn}"
        try:
            await engine.blocks.append_turn(
                "ns", f"t{turn % 3}", user=f"said {turn}", receipt_id=receipt
            )
        except StorageError as error:
            errors.append(str(error))
            continue  # not acknowledged: the harness records it again later
        acknowledged.add(receipt)
    assert len(errors) == 1 and "\n" not in errors[0]
    assert errors[0].startswith(engine.storage.db.server.name)  # type: ignore[attr-defined]
    assert "rolled back" in errors[0] or "committed is unknown" in errors[0]
    assert len(acknowledged) == TURNS - 1
    lost = f"turn:{BREAK_AT}"
    assert lost not in acknowledged
    assert lost not in stored(pg_url)["receipts"]  # rolled back whole
    retried = await engine.blocks.append_turn("ns", "t9", user="said again", receipt_id=lost)
    assert not retried.replayed
    assert_whole(stored(pg_url), acknowledged | {lost})
