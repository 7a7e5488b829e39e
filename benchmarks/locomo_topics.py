"""LoCoMo checks of the topic catalog (issue #26 "Topics that finish").

    PYTHONPATH=. .venv/bin/python benchmarks/locomo_topics.py \
        --data ../shared/locomo/locomo-dev.json --data ../shared/locomo/locomo-dev-zh.json

Each conversation is ingested as ``stratagate bench locomo`` does (one thread a session,
sealed at its end, 6-turn blocks, offline model) and derived by ONE ``process_pending``
call, the historical budget left as it is: with the free offline grouper the topics must
be done by then. Per conversation: the topic jobs still unfinished after that one call,
the chapters with their sizes and titles, the largest chapter and section. ``--keep DIR``
keeps each database (``DIR/<file>-<n>.db``); ``--limit N`` runs the first N per file.
"""

import argparse
import asyncio
import json
import tempfile
from pathlib import Path
from typing import Any

from stratagate_plugin.bench.locomo import BLOCK_TURN_SIZE, ingest, load_samples, sessions_of
from stratagate_plugin.core.config import MemoryConfig
from stratagate_plugin.core.llm.offline.model import OfflineModel
from stratagate_plugin.core.memory import StrataGate


async def check_sample(sg: StrataGate, sample: dict[str, Any]) -> dict[str, Any]:
    space = str(sample.get("sample_id", "conv"))
    await ingest(sg, space, sessions_of(sample["conversation"]))
    report = await sg.derivation.process_pending()  # once: the topics must finish within it
    book = await sg.topics.book(space)
    chapters = [
        {
            "title": c["title"],
            "events": c["sourceEventCount"],
            "sections": [(s["title"], len(s["eventIds"])) for s in c["sections"]],
        }
        for c in book["chapters"]
    ]
    biggest_section = max((n for c in chapters for _, n in c["sections"]), default=0)
    return {
        "conversation": space,
        "topic_jobs_run": report.topics.ran if report.topics else 0,
        "pending_after_one_process": len(book["pending"]),
        "fallback": book["fallbackEntries"],
        "chapters": chapters,
        "largest_chapter": max((c["events"] for c in chapters), default=0),
        "largest_section": biggest_section,
    }


async def run_file(path: Path, limit: int | None, keep: Path | None) -> list[dict[str, Any]]:
    rows = []
    for n, sample in enumerate(load_samples(path)[:limit]):
        folder = keep or Path(tempfile.mkdtemp())
        db = folder / f"{path.stem}-{n}.db"
        db.unlink(missing_ok=True)
        config = MemoryConfig(block_turn_size=BLOCK_TURN_SIZE)
        async with await StrataGate.open(db, config, OfflineModel()) as sg:
            rows.append(await check_sample(sg, sample))
    return rows


def print_table(rows: list[dict[str, Any]]) -> None:
    for row in rows:
        print(
            f"{row['conversation']}: {len(row['chapters'])} chapters, largest "
            f"{row['largest_chapter']} events (section {row['largest_section']}); "
            f"{row['topic_jobs_run']} topic jobs in one process, "
            f"{row['pending_after_one_process']} pending, {row['fallback']} fallback"
        )
        for chapter in row["chapters"]:
            print(f"    {chapter['events']:>4}  {chapter['title']}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, action="append", required=True)
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--keep", type=Path, default=None)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    rows = []
    for path in args.data:
        rows += asyncio.run(run_file(path, args.limit, args.keep))
    print_table(rows)
    if args.json:
        args.json.write_text(json.dumps(rows, ensure_ascii=False, indent=2))


if __name__ == "__main__":
    main()
