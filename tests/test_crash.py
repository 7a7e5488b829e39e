"""A process killed mid-burst leaves a sound database holding every returned turn."""

import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

from stratagate_plugin.core.memory import StrataGate

WRITER = textwrap.dedent(
    """
    import asyncio, sys
    from stratagate_plugin.core.config import MemoryConfig
    from stratagate_plugin.core.memory import StrataGate

    async def main(path):
        memory = await StrataGate.open(path, MemoryConfig(block_turn_size=4))
        for i in range(100_000):
            await memory.blocks.append_turn(
                "ns", f"t{i % 5}", user=f"burst message {i} " * 20, assistant=f"reply {i}",
                receipt_id=f"burst:{i}",
            )
            print(f"burst:{i}", flush=True)

    asyncio.run(main(sys.argv[1]))
    """
)


def run_and_kill(db_path: Path, after_lines: int) -> list[str]:
    with subprocess.Popen(
        [sys.executable, "-c", WRITER, str(db_path)], stdout=subprocess.PIPE, text=True
    ) as child:
        assert child.stdout is not None
        returned = []
        for line in child.stdout:
            returned.append(line.strip())
            if len(returned) >= after_lines:
                break
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
        returned += [line.strip() for line in child.stdout if line.strip()]
    return returned


async def test_sigkill_mid_burst_keeps_every_returned_turn(db_path: Path) -> None:
    returned = run_and_kill(db_path, after_lines=300)
    conn = sqlite3.connect(db_path)
    if isinstance(conn, sqlite3.Connection):  # SQLite's file check; a server keeps its pages
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    stored = {row[0] for row in conn.execute("SELECT receipt_id FROM ingestion_receipts")}
    assert set(returned) <= stored
    orphans = conn.execute(
        "SELECT COUNT(*) FROM ingestion_receipts r WHERE NOT EXISTS "
        "(SELECT 1 FROM messages m WHERE m.namespace = r.namespace AND m.thread_id = r.thread_id "
        "AND m.turn = r.thread_turn)"
    ).fetchone()[0]
    assert orphans == 0
    messages = conn.execute("SELECT COUNT(*) FROM messages").fetchone()[0]
    indexed = conn.execute("SELECT COUNT(*) FROM message_fts").fetchone()[0]
    sealed = conn.execute("SELECT COUNT(*) FROM messages WHERE block_id IS NOT NULL").fetchone()
    assert messages == 2 * len(stored)
    assert indexed == sealed[0]  # the index holds sealed messages; the kill may leave open tails
    conn.close()
    async with await StrataGate.open(db_path) as memory:
        receipt = await memory.blocks.append_turn(
            "ns", "t0", user="after the crash", receipt_id="post"
        )
    assert not receipt.replayed
