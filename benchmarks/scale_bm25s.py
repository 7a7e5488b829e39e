"""The bm25s baseline of the search-scale benchmarks, measured in the same run.

Two ways to ask bm25s for a query's top k, both over the same index (English stopwords,
numpy backend; numba is not installed) and both timed from the query text on (its
tokenising included):

- ``retrieve``: bm25s's own ``BM25.retrieve``. Its numpy backend scores every document
  and runs ``argpartition`` over the whole score array: at 500k messages, of which ~90%
  score zero, the partition alone is ~86 ms, so a ratio against it flatters us.
- ``nonzero``: ``get_scores`` then top-k over the documents that scored above zero (what
  any inverted-index engine, ours included, looks at).

Each set of queries reports both and takes the faster one's latencies as *the* baseline
(``method`` names it): the fairest bm25s, and the number our ratios are made against.
"""

import time
from collections.abc import Mapping, Sequence
from typing import Any

import bm25s  # type: ignore[import-untyped]
import numpy as np
from bm25s.tokenization import Tokenizer  # type: ignore[import-untyped]

from benchmarks.scale_stats import summary

K = 6  # what the agent's search tools return by default


class Baseline:
    """One bm25s index over ``texts``; ``build_s`` is how long indexing took."""

    def __init__(self, texts: list[str]) -> None:
        started = time.perf_counter()
        self.tokenizer = Tokenizer(stopwords="en")
        self.retriever = bm25s.BM25()
        tokens = self.tokenizer.tokenize(texts, show_progress=False)
        self.retriever.index(tokens, show_progress=False)
        self.build_s = time.perf_counter() - started

    def ids(self, query: str) -> list[int]:
        """The query's known token ids (0 is bm25s's empty token: an unknown word)."""
        found = self.tokenizer.tokenize([query], update_vocab=False, show_progress=False)
        return [token for token in found[0] if token != 0]

    def retrieve(self, query: str) -> list[int]:
        ids = self.tokenizer.tokenize([query], update_vocab=False, show_progress=False)
        documents, _ = self.retriever.retrieve(ids, k=K, show_progress=False)
        return [int(document) for document in documents[0]]

    def nonzero(self, query: str) -> list[int]:
        ids = self.ids(query)
        if not ids:
            return []
        scores = self.retriever.get_scores(ids)
        hits = np.flatnonzero(scores)
        if len(hits) > K:
            hits = hits[np.argpartition(scores[hits], -K)[-K:]]
        return [int(document) for document in hits[np.argsort(-scores[hits])]]


def timed_ms(run: Any, queries: Sequence[str]) -> list[float]:
    out = []
    for query in queries:
        started = time.perf_counter()
        run(query)
        out.append((time.perf_counter() - started) * 1000)
    return out


def measure(baseline: Baseline, queries: Sequence[str]) -> dict[str, Any]:
    """Both methods on ``queries``; the faster one's p50/p95 at the top level."""
    methods = {
        "retrieve": summary(timed_ms(baseline.retrieve, queries)),
        "nonzero": summary(timed_ms(baseline.nonzero, queries)),
    }
    method = min(methods, key=lambda name: methods[name]["p50_ms"])
    return {**methods[method], "method": method, "methods": methods}


def baselines(
    event_texts: list[str], message_texts: list[str], query_sets: Mapping[str, Sequence[str]]
) -> tuple[dict[str, dict[str, Any]], dict[str, float]]:
    """bm25s rows for our operations (event queries against the events, raw ones against
    the messages) and the index build seconds. ``query_sets`` maps the operation to its
    queries; an operation whose name starts ``search_raw`` is asked of the messages."""
    events, messages = Baseline(event_texts), Baseline(message_texts)
    rows = {
        name: measure(messages if name.startswith("search_raw") else events, queries)
        for name, queries in query_sets.items()
    }
    built = {"events": round(events.build_s, 2), "messages": round(messages.build_s, 2)}
    return rows, built
