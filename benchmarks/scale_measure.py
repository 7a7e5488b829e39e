"""One corpus measured: every agent-facing read through the engine, bm25s beside it.

The operations run through the façade, in a fresh process (``scale_apart``), on the corpus of
``scale_corpus.py``: ``search_events``, ``search_raw``, ``search_raw_ranked`` (the agent's
raw search tool: the fused ``retrieve()`` order), ``build_auto_context``, ``search_graph``,
``list_topics(query=...)`` and ``memory_directory``. The event-side operations are then
asked of bm25s over the visible event texts, the raw ones over the sealed message texts,
and automatic recall with its activation query (``scale_bm25s``): each such row carries
the baseline and the p50 ratio.
"""

import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

from benchmarks.scale_apart import run_side
from benchmarks.scale_corpus import SPACE, THREADS
from benchmarks.scale_stats import summary
from stratagate_plugin.core.events.documents import EVENT_RULES
from stratagate_plugin.core.memory import StrataGate
from stratagate_plugin.core.retrieval.recall import activation_query
from stratagate_plugin.core.store import Database, block_rows


async def latencies(run: Callable[[str], Awaitable[Any]], queries: Sequence[str]) -> list[float]:
    out = []
    for query in queries:
        started = time.perf_counter()
        await run(query)
        out.append((time.perf_counter() - started) * 1000)
    return out


async def measure_ours(
    path: Path | str, queries: list[str], only: Sequence[str] = ()
) -> tuple[dict[str, list[float]], list[str]]:
    """Each operation's latencies (``only``: just those named), and the activation query
    automatic recall searched with for each question (bm25s is asked the same). ``path``:
    the corpus file, or a ``postgresql://`` URL of a copy of it (the engine on the server)."""
    if isinstance(path, str):
        sg = await StrataGate.open(path)
    else:
        sg = StrataGate(await Database(path, events=EVENT_RULES).open())
    thread = f"t{THREADS - 1}"
    tail = await sg.db.read(lambda raw: block_rows.open_tail(raw, SPACE, thread))
    operations: dict[str, Callable[[str], Awaitable[Any]]] = {
        "search_events": lambda q: sg.events.search(SPACE, q),
        "search_raw": lambda q: sg.retrieval.search_raw(SPACE, q),
        "search_raw_ranked": lambda q: sg.retrieval.search_raw_ranked(SPACE, q),
        "build_auto_context": lambda q: sg.retrieval.auto_context(SPACE, thread, q),
        "search_graph": lambda q: sg.graph.search(SPACE, q),
        "list_topics": lambda q: sg.topics.catalog(SPACE, query=q),
        "memory_directory": lambda q: sg.topics.directory(SPACE),
    }
    results = {
        name: await latencies(run, queries)
        for name, run in operations.items()
        if not only or name in only
    }
    await sg.close()
    return results, [activation_query(q, tail, 2) for q in queries]


def measure_corpus(
    path: Path, queries: list[str], only: Sequence[str] = ()
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Rows (ours, bm25s where it applies, the p50 ratio) and the run's memory and index
    figures, each side measured in a fresh process of its own (``scale_apart``). ``only``
    is a focused run: no bm25s."""
    side = run_side("ours", path, {"queries": queries, "only": list(only)})
    rows = {name: summary(samples) for name, samples in side["samples"].items()}
    figures: dict[str, Any] = {"peak_rss_mb_stratagate": side["peak_rss_mb"]}
    if only:
        return rows, figures
    asked = {
        "search_events": queries,
        "search_raw": queries,
        "search_raw_ranked": queries,
        "build_auto_context": side["auto_queries"],
    }
    bm25s = run_side("bm25s", path, asked)
    figures |= {
        "peak_rss_mb_bm25s": bm25s["peak_rss_mb"],
        "peak_rss_mb_bm25s_texts_only": bm25s["texts_peak_mb"],
        "peak_rss_ratio_vs_bm25s": round(side["peak_rss_mb"] / bm25s["peak_rss_mb"], 2),
        "bm25s_index_s": bm25s["built"],
    }
    for name, baseline in bm25s["rows"].items():
        ratio = rows[name]["p50_ms"] / max(baseline["p50_ms"], 1e-9)
        rows[name] |= {"bm25s": baseline, "p50_ratio_vs_bm25s": round(ratio, 2)}
    return rows, figures


def print_table(rows: dict[str, Any], title: str = "operation") -> None:
    """Ours, the baseline (its faster method), bm25s's own ``retrieve`` and the ratio."""
    heads = ("p50 ms", "p95 ms", "bm25s p50", "bm25s p95", "retrieve50", "p50 ratio")
    print(f"{title:<20}" + "".join(f"{head:>11}" for head in heads))
    for name, row in rows.items():
        cells = [row["p50_ms"], row["p95_ms"]]
        if "bm25s" in row:
            theirs = row["bm25s"]
            cells += [theirs["p50_ms"], theirs["p95_ms"], theirs["methods"]["retrieve"]["p50_ms"]]
            cells.append(f"{row['p50_ratio_vs_bm25s']:.2f}")
        else:  # graph and topic reads: no bm25s counterpart
            cells += ["-"] * 4
        print(f"{name:<20}" + "".join(f"{cell:>11}" for cell in cells))


def print_memory(figures: dict[str, Any]) -> None:
    """Each side's own process peak, and their ratio (the issue's aim: at most 0.5)."""
    if "peak_rss_mb_bm25s" not in figures:
        print(f"peak RSS: StrataGate {figures['peak_rss_mb_stratagate']} MB")
        return
    print(
        f"peak RSS: StrataGate {figures['peak_rss_mb_stratagate']} MB, bm25s "
        f"{figures['peak_rss_mb_bm25s']} MB (its texts alone "
        f"{figures['peak_rss_mb_bm25s_texts_only']} MB): "
        f"ratio {figures['peak_rss_ratio_vs_bm25s']}"
    )
