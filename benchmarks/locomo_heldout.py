"""Leave-one-conversation-out estimate of ``retrieve()`` recall@10 on unseen conversations.

    .venv/bin/python benchmarks/locomo_heldout.py \
        --data ../shared/locomo/locomo-dev.json --out /tmp/locomo-heldout.json

The raw channel's weights were chosen on the dev conversations, so the in-sample recall
that ``stratagate bench locomo`` prints overstates what a new conversation gets. This
ingests and derives every conversation once (as the bench does: one thread per session,
offline model), ranks every question of categories 1-4 under each point of a grid of
raw-channel weights (speaker vote × predecessor expansion), then, for each conversation,
picks the point with the best recall@10 on the other conversations and scores that point
on the held-out one. It prints, per conversation, the shipped weights' in-sample recall@10,
the held-out recall@10 and the point picked, then the question-weighted totals, and
writes them as JSON. Only the questions' evidence is read, after ranking. Lines carry their
shared image's caption as the bench's do (``--no-captions`` for the text alone).

With three conversations this is a coarse estimate (each fold picks from two); it measures
the weight-picking only, not the choices made while designing the method.
"""

import argparse
import asyncio
import json
import tempfile
from collections.abc import Sequence
from dataclasses import replace
from itertools import product
from pathlib import Path
from typing import Any

from stratagate_plugin.bench.locomo import (
    BLOCK_TURN_SIZE,
    CATEGORIES,
    evidence_ids,
    ingest,
    question_scores,
    sessions_of,
)
from stratagate_plugin.core.config import MemoryConfig
from stratagate_plugin.core.llm.offline.model import OfflineModel
from stratagate_plugin.core.memory import StrataGate
from stratagate_plugin.core.retrieval.fused import FusionConfig
from stratagate_plugin.core.retrieval.raw_channel import RAW_CHANNEL

SPEAKER_WEIGHTS = (0.0, 0.35, 0.5, 0.7, 1.0)
EXPANSION_WEIGHTS = (0.0, 0.3, 0.5)
Point = tuple[float, float]


def scored_questions(sample: dict[str, Any]) -> list[tuple[int, list[str]]]:
    """(QA index, evidence) of the questions recall is measured on: categories 1-4."""
    rows = []
    for index, qa in enumerate(sample["qa"]):
        evidence = evidence_ids(qa)
        if evidence and CATEGORIES.get(int(qa.get("category", 0))) != "adversarial":
            rows.append((index, evidence))
    return rows


async def recalls_by_point(
    sg: StrataGate, sample: dict[str, Any], dia_of: dict[str, str], points: Sequence[Point]
) -> dict[Point, list[float]]:
    """Per grid point, each measured question's recall@10 in this conversation."""
    space = str(sample["sample_id"])
    questions = scored_questions(sample)
    recalls: dict[Point, list[float]] = {}
    for speaker, expansion in points:
        raw = replace(RAW_CHANNEL, speaker_weight=speaker, expansion_weight=expansion)
        config = FusionConfig(raw_channel=raw)
        for index, evidence in questions:
            hits = await sg.retrieval.retrieve(
                space, str(sample["qa"][index]["question"]), 20, config
            )
            top = [dia_of[h.message_id] for h in hits if h.message_id in dia_of]
            scores = question_scores(evidence, top)
            assert scores is not None  # scored_questions keeps questions with evidence only
            recalls.setdefault((speaker, expansion), []).append(scores["r@10"])
    return recalls


def held_out(per_sample: dict[str, dict[Point, list[float]]], shipped: Point) -> dict[str, Any]:
    """Each conversation scored at the point best on the others; totals weighted by questions."""
    rows = {}
    for name, recalls in per_sample.items():
        others = [r for other, r in per_sample.items() if other != name]
        picked = max(
            recalls, key=lambda p: (_mean([x for r in others for x in r[p]]), p == shipped)
        )
        rows[name] = {
            "questions": len(recalls[shipped]),
            "in_sample": round(_mean(recalls[shipped]), 4),
            "held_out": round(_mean(recalls[picked]), 4),
            "picked": {"speaker_weight": picked[0], "expansion_weight": picked[1]},
        }
    total = sum(row["questions"] for row in rows.values())
    return {
        "conversations": rows,
        "in_sample": round(sum(r["in_sample"] * r["questions"] for r in rows.values()) / total, 4),
        "held_out": round(sum(r["held_out"] * r["questions"] for r in rows.values()) / total, 4),
    }


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


async def run(data: Path, points: Sequence[Point], captions: bool = True) -> dict[str, Any]:
    samples: list[dict[str, Any]] = json.loads(data.read_text(encoding="utf-8"))
    per_sample = {}
    with tempfile.TemporaryDirectory() as scratch:
        config = MemoryConfig(block_turn_size=BLOCK_TURN_SIZE)
        async with await StrataGate.open(Path(scratch) / "db", config, OfflineModel()) as sg:
            for sample in samples:
                space = str(sample["sample_id"])
                sessions = sessions_of(sample["conversation"], captions)
                dia_of = await ingest(sg, space, sessions)
                await sg.derivation.process_pending()
                per_sample[space] = await recalls_by_point(sg, sample, dia_of, points)
    return held_out(per_sample, (RAW_CHANNEL.speaker_weight, RAW_CHANNEL.expansion_weight))


def format_report(report: dict[str, Any]) -> str:
    lines = ["conversation | questions | in-sample r@10 | held-out r@10 | picked (speaker, exp.)"]
    for name, row in report["conversations"].items():
        picked = row["picked"]
        lines.append(
            f"{name} | {row['questions']} | {row['in_sample']:.3f} | {row['held_out']:.3f} | "
            f"({picked['speaker_weight']}, {picked['expansion_weight']})"
        )
    lines.append(f"all | | {report['in_sample']:.3f} | {report['held_out']:.3f} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=Path("../shared/locomo/locomo-dev.json"))
    parser.add_argument("--out", type=Path, help="write the report as JSON here")
    parser.add_argument(
        "--quick",
        action="store_true",
        help="two points only: no votes, and the shipped weights (a smoke run)",
    )
    parser.add_argument(
        "--captions",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="record a shared image's caption with its line, as the bench does (default)",
    )
    args = parser.parse_args()
    shipped = (RAW_CHANNEL.speaker_weight, RAW_CHANNEL.expansion_weight)
    grid = (
        [(0.0, 0.0), shipped] if args.quick else list(product(SPEAKER_WEIGHTS, EXPANSION_WEIGHTS))
    )
    report = asyncio.run(run(args.data, sorted(set(grid) | {shipped}), args.captions))
    print(format_report(report))
    print(json.dumps(report))
    if args.out:
        args.out.write_text(json.dumps(report, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
