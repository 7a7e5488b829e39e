"""Source precision of derived events on the LoCoMo dev conversations (issue 23).

    PYTHONPATH=. .venv/bin/python benchmarks/source_precision.py \
        --data ../shared/locomo/locomo-dev.json ../shared/locomo/locomo-dev-zh.json \
        --db /tmp/precision --out /tmp/source-precision.json

Each file's conversations are ingested as ``stratagate bench locomo`` does (one thread per
session, sealed at its end, blocks of 6 turns) and derived by the offline model; ``--db``
keeps each file's database in that directory (``<file stem>.db``) and reuses it when it
already holds events. Then, per language, over every event (active or superseded):

* events, and the messages they cite;
* source precision: the share of cited person messages (every LoCoMo line is a person's,
  the second speaker recorded as role ``assistant`` labelled "Name: …") that share a
  content term with their event — stemmed words and Han bigrams free of function
  characters, the speaker label left out (``truth_scenarios/checks.content_terms``);
* events whose only sources are assistant-role messages, and those whose only sources are
  unnamed assistant messages (the agent's own words: none in LoCoMo, where the agent
  never speaks, so any count there is a bug).
"""

import argparse
import asyncio
import contextlib
import json
import sqlite3
import tempfile
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.truth_scenarios.checks import content_terms
from stratagate_plugin.bench.locomo import BLOCK_TURN_SIZE, ingest, load_samples, sessions_of
from stratagate_plugin.core.config import MemoryConfig
from stratagate_plugin.core.llm.offline.model import OfflineModel
from stratagate_plugin.core.llm.offline.text import split_speaker
from stratagate_plugin.core.memory import StrataGate

DATA = (Path("../shared/locomo/locomo-dev.json"), Path("../shared/locomo/locomo-dev-zh.json"))
SOURCES = """
SELECT e.id, e.title, e.summary, e.quotes_json, m.role, m.content
FROM events e JOIN event_sources s ON s.event_id = e.id JOIN messages m ON m.id = s.message_id
WHERE e.status IN ('active', 'superseded') ORDER BY e.pk, s.position
"""


async def build(data: Path, db: Path) -> None:
    """Ingest and derive every conversation of ``data`` into ``db`` (unless it has events)."""
    if db.exists() and _event_count(db):
        return
    config = MemoryConfig(block_turn_size=BLOCK_TURN_SIZE)
    async with await StrataGate.open(db, config, OfflineModel()) as sg:
        for sample in load_samples(data):
            await ingest(sg, str(sample["sample_id"]), sessions_of(sample["conversation"]))
            await sg.derivation.process_pending()


def _event_count(db: Path) -> int:
    with contextlib.closing(sqlite3.connect(db)) as raw:
        return int(raw.execute("SELECT COUNT(*) FROM events").fetchone()[0])


def measure(db: Path) -> dict[str, Any]:
    """The counts and the precision of one database."""
    cards: dict[str, tuple[str, list[tuple[str, str]]]] = {}
    with contextlib.closing(sqlite3.connect(db)) as raw:
        for event_id, title, summary, quotes, role, content in raw.execute(SOURCES):
            card = cards.setdefault(event_id, (" ".join([title, summary, quotes]), []))
            card[1].append((role, content))
    person, precise, assistant_only, agent_only = 0, 0, 0, 0
    examples: list[dict[str, str]] = []
    for text, sources in cards.values():
        terms = content_terms(text)
        for role, content in sources:
            speaker, body = split_speaker(content)
            if role == "assistant" and speaker is None:
                continue  # the agent's own words are not a person's statement
            person += 1
            if terms & content_terms(body):
                precise += 1
            elif len(examples) < 5:
                examples.append({"event": text[:120], "cited": content[:120]})
        roles = {role for role, _ in sources}
        assistant_only += roles == {"assistant"}
        agent_only += all(r == "assistant" and split_speaker(c)[0] is None for r, c in sources)
    return {
        "events": len(cards),
        "cited_messages": sum(len(sources) for _, sources in cards.values()),
        "cited_person_messages": person,
        "source_precision": round(precise / person, 4) if person else 0.0,
        "assistant_only_events": assistant_only,
        "unnamed_assistant_only_events": agent_only,
        "imprecise_examples": examples,
    }


def language_of(data: Path) -> str:
    return "zh" if data.stem.endswith("-zh") else "en"


def table(results: dict[str, dict[str, Any]]) -> str:
    rows = [
        "| language | events | cited messages | source precision | assistant-only | "
        "unnamed-assistant-only |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for lang, r in results.items():
        rows.append(
            f"| {lang} | {r['events']} | {r['cited_messages']} | {r['source_precision']:.3f} | "
            f"{r['assistant_only_events']} | {r['unnamed_assistant_only_events']} |"
        )
    return "\n".join(rows)


async def run(data: Sequence[Path], db_dir: Path | None) -> dict[str, dict[str, Any]]:
    results: dict[str, dict[str, Any]] = defaultdict(dict)
    with tempfile.TemporaryDirectory() as scratch:
        folder = db_dir or Path(scratch)
        folder.mkdir(parents=True, exist_ok=True)
        for path in data:
            db = folder / f"{path.stem}.db"
            await build(path, db)
            results[language_of(path)] = measure(db)
    return dict(results)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, nargs="+", default=list(DATA))
    parser.add_argument("--db", type=Path, help="directory keeping (and reusing) the databases")
    parser.add_argument("--out", type=Path, help="write the results as JSON here")
    args = parser.parse_args(argv)
    results = asyncio.run(run(args.data, args.db))
    print(table(results))
    if args.out:
        args.out.write_text(json.dumps(results, ensure_ascii=False, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
