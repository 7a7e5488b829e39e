"""What a worker's claim costs with the back-fill queued, against ordering the whole queue.

    PYTHONPATH=. .venv/bin/python benchmarks/job_claims.py --db /tmp/s500k.db

A claim runs inside the database's one write transaction, so every millisecond it takes is
a millisecond a turn being recorded waits. On the search-scale corpus as the engine opened
it (``search_scale.py --keep``: ~12,000 graph and ~7,600 topic back-fill jobs pending),
each claim the workers make (derivation, then graph; a topic claim, with a free projector
and with a budget that refuses historical batches) is timed inside a savepoint rolled back,
so every round claims the same job. The baseline, in the same run, is the query the claims
ran before ``jobs_pending``: every due job of the kinds ordered, the first taken (the
graph's priority read from its batch, the topic's from its batch's ``historical``). The
"space busy" row has the space's first graph batch running (another worker's): a graph claim
then finds nothing. Each row checks that both pick the same job. Medians of ``--rounds``.
"""

import argparse
import json
import sqlite3
import statistics
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path
from typing import Any

from stratagate_plugin.core.records import EXTRACTION_JOB, GRAPH_JOB, MAX_ATTEMPTS, TOPIC_JOB
from stratagate_plugin.core.store import graph_jobs, jobs, topic_jobs
from stratagate_plugin.core.store.search_index import register_functions
from stratagate_plugin.core.store.sqlite import derivation

LEASE = timedelta(minutes=1)
_DUE = jobs.due_clause("due")  # pending, or failed with a retry due
WHOLE_QUEUE = {  # the claims' reads before ``jobs_pending``: every due job ordered
    "derivation": (
        f"SELECT id FROM jobs AS due WHERE kind IN (?, ?) AND {_DUE} "
        f"ORDER BY {derivation.EXTRACTIONS_FIRST} LIMIT 1",
        derivation.DERIVATION_JOBS,
    ),
    "graph": (
        f"SELECT id FROM jobs AS due WHERE kind IN (?) AND {_DUE} ORDER BY (status = 'failed'), "
        "(SELECT -b.priority FROM graph_batches b WHERE b.id = due.target_id), created_at, id "
        "LIMIT 1",
        (GRAPH_JOB,),
    ),
    "graph, space busy": (
        f"SELECT id FROM jobs AS due WHERE kind IN (?) AND {_DUE} AND namespace NOT IN "
        "(SELECT namespace FROM jobs WHERE kind = 'graph_projection' AND status = 'running') "
        "ORDER BY (status = 'failed'), (SELECT -b.priority FROM graph_batches b "
        "WHERE b.id = due.target_id), created_at, id LIMIT 1",
        (GRAPH_JOB,),
    ),
    "topic": (
        "SELECT j.id FROM jobs j JOIN topic_batches b ON b.id = j.target_id WHERE j.kind IN (?) "
        f"AND {jobs.due_clause('j')} AND NOT EXISTS (SELECT 1 FROM jobs r WHERE r.kind = j.kind "
        "AND r.namespace = j.namespace AND r.status = 'running') "
        "ORDER BY b.historical, j.created_at, j.id LIMIT 1",
        (TOPIC_JOB,),
    ),
}


def claims(now: datetime) -> dict[str, Callable[[sqlite3.Connection], str | None]]:
    """Each claim as the workers make it; the id of the job it leased."""

    def derive(raw: sqlite3.Connection) -> str | None:
        job = jobs.claim_next(
            raw, now, derivation.DERIVATION_JOBS, "bench", LEASE,
            in_space_order=EXTRACTION_JOB, order=derivation.EXTRACTIONS_FIRST,
        )  # fmt: skip
        return None if job is None else job.id

    def graph(raw: sqlite3.Connection) -> str | None:
        job = jobs.claim_next(
            raw, now, (GRAPH_JOB,), "bench", LEASE, order=graph_jobs.CLAIM_ORDER,
            one_per_space=True,
        )  # fmt: skip
        return None if job is None else job.id

    def topic(raw: sqlite3.Connection) -> str | None:
        job = topic_jobs.claim(raw, now, "bench", LEASE, None)
        return None if job is None else job.id

    return {"derivation": derive, "graph": graph, "graph, space busy": graph, "topic": topic}


BUSY = (  # another worker projects the space's first graph batch: nothing else is due there
    "UPDATE jobs SET status = 'running', lease_expires_at = '9999-01-01T00:00:00+00:00' "
    "WHERE id = (SELECT id FROM jobs WHERE kind = 'graph_projection' AND status = 'pending' "
    "ORDER BY priority DESC, created_at, id LIMIT 1)"
)


def timed(
    raw: sqlite3.Connection, run: Callable[[], Any], rounds: int, setup: str = ""
) -> tuple[float, Any]:
    """Median ms of ``run`` in a savepoint rolled back each round (after ``setup``, in the
    same transaction), and its last answer."""
    samples, answer = [], None
    raw.execute("BEGIN")
    if setup:
        raw.execute(setup)
    for _ in range(rounds):
        raw.execute("SAVEPOINT claim")
        started = time.perf_counter()
        answer = run()
        samples.append((time.perf_counter() - started) * 1000)
        raw.execute("ROLLBACK TO claim")
    raw.execute("ROLLBACK")
    return statistics.median(samples), answer


def measure(path: Path, rounds: int) -> dict[str, dict[str, Any]]:
    raw = sqlite3.connect(path, isolation_level=None)
    raw.row_factory = sqlite3.Row
    register_functions(raw)
    now = datetime.now(UTC)
    table = {}
    for name, claim in claims(now).items():
        sql, kinds = WHOLE_QUEUE[name]
        params = [*kinds, MAX_ATTEMPTS, now.isoformat()]
        setup = BUSY if "busy" in name else ""
        whole_ms, first = timed(raw, partial(_first, raw, sql, params), rounds, setup)
        claim_ms, taken = timed(raw, partial(claim, raw), rounds, setup)
        table[name] = {
            "claim_ms": round(claim_ms, 3),
            "whole_queue_ms": round(whole_ms, 3),
            "ratio": round(whole_ms / claim_ms, 1) if claim_ms else None,
            "same_job": first == taken,
        }
    table["queued"] = dict(
        raw.execute("SELECT kind, COUNT(*) FROM jobs WHERE status = 'pending' GROUP BY kind")
    )
    raw.close()
    return table


def _first(raw: sqlite3.Connection, sql: str, params: list[Any]) -> str | None:
    row = raw.execute(sql, params).fetchone()
    return None if row is None else str(row[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", type=Path, required=True, help="a corpus the engine opened")
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    table = measure(args.db, args.rounds)
    print(f"{'claim':<20}{'claim ms':>10}{'whole queue ms':>16}{'ratio':>8}  same job")
    for name, row in table.items():
        if name != "queued":
            cells = f"{row['claim_ms']:>10}{row['whole_queue_ms']:>16}{row['ratio']:>8}"
            print(f"{name:<20}{cells}  {row['same_job']}")
    print(f"pending jobs: {table['queued']}")
    if args.json:
        args.json.write_text(json.dumps(table, indent=2))


if __name__ == "__main__":
    main()
