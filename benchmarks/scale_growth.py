"""The growth table: the same reads and the same bm25s baseline at growing corpus sizes.

``search_scale.py --growth`` builds one corpus per size in ``--growth-sizes`` (messages;
10k, 100k and 500k by default) with events at one per five messages, graph nodes and
topic chapters scaled with the events from ``--nodes``/``--chapters`` at 100k events
(at least 100 nodes and 10 chapters), and measures each as the main table does (same
queries, bm25s in the same run, each side in a process of its own so that its peak
memory is its own). ``--growth-dir`` keeps the databases (``scale-N.db``, reused when
present). A row per operation and size shows how latency grows with the corpus, ours
against bm25s's.
"""

import tempfile
from pathlib import Path
from typing import Any

from benchmarks.scale_corpus import CorpusSize, ensure_corpus
from benchmarks.scale_measure import measure_corpus, print_table

GROWTH_SIZES = (10_000, 100_000, 500_000)
EVENTS_PER_MESSAGE = 1 / 5
REFERENCE_EVENTS = 100_000  # the size --nodes and --chapters are given for


def size_for(messages: int, nodes: int, chapters: int, seed: int) -> CorpusSize:
    events = int(messages * EVENTS_PER_MESSAGE)
    share = events / REFERENCE_EVENTS
    return CorpusSize(
        events=events,
        messages=messages,
        nodes=max(100, round(nodes * share)),
        chapters=max(10, round(chapters * share)),
        seed=seed,
    )


def growth(
    sizes: list[int], queries: list[str], nodes: int, chapters: int, seed: int, keep: Path | None
) -> list[dict[str, Any]]:
    """One measured corpus per size, smallest first; prints each size's table as it ends."""
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = keep or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        for messages in sorted(sizes):
            size = size_for(messages, nodes, chapters, seed)
            path = folder / f"scale-{messages}.db"
            build = ensure_corpus(path, size)
            latency, figures = measure_corpus(path, queries)
            print_table(latency, f"{messages // 1000}k messages")
            rows.append({**vars(size), "build": build, **figures, "latency": latency})
    return rows


def print_growth(rows: list[dict[str, Any]]) -> None:
    """Per operation: p50/p95 at each size, ours then bm25s's."""
    sizes = [row["messages"] for row in rows]
    print(f"{'p50 / p95 ms':<20}" + "".join(f"{f'{n // 1000}k msgs':>24}" for n in sizes))
    for name in rows[0]["latency"]:
        cells = [_cell(row["latency"][name]) for row in rows]
        print(f"{name:<20}" + "".join(f"{cell:>24}" for cell in cells))
        theirs = [row["latency"][name].get("bm25s") for row in rows]
        if all(theirs):
            print(f"{'  bm25s':<20}" + "".join(f"{_cell(cell):>24}" for cell in theirs))


def _cell(row: dict[str, Any]) -> str:
    return f"{row['p50_ms']} / {row['p95_ms']}"
