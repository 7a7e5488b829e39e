"""Issue 25's probes: a purge killed at random points, and a purge while a writer appends.

Both start from one world: 24 turns in 4 threads, every 6th user message holding a secret
the agent echoes, sealed and derived (events, graph, topics), then copied into
``backups/``. Columns: ``acknowledged`` is the unrelated messages (killed purge) or the
writer's printed receipts (concurrent purge); ``lost`` those changed or missing afterwards;
``integrity_errors`` the unsound files (``db_checks``) plus every file (database, WAL,
backups) whose bytes still hold the secret once the purge was run again to completion (the
recovery a user makes: ``stratagate purge --text`` again, which says "nothing" when it is
gone); ``crashes`` a child that hung or ended in a traceback.
"""

import asyncio
import random
import shutil
import sys
import textwrap
import time
from pathlib import Path

from . import db_checks, procs
from .results import Row

SECRET = "SUA12345"
TRIALS = 6
PURGE = textwrap.dedent(
    """
    import asyncio, sys
    from stratagate_plugin.core.memory import StrataGate
    from stratagate_plugin.core.purge.words import Needles

    async def main(path, secret):
        async with await StrataGate.open(path) as memory:
            needles, plan = await memory.purge.words_plan(Needles([secret]))
            if plan.empty:
                print("nothing", flush=True)
                return
            outcome = await memory.purge.words(needles)
            print("purged", outcome.receipt.id, sorted(outcome.left), flush=True)

    asyncio.run(main(sys.argv[1], sys.argv[2]))
    """
)
WRITER = textwrap.dedent(
    """
    import asyncio, sys
    from stratagate_plugin.core.config import MemoryConfig
    from stratagate_plugin.core.memory import StrataGate

    async def main(path, count):
        async with await StrataGate.open(path, MemoryConfig(block_turn_size=4)) as memory:
            for i in range(count):
                await memory.blocks.append_turn(
                    "ns", f"w{i % 3}", user=f"writer line {i} about the garden",
                    assistant=f"ok {i}", receipt_id=f"w:{i}",
                )
                print(f"w:{i}", flush=True)

    asyncio.run(main(sys.argv[1], int(sys.argv[2])))
    """
)


def rows(folder: Path) -> list[Row]:
    world = folder / "purge-world"
    build_world(world)
    return [killed_purge(folder, world), purge_beside_a_writer(folder, world)]


def build_world(home: Path) -> None:
    """The secret said, echoed, sealed, derived, and in a backup (in this process)."""
    from stratagate_plugin.core.clock import utc_now
    from stratagate_plugin.core.config import MemoryConfig
    from stratagate_plugin.core.memory import StrataGate
    from stratagate_plugin.core.store import health

    async def build() -> None:
        path = home / "memory.db"
        async with await StrataGate.open(path, MemoryConfig(block_turn_size=4)) as memory:
            for i in range(24):
                secret = i % 6 == 0
                user = f"My plate is {SECRET}, note {i}." if secret else f"Unrelated note {i}."
                reply = f"Noted: {SECRET}." if secret else f"Noted {i}."
                await memory.blocks.append_turn("ns", f"t{i % 4}", user=user, assistant=reply)
            await memory.blocks.seal_idle_tails(utc_now())
            await memory.derivation.process_pending()
            later = utc_now().replace(year=utc_now().year + 1)
            await memory.db.read(lambda raw: health.backup(raw, path, later))

    home.mkdir(parents=True, exist_ok=True)
    asyncio.run(build())


def unrelated(path: Path) -> dict[str, str]:
    with db_checks.reading(path) as conn:
        found = conn.execute("SELECT id, content FROM messages").fetchall()
    return {str(k): str(v) for k, v in found if SECRET.lower() not in str(v).lower()}


def secret_files(home: Path) -> list[str]:
    files = [*home.glob("memory.db*"), *(home / "backups").glob("*.db")]
    return [f.name for f in files if SECRET.lower().encode() in f.read_bytes().lower()]


def killed_purge(folder: Path, world: Path) -> Row:
    row = Row("purge: SIGKILL mid-purge, then purge again", kill_points=0, acknowledged=0)
    row.lost = row.integrity_errors = row.crashes = 0
    started = time.perf_counter()
    rng = random.Random(25)
    probe = _copy(world, folder / "purge-probe")
    env = procs.child_env(probe)
    opened, ended, outcome = procs.observe(
        [sys.executable, "-c", PURGE, str(probe / "memory.db"), SECRET],
        env, probe / "memory.db-wal", timeout=120,
    )  # fmt: skip
    if outcome.crashed():
        row.add("crashes")
        row.example("crashed", outcome.excerpt(3))
    for trial in range(TRIALS):
        home = _copy(world, folder / f"purge-kill-{trial}")
        before = unrelated(home / "memory.db")
        delay = rng.uniform(0, max(0.05, ended - opened))
        args = [sys.executable, "-c", PURGE, str(home / "memory.db"), SECRET]
        killed = procs.kill_at(args, procs.child_env(home), delay, home, home / "memory.db-wal")
        row.add("kill_points", int(not killed.exited_first))
        again = procs.run(args, procs.child_env(home), timeout=120)
        if again.crashed() or again.traceback:
            row.add("crashes")
            row.example("crashed", again.excerpt(3))
        _judge(row, home, before)
        row.example("delays", round(delay, 3))
    row.seconds = time.perf_counter() - started
    return row


def purge_beside_a_writer(folder: Path, world: Path) -> Row:
    row = Row("purge: while another process appends turns", acknowledged=0)
    row.lost = row.integrity_errors = row.crashes = 0
    started = time.perf_counter()
    home = _copy(world, folder / "purge-writer")
    db = home / "memory.db"
    before = unrelated(db)
    env = procs.child_env(home)
    out = (home / "writer.out").open("wb")
    writer = procs.subprocess.Popen(
        [sys.executable, "-c", WRITER, str(db), "60"], env=env, stdout=out, stderr=out
    )
    purge = procs.run([sys.executable, "-c", PURGE, str(db), SECRET], env, timeout=120)
    writer.wait(timeout=180)
    out.close()
    if purge.crashed() or purge.traceback or writer.returncode != 0:
        row.add("crashes")
        row.example("crashed", purge.excerpt(3) + (home / "writer.out").read_text()[-300:])
    acked = [line for line in (home / "writer.out").read_text().split() if line.startswith("w:")]
    row.acknowledged = len(acked)
    stored = {c for c in unrelated(db).values()}
    row.add(
        "lost",
        sum(1 for i in range(len(acked)) if f"writer line {i} about the garden" not in stored),
    )
    _judge(row, home, before, count_acknowledged=False)
    row.seconds = time.perf_counter() - started
    return row


def _judge(row: Row, home: Path, before: dict[str, str], count_acknowledged: bool = True) -> None:
    db = home / "memory.db"
    after = unrelated(db)
    if count_acknowledged:
        row.add("acknowledged", len(before))
    changed = [key for key, text in before.items() if after.get(key) != text]
    row.add("lost", len(changed))
    problems = db_checks.problems(db)
    held = secret_files(home)
    row.add("integrity_errors", len(problems) + len(held))
    for item in [*problems, *(f"{name} still holds the secret" for name in held)]:
        row.example("integrity", item)


def _copy(world: Path, target: Path) -> Path:
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(world, target)
    return target
