"""One corpus measured: every agent-facing read through the engine, bm25s beside it.

The operations run in this process through the façade on the corpus of
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

from benchmarks.scale_bm25s import baselines
from benchmarks.scale_corpus import SPACE, THREADS, corpus_texts
from benchmarks.scale_stats import peak_mb, summary
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


async def measure_corpus(
    path: Path, queries: list[str], only: Sequence[str] = ()
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Rows (ours, bm25s where it applies, the p50 ratio) and the run's memory and index
    figures. ``only`` is a focused run: no bm25s."""
    ours, auto_queries = await measure_ours(path, queries, only)
    figures: dict[str, Any] = {"peak_rss_mb_after_stratagate": peak_mb()}
    rows: dict[str, Any] = {name: summary(samples) for name, samples in ours.items()}
    if only:
        return rows, figures
    asked = {
        "search_events": queries,
        "search_raw": queries,
        "search_raw_ranked": queries,
        "build_auto_context": auto_queries,
    }
    event_texts, message_texts = corpus_texts(path)
    theirs, built = baselines(event_texts, message_texts, asked)
    figures |= {"peak_rss_mb_after_bm25s": peak_mb(), "bm25s_index_s": built}
    for name, baseline in theirs.items():
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
