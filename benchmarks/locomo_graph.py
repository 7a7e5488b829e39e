"""LoCoMo checks of the graph and the topic catalog after derivation (issue #16 "Done means").

    .venv/bin/python benchmarks/locomo_graph.py --data ../shared/locomo/locomo-dev.json \
        --data ../shared/locomo/locomo-dev-zh.json --json /tmp/locomo-graph.json

Each conversation is ingested as ``stratagate bench locomo`` does (one thread a session,
sealed at its end, 6-turn blocks, offline model), then derivation runs until nothing is
due: summaries, events, graph projection and topic jobs. The topic catalog's historical
budget (2 batches per 10 minutes, spec §5.3) is lifted for the run (``budget.CALLS``) so
the catalog is complete at once; nothing else changes. Per conversation: whether both
speakers are person nodes; the share of current facts and edges citing at least one active
event (must be 100%); the injected directory's token estimate (≤ 400); and recall@10 of
the evidence for the fused ranking (``retrieve``, categories 1-4). The graph is not a
channel of the fused ranking (automatic recall alone uses it, up to 4 nodes), so recall@10
is measured with the graph in place and again after every graph row of the space (and the
node ids written back to its events) is deleted from the scratch database: the two must
agree. ``--limit N`` runs the first N
conversations of each file.
"""

import argparse
import asyncio
import json
import sqlite3
import tempfile
from pathlib import Path
from typing import Any

from stratagate_plugin.bench.locomo import (
    BLOCK_TURN_SIZE,
    evidence_ids,
    ingest,
    load_samples,
    question_scores,
    sessions_of,
)
from stratagate_plugin.core.config import MemoryConfig
from stratagate_plugin.core.graph.resolution import normalise_key
from stratagate_plugin.core.llm.offline.model import OfflineModel
from stratagate_plugin.core.memory import StrataGate
from stratagate_plugin.core.text.token_budget import estimate_tokens
from stratagate_plugin.core.topics import budget

CURRENT = "status IN ('active', 'disputed') AND superseded_at IS NULL"
DIRECTORY_BUDGET = 400


async def derive_all(sg: StrataGate) -> dict[str, int]:
    """process_pending until a pass runs nothing (block, graph nor topic jobs)."""
    totals = {"jobs": 0, "graph_jobs": 0, "topic_jobs": 0, "failed": 0}
    while True:
        report = await sg.process_pending()
        topics = report.topics.ran if report.topics else 0
        totals["jobs"] += report.ran
        totals["graph_jobs"] += report.graph_ran
        totals["topic_jobs"] += topics
        totals["failed"] += report.failed + report.graph_failed
        totals["failed"] += report.topics.failed if report.topics else 0
        if report.ran + report.graph_ran + topics == 0:
            return totals


def graph_counts(raw: sqlite3.Connection, namespace: str) -> dict[str, Any]:
    """Person node names; current facts and edges, and how many cite an active event."""
    people = [
        r[0]
        for r in raw.execute(
            "SELECT name FROM graph_nodes WHERE namespace = ? AND type = 'person'", (namespace,)
        )
    ]
    sourced = (
        "EXISTS (SELECT 1 FROM graph_sources s JOIN events e ON e.id = s.event_id WHERE "
        "s.record_kind = ? AND s.record_id = x.id AND e.status = 'active')"
    )
    counts: dict[str, Any] = {"people": people}
    for kind, table, owner in (
        ("fact", "graph_facts", "x.node_id IN (SELECT id FROM graph_nodes WHERE namespace = ?)"),
        ("edge", "graph_edges", "x.namespace = ?"),
    ):
        row = raw.execute(
            f"SELECT COUNT(*), SUM({sourced}) FROM {table} x WHERE {owner} AND x.{CURRENT}",
            (kind, namespace),
        ).fetchone()
        counts[f"{kind}s"], counts[f"{kind}s_sourced"] = row[0], row[1] or 0
    counts["nodes"] = raw.execute(
        "SELECT COUNT(*) FROM graph_nodes WHERE namespace = ?", (namespace,)
    ).fetchone()[0]
    counts["topics"] = raw.execute(
        "SELECT COUNT(*) FROM topics WHERE namespace = ?", (namespace,)
    ).fetchone()[0]
    return counts


async def recall_at(
    sg: StrataGate, sample: dict[str, Any], dia_of: dict[str, str], k: int
) -> tuple[float, int]:
    """Mean recall@10 of the fused ranking over categories 1-4, and the question count."""
    namespace, scores = str(sample["sample_id"]), []
    for qa in sample["qa"]:
        if int(qa.get("category", 0)) == 5:  # adversarial: not in "all (1-4)"
            continue
        hits = await sg.retrieve(namespace, str(qa["question"]), k)
        top = [dia_of[h.message_id] for h in hits if h.message_id in dia_of][:k]
        if (score := question_scores(evidence_ids(qa), top)) is not None:
            scores.append(score["r@10"])
    return round(sum(scores) / max(len(scores), 1), 4), len(scores)


def drop_graph(raw: sqlite3.Connection, namespace: str) -> None:
    """The "without graph" arm (scratch database only): every graph row of the space and
    the node ids written back to its events are removed before ranking again."""
    nodes = "(SELECT id FROM graph_nodes WHERE namespace = ?)"
    for table, where in (
        ("graph_sources", f"record_kind = 'node' AND record_id IN {nodes}"),
        ("graph_sources", "record_kind = 'fact' AND record_id IN (SELECT id FROM graph_facts "
         f"WHERE node_id IN {nodes})"),
        ("graph_sources", "record_kind = 'edge' AND record_id IN (SELECT id FROM graph_edges "
         "WHERE namespace = ?)"),
        ("graph_facts", f"node_id IN {nodes}"),
        ("graph_edges", "namespace = ?"),
        ("graph_terms", "namespace = ?"),
        ("graph_aliases", "namespace = ?"),
        ("graph_duplicates", "namespace = ?"),
        ("graph_nodes", "namespace = ?"),
    ):  # fmt: skip
        raw.execute(f"DELETE FROM {table} WHERE {where}", (namespace,))
    raw.execute(
        "UPDATE events SET temporal_json = json_remove(temporal_json, '$.participant_node_ids') "
        "WHERE namespace = ?",
        (namespace,),
    )


async def check_sample(sg: StrataGate, sample: dict[str, Any], k: int) -> dict[str, Any]:
    namespace = str(sample["sample_id"])
    conversation = sample["conversation"]
    dia_of = await ingest(sg, namespace, sessions_of(conversation))
    derived = await derive_all(sg)
    counts = await sg.db.read(lambda raw: graph_counts(raw, namespace))
    keys = {normalise_key(name) for name in counts["people"]}
    speakers = [str(conversation["speaker_a"]), str(conversation["speaker_b"])]
    directory = await sg.memory_directory(namespace)
    with_graph = await recall_at(sg, sample, dia_of, k)
    await sg.db.write(lambda raw: drop_graph(raw, namespace))
    without_graph = await recall_at(sg, sample, dia_of, k)
    share = {
        kind: counts[f"{kind}s_sourced"] / counts[f"{kind}s"] if counts[f"{kind}s"] else 1.0
        for kind in ("fact", "edge")
    }
    return {
        "sample": namespace,
        "speakers": speakers,
        "speakers_are_people": all(normalise_key(s) in keys for s in speakers),
        "person_nodes": len(counts["people"]),
        "nodes": counts["nodes"],
        "current_facts": counts["facts"],
        "current_edges": counts["edges"],
        "facts_active_source": round(share["fact"], 4),
        "edges_active_source": round(share["edge"], 4),
        "topics": counts["topics"],
        "directory_tokens": estimate_tokens(directory),
        "directory_fits": estimate_tokens(directory) <= DIRECTORY_BUDGET,
        "questions": with_graph[1],
        "recall@10 with graph": with_graph[0],
        "recall@10 without graph": without_graph[0],
        "derivation": derived,
    }


async def run_file(path: Path, limit: int | None, k: int) -> list[dict[str, Any]]:
    samples = load_samples(path)[:limit]
    budget.CALLS = 10**9  # the historical topic budget, lifted for the benchmark
    with tempfile.TemporaryDirectory() as scratch:
        config = MemoryConfig(block_turn_size=BLOCK_TURN_SIZE)
        db = Path(scratch) / "locomo.db"
        async with await StrataGate.open(db, config, OfflineModel()) as sg:
            return [await check_sample(sg, sample, k) for sample in samples]


def print_table(rows: list[dict[str, Any]]) -> None:
    heads: tuple[str, ...] = (
        "file",
        "sample",
        "people ok",
        "nodes",
        "facts",
        "edges",
        "f src",
        "e src",
    )
    heads += ("topics", "dir tok", "r@10 +graph", "r@10 -graph")
    print(" | ".join(heads))
    for row in rows:
        cells: tuple[Any, ...] = (
            row["file"],
            row["sample"],
            row["speakers_are_people"],
            row["nodes"],
        )
        cells += (row["current_facts"], row["current_edges"], f"{row['facts_active_source']:.0%}")
        cells += (f"{row['edges_active_source']:.0%}", row["topics"], row["directory_tokens"])
        cells += (f"{row['recall@10 with graph']:.3f}", f"{row['recall@10 without graph']:.3f}")
        print(" | ".join(str(c) for c in cells))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", action="append", required=True, help="LoCoMo JSON (repeat)")
    parser.add_argument("--limit", type=int, default=None, help="conversations per file")
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    rows = []
    for data in args.data:
        for row in asyncio.run(run_file(Path(data), args.limit, args.k)):
            rows.append({"file": Path(data).name, **row})
    print_table(rows)
    print(json.dumps(rows, indent=2, ensure_ascii=False))
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
