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
the evidence for the fused ranking (categories 1-4) with the graph channel off (weight 0,
``retrieve``'s default) and at each weight of ``GRAPH_WEIGHTS``, with a leave-one-
conversation-out estimate of choosing the weight on the other conversations. ``--limit N``
runs the first N conversations of each file; ``--no-recall`` skips the recall part.

Issue 26 adds, per conversation: node and edge counts; person nodes whose name is a
calendar word (a closed list of weekdays, months and holidays, EN and ZH), a place (the
same name typed place in any conversation of the run) or a common noun (English: the word
also occurs in lower case in the conversation); duplicate persons (one person's name a
short form of another's: a prefix, or a Chinese 小/阿/老 + part of the name); and the
chapters of the topic book with their sizes (events, sections) and pending topic jobs.
"""

import argparse
import asyncio
import json
import sqlite3
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any

from benchmarks.graph_name_checks import duplicate_people, mistyped_people
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
from stratagate_plugin.core.retrieval.fused import FUSION, fuse
from stratagate_plugin.core.text.token_budget import estimate_tokens
from stratagate_plugin.core.topics import budget

CURRENT = "status IN ('active', 'disputed') AND superseded_at IS NULL"
GRAPH_WEIGHTS = (0.0, 0.05, 0.1, 0.2, 0.4)
DIRECTORY_BUDGET = 400


async def derive_all(sg: StrataGate) -> dict[str, int]:
    """process_pending until a pass runs nothing (block, graph nor topic jobs)."""
    totals = {"jobs": 0, "graph_jobs": 0, "topic_jobs": 0, "failed": 0}
    while True:
        report = await sg.derivation.process_pending()
        topics = report.topics.ran if report.topics else 0
        totals["jobs"] += report.ran
        totals["graph_jobs"] += report.graph_ran
        totals["topic_jobs"] += topics
        totals["failed"] += report.failed + report.graph_failed
        totals["failed"] += report.topics.failed if report.topics else 0
        if report.ran + report.graph_ran + topics == 0:
            return totals


def graph_counts(raw: sqlite3.Connection, space: str) -> dict[str, Any]:
    """Person node names; current facts and edges, and how many cite an active event."""
    people = [
        r[0]
        for r in raw.execute(
            "SELECT name FROM graph_nodes WHERE namespace = ? AND type = 'person'", (space,)
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
            (kind, space),
        ).fetchone()
        counts[f"{kind}s"], counts[f"{kind}s_sourced"] = row[0], row[1] or 0
    counts["nodes"] = raw.execute(
        "SELECT COUNT(*) FROM graph_nodes WHERE namespace = ?", (space,)
    ).fetchone()[0]
    counts["topics"] = raw.execute(
        "SELECT COUNT(*) FROM topics WHERE namespace = ?", (space,)
    ).fetchone()[0]
    counts["edge_list"] = edge_list(raw, space)
    return counts


def edge_list(raw: sqlite3.Connection, space: str) -> list[str]:
    """Each current edge with the words of its first source event, to check that they
    state it ("Caroline -from-> Sweden  <- Caroline said: … my home country, Sweden")."""
    rows = raw.execute(
        "SELECT a.name, x.relation, b.name, (SELECT e.summary FROM graph_sources s JOIN events e"
        " ON e.id = s.event_id WHERE s.record_kind = 'edge' AND s.record_id = x.id"
        " ORDER BY e.id LIMIT 1) FROM graph_edges x JOIN graph_nodes a ON a.id = x.from_node_id"
        f" JOIN graph_nodes b ON b.id = x.to_node_id WHERE x.namespace = ? AND x.{CURRENT}"
        " ORDER BY a.name, x.relation, b.name",
        (space,),
    ).fetchall()
    return [f"{a} -{rel}-> {b}  <- {(said or '')[:160]}" for a, rel, b, said in rows]


async def recall_by_weight(
    sg: StrataGate, sample: dict[str, Any], dia_of: dict[str, str], k: int
) -> tuple[dict[float, float], int]:
    """Mean recall@k of the fused ranking over categories 1-4 for each graph channel weight
    (0: the channel off, which is ``retrieve``'s default), and the question count. The
    channels are ranked once per question and fused per weight (``retrieve`` is exactly
    ``fuse(channel_rankings)``)."""
    space = str(sample["sample_id"])
    scores: dict[float, list[float]] = {w: [] for w in GRAPH_WEIGHTS}
    ranked_with = replace(FUSION, graph_weight=1.0)
    for qa in sample["qa"]:
        if int(qa.get("category", 0)) == 5:  # adversarial: not in "all (1-4)"
            continue
        rankings = await sg.retrieval.channel_rankings(space, str(qa["question"]), k, ranked_with)
        for weight in GRAPH_WEIGHTS:
            hits = fuse(rankings, replace(FUSION, graph_weight=weight), k)
            top = [dia_of[h.message_id] for h in hits if h.message_id in dia_of][:k]
            if (score := question_scores(evidence_ids(qa), top)) is not None:
                scores[weight].append(score["r@10"])
    means = {w: round(sum(v) / max(len(v), 1), 4) for w, v in scores.items()}
    return means, len(scores[0.0])


def leave_one_out(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """For each conversation, the weight best on the others (mean recall@10, ties to the
    smaller weight) and its recall@10 on the one left out, beside the channel off."""
    found = []
    for index, row in enumerate(rows):
        others = [r for i, r in enumerate(rows) if i != index]
        chosen = max(
            GRAPH_WEIGHTS,
            key=lambda w: (sum(r["recall@10 by graph weight"][w] for r in others), -w),
        )
        found.append(
            {
                "file": row["file"],
                "sample": row["sample"],
                "chosen weight": chosen,
                "held-out recall@10": row["recall@10 by graph weight"][chosen],
                "recall@10 off": row["recall@10 by graph weight"][0.0],
            }
        )
    return found


def chapters_of(book: dict[str, Any]) -> list[dict[str, Any]]:
    """Each chapter's title, status, event count and section sizes."""
    return [
        {
            "title": chapter["title"],
            "status": chapter["status"],
            "events": len(chapter["eventIds"]),
            "sections": [len(section["eventIds"]) for section in chapter["sections"]],
        }
        for chapter in book["chapters"]
    ]


async def node_types(sg: StrataGate, space: str) -> dict[str, list[str]]:
    views = await sg.graph.nodes(space, limit=1000)
    found: dict[str, list[str]] = {}
    for view in views:
        found.setdefault(view.node.type, []).append(view.node.name)
    return found


def add_name_checks(rows: list[dict[str, Any]]) -> None:
    """Mistyped and duplicate persons per conversation; a place is any name typed place in
    any conversation of the run. Drops the working fields."""
    places = {n.casefold() for row in rows for n in row["node_types"].get("place", [])}
    for row in rows:
        people = row["node_types"].get("person", [])
        row["mistyped_people"] = mistyped_people(people, places, row.pop("text"))
        row["duplicate_people"] = duplicate_people(people, row["speakers"])


async def check_sample(
    sg: StrataGate, sample: dict[str, Any], k: int, recall: bool = True
) -> dict[str, Any]:
    space = str(sample["sample_id"])
    conversation = sample["conversation"]
    sessions = sessions_of(conversation)
    dia_of = await ingest(sg, space, sessions)
    derived = await derive_all(sg)
    counts = await sg.db.read(lambda raw: graph_counts(raw, space))
    keys = {normalise_key(name) for name in counts["people"]}
    speakers = [str(conversation["speaker_a"]), str(conversation["speaker_b"])]
    directory = await sg.topics.directory(space)
    book = await sg.topics.book(space)
    text = "\n".join(line.content for session in sessions for line in session.lines)
    by_weight, questions = (
        await recall_by_weight(sg, sample, dia_of, k)
        if recall
        else ({w: 0.0 for w in GRAPH_WEIGHTS}, 0)
    )
    share = {
        kind: counts[f"{kind}s_sourced"] / counts[f"{kind}s"] if counts[f"{kind}s"] else 1.0
        for kind in ("fact", "edge")
    }
    return {
        "sample": space,
        "speakers": speakers,
        "speakers_are_people": all(normalise_key(s) in keys for s in speakers),
        "person_nodes": len(counts["people"]),
        "nodes": counts["nodes"],
        "current_facts": counts["facts"],
        "current_edges": counts["edges"],
        "edges": counts["edge_list"],
        "facts_active_source": round(share["fact"], 4),
        "edges_active_source": round(share["edge"], 4),
        "topics": counts["topics"],
        "node_types": await node_types(sg, space),
        "text": text,
        "chapters": chapters_of(book),
        "pending_topic_jobs": len(book.get("pending", [])),
        "directory_tokens": estimate_tokens(directory),
        "directory_fits": estimate_tokens(directory) <= DIRECTORY_BUDGET,
        "questions": questions,
        "recall@10 by graph weight": by_weight,
        "derivation": derived,
    }


async def run_file(
    path: Path, limit: int | None, k: int, recall: bool = True
) -> list[dict[str, Any]]:
    samples = load_samples(path)[:limit]
    budget.CALLS = 10**9  # the historical topic budget, lifted for the benchmark
    with tempfile.TemporaryDirectory() as scratch:
        config = MemoryConfig(block_turn_size=BLOCK_TURN_SIZE)
        db = Path(scratch) / "locomo.db"
        async with await StrataGate.open(db, config, OfflineModel()) as sg:
            return [await check_sample(sg, sample, k, recall) for sample in samples]


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
    heads += ("topics", "dir tok", *(f"r@10 g={w}" for w in GRAPH_WEIGHTS))
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
        cells += tuple(f"{row['recall@10 by graph weight'][w]:.3f}" for w in GRAPH_WEIGHTS)
        print(" | ".join(str(c) for c in cells))


def print_names_and_chapters(rows: list[dict[str, Any]]) -> None:
    """Issue 26's table: nodes, edges, mistyped and duplicate persons, chapters."""
    print(
        "file | sample | nodes | edges | persons | mistyped persons | duplicate persons "
        "| chapters: events [sections, largest]"
    )
    for row in rows:
        mistyped = ", ".join(f"{n} ({why})" for n, why in row["mistyped_people"].items())
        duplicates = ", ".join(f"{d['short']}~{d['full']}" for d in row["duplicate_people"])
        chapters = "; ".join(
            f"{c['title']} {c['events']}"
            + (f" [{len(c['sections'])}, {max(c['sections'])}]" if c["sections"] else "")
            for c in row["chapters"]
        )
        cells: tuple[Any, ...] = (row["file"], row["sample"], row["nodes"], row["current_edges"])
        cells += (len(row["node_types"].get("person", [])), mistyped or "-", duplicates or "-")
        print(" | ".join(str(c) for c in (*cells, chapters or "-")))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", action="append", required=True, help="LoCoMo JSON (repeat)")
    parser.add_argument("--limit", type=int, default=None, help="conversations per file")
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--no-recall", action="store_true", help="skip recall@10 (faster)")
    args = parser.parse_args()
    rows = []
    for data in args.data:
        for row in asyncio.run(run_file(Path(data), args.limit, args.k, not args.no_recall)):
            rows.append({"file": Path(data).name, **row})
    add_name_checks(rows)
    print_table(rows)
    print_names_and_chapters(rows)
    held_out = leave_one_out(rows) if len(rows) > 1 and not args.no_recall else []
    for line in held_out:
        print(" | ".join(str(value) for value in line.values()))
    report = {"conversations": rows, "leave_one_out": held_out}
    print(json.dumps(report, indent=2, ensure_ascii=False))
    if args.json:
        args.json.write_text(json.dumps(report, indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
