"""Recording throughput: StrataGate ``append_turn`` vs a plain sqlite3 loop, same run.

    .venv/bin/python benchmarks/ingest.py [--turns 20000] [--threads 50] [--rounds 3] [--json OUT]

Both write into fresh files in WAL mode, one commit per turn, into the same messages table
(same columns and indexes) and the same FTS5 index (documents tokenised in the loop, as
maintaining that index requires). StrataGate also checks receipts, keeps counters, hops
to its database thread, and seals 6-turn blocks (L4/L3 computed) as it goes. Where the two
differ by design: StrataGate adds a block's messages to the FTS5 index when it seals the
block (readers search sealed messages only), and its WAL checkpoints run on a separate
thread; the plain loop indexes every turn and checkpoints inside its commits (SQLite's
default). All turns of a round are sealed and indexed by the end of StrataGate's run except
each thread's open tail.
"""

import argparse
import asyncio
import json
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path

from stratagate_plugin.core.config import MemoryConfig
from stratagate_plugin.core.memory import StrataGate
from stratagate_plugin.core.store.migrations import migrate
from stratagate_plugin.core.store.search_index import register_functions
from stratagate_plugin.core.text.search_terms import fts_document


def make_turns(count: int, threads: int) -> list[tuple[str, str, str]]:
    return [
        (
            f"thread-{i % threads}",
            f"Turn {i}: can you check the order #{i * 7} for the glaze supplier in Leeds?",
            f"Order #{i * 7} ships on Friday; the supplier confirmed {i % 13} boxes.",
        )
        for i in range(count)
    ]


def plain_sqlite_rate(path: Path, turns: list[tuple[str, str, str]]) -> float:
    """The floor: the same message rows and FTS5 documents, nothing else, one commit a turn."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    register_functions(conn)
    migrate(conn)  # the same messages table, indexes and FTS5 table as StrataGate's
    started = time.perf_counter()
    for index, (thread, user, reply) in enumerate(turns):
        conn.execute("BEGIN")
        for offset, (role, content) in enumerate((("user", user), ("assistant", reply))):
            cursor = conn.execute(
                "INSERT INTO messages(id, namespace, thread_id, position, turn, namespace_turn, "
                "role, content, created_at) VALUES (?, 'bench', ?, ?, ?, ?, ?, ?, "
                "'2025-01-01T00:00:00+00:00')",
                (f"m{index}-{offset}", thread, index * 2 + offset, index, index, role, content),
            )
            conn.execute(
                "INSERT INTO message_fts(rowid, tokens) VALUES (?, ?)",
                (cursor.lastrowid, fts_document(content)),
            )
        conn.execute("COMMIT")
    elapsed = time.perf_counter() - started
    conn.close()
    return len(turns) / elapsed


async def stratagate_rate(path: Path, turns: list[tuple[str, str, str]]) -> tuple[float, int]:
    memory = await StrataGate.open(path, MemoryConfig(block_turn_size=6))
    started = time.perf_counter()
    for index, (thread, user, reply) in enumerate(turns):
        await memory.blocks.append_turn(
            "bench", thread, user=user, assistant=reply, receipt_id=f"bench:{index}"
        )
    elapsed = time.perf_counter() - started
    blocks = len(await memory.blocks.views("bench")) if len(turns) <= 2000 else -1
    await memory.close()
    return len(turns) / elapsed, blocks


def one_round(folder: Path, turns: list[tuple[str, str, str]], index: int) -> dict[str, float]:
    """Both writers on fresh files, back to back, so they share the machine's mood."""
    baseline = plain_sqlite_rate(folder / f"plain-{index}.db", turns)
    ours, _ = asyncio.run(stratagate_rate(folder / f"stratagate-{index}.db", turns))
    with sqlite3.connect(folder / f"stratagate-{index}.db") as conn:
        sealed = conn.execute("SELECT COUNT(*) FROM blocks").fetchone()[0]
    return {"plain": baseline, "stratagate": ours, "ratio": ours / baseline, "sealed": sealed}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=20_000)
    parser.add_argument("--threads", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=3, help="median over this many rounds")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    turns = make_turns(args.turns, args.threads)
    with tempfile.TemporaryDirectory() as folder:
        rounds = [one_round(Path(folder), turns, i) for i in range(args.rounds)]
    print(f"{'round':<8}{'plain turns/s':>16}{'StrataGate turns/s':>22}{'ratio':>8}")
    for i, r in enumerate(rounds, 1):
        print(f"{i:<8}{r['plain']:>16.0f}{r['stratagate']:>22.0f}{r['ratio']:>8.2f}")
    median = statistics.median(r["ratio"] for r in rounds)
    print(
        f"median ratio (StrataGate / plain): {median:.2f}  (aim ≥ 0.5); "
        f"blocks sealed per round: {rounds[0]['sealed']}"
    )
    result = {
        "turns": args.turns,
        "threads": args.threads,
        "rounds": rounds,
        "median_ratio": median,
    }
    print(json.dumps(result))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
