"""Search at scale: event search, raw search and automatic context over a large namespace.

    .venv/bin/python benchmarks/search_scale.py --json /tmp/search_scale.json

(about 4–5 minutes on 2 cores, build included). Options: ``--events 100000 --messages
500000 --queries 200 --seed 7 --nodes 3000 --chapters 300``; ``--keep DB`` builds the
database there once and reuses it (queries come from their own seed, so a reused database
gets the same queries).

A seeded generator writes one namespace (200 threads of sealed 12-turn blocks, the last
thread with a two-turn open tail) straight through the store's own insert code
(``event_rows.insert_event``, ``search_index.index_messages`` and the message INSERT of
``store/turns.py``) in a few big transactions, so both FTS5 indexes are filled as in
normal use. Then ~200 queries run through ``search_events``, ``search_raw``,
``search_raw_ranked`` (the agent's raw search tool: the fused ``retrieve()`` order),
``build_auto_context``, ``search_graph``, ``list_topics(query=...)`` and
``memory_directory`` (p50/p95 latency; the graph nodes and topic chapters are written by
``scale_graph.py`` through the store's own graph and topic write code), and the same
queries through ``bm25s`` over the same texts in the same run (numpy backend), reported as
latency ratios (the graph and topic rows have none). Peak memory is the process's maximum
resident set size (``getrusage``). Needs ``pip install bm25s``.
"""

import argparse
import asyncio
import json
import random
import resource
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import bm25s  # type: ignore[import-untyped]
from bm25s.tokenization import Tokenizer  # type: ignore[import-untyped]

from benchmarks.scale_graph import build_structure
from stratagate_plugin.core.events.cards import EVENT_TYPES, EventCard, event_search_text
from stratagate_plugin.core.events.documents import EVENT_RULES
from stratagate_plugin.core.memory import StrataGate
from stratagate_plugin.core.retrieval.recall import activation_query
from stratagate_plugin.core.store import Database, block_rows
from stratagate_plugin.core.store.event_rows import insert_event
from stratagate_plugin.core.store.search_index import index_messages, register_functions

NAMESPACE, THREADS, TURNS_PER_BLOCK, BATCH = "bench", 200, 12, 50_000
START = datetime(2024, 1, 1, tzinfo=UTC)
_SYLLABLES: tuple[str, ...] = ("ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "ze", "pa")
_SYLLABLES += ("qu", "ri", "sho", "den", "tor", "lin", "mar", "gel", "fi", "bra")
_COMMON: tuple[str, ...] = ("the", "a", "to", "and", "of", "in", "is", "it", "for", "on")
_COMMON += ("with", "that", "this", "was", "we", "you", "at", "be")
Row = tuple[Any, ...]


class Vocabulary:
    """Synthetic words with a Zipf-like frequency, English function words mixed in."""

    def __init__(self, rng: random.Random, size: int = 6000) -> None:
        words = {"".join(rng.choices(_SYLLABLES, k=rng.randint(2, 3))) for _ in range(size * 2)}
        self.words = [*_COMMON, *sorted(words)[:size]]
        weights = [1 / (rank + 1) ** 0.9 for rank in range(len(self.words))]
        self.cumulative = [sum(weights[: i + 1]) for i in range(len(weights))]
        self.people = sorted({w.title() for w in rng.sample(self.words[len(_COMMON) :], 200)})
        self.rng = rng

    def text(self, low: int, high: int) -> str:
        count = self.rng.randint(low, high)
        return " ".join(self.rng.choices(self.words, cum_weights=self.cumulative, k=count))


def insert_namespace(raw: sqlite3.Connection, turns: int) -> None:
    now = START.isoformat()
    raw.execute(
        "INSERT INTO namespaces(namespace, current_turn, block_turn_size, block_decay_lambda, "
        "created_at, updated_at) VALUES (?, ?, ?, 0.3, ?, ?)",
        (NAMESPACE, turns, TURNS_PER_BLOCK, now, now),
    )


def thread_messages(vocab: Vocabulary, thread: int, count: int, open_tail: int) -> list[Row]:
    """One thread: blocks rows and message rows (block id None for the open tail)."""
    rows: list[Row] = []
    sealed = count - open_tail
    for position in range(1, count + 1):
        turn = (position + 1) // 2
        block = (turn - 1) // TURNS_PER_BLOCK if position <= sealed else None
        block_id = None if block is None else f"blk_{thread:03}_{block:05}"
        role = "user" if position % 2 else "assistant"
        moment = (START + timedelta(minutes=thread * 10_000 + position)).isoformat()
        message_id = f"msg_{thread:03}_{position:07}"
        rows.append(
            (message_id, f"t{thread}", block_id, position, turn, role, vocab.text(6, 30), moment)
        )
    return rows


def insert_thread(
    raw: sqlite3.Connection, thread: int, rows: list[Row], sealed: int
) -> list[tuple[str, str]]:
    """Thread, block and message rows plus FTS documents; returns (block id, first message)."""
    thread_id, now = f"t{thread}", rows[0][7]
    turns = rows[-1][4]
    raw.execute(
        "INSERT INTO threads(namespace, thread_id, turn_count, message_count, sealed_position, "
        "created_at) VALUES (?, ?, ?, ?, ?, ?)",
        (NAMESPACE, thread_id, turns, len(rows), sealed, now),
    )
    firsts: dict[str, tuple[str, int, int]] = {}
    for row in rows:
        if row[2] is not None:
            first = firsts.setdefault(row[2], (row[0], row[4], row[4]))
            firsts[row[2]] = (first[0], first[1], row[4])
    _insert_blocks(raw, thread_id, firsts, now)
    raw.executemany(
        "INSERT INTO messages(id, namespace, thread_id, block_id, position, turn, namespace_turn, "
        "role, content, created_at) VALUES (?,?,?,?,?,?,?,?,?,?)",
        [(r[0], NAMESPACE, r[1], r[2], r[3], r[4], r[4], r[5], r[6], r[7]) for r in rows],
    )
    raw.execute(  # as sealing does: sealed messages only, each with its FTS row id
        "UPDATE messages SET fts_rowid = pk "
        "WHERE namespace = ? AND thread_id = ? AND block_id IS NOT NULL",
        (NAMESPACE, thread_id),
    )
    sealed_rows = raw.execute(
        "SELECT block_id, fts_rowid, content FROM messages "
        "WHERE namespace = ? AND thread_id = ? AND fts_rowid IS NOT NULL ORDER BY fts_rowid",
        (NAMESPACE, thread_id),
    ).fetchall()
    by_block: dict[str, list[tuple[int, str]]] = {}
    for block_id, rowid, content in sealed_rows:
        by_block.setdefault(block_id, []).append((int(rowid), content))
    for block_rows_ in by_block.values():  # one call a block, as sealing makes
        index_messages(raw, NAMESPACE, block_rows_)
    return [(block_id, first[0]) for block_id, first in firsts.items()]


def _insert_blocks(
    raw: sqlite3.Connection, thread_id: str, firsts: dict[str, tuple[str, int, int]], now: str
) -> None:
    count = raw.execute("SELECT COUNT(*) FROM blocks").fetchone()[0]
    raw.executemany(
        "INSERT INTO blocks(id, namespace, thread_id, sequence, thread_sequence, start_turn, "
        "end_turn, l4_readable, l3_condensed, processing_status, ready_position, "
        "pointer_anchor_position, created_at, updated_at) "
        "VALUES (?,?,?,?,?,?,?,'','','ready',?,?,?,?)",
        [
            (bid, NAMESPACE, thread_id, count + i + 1, i + 1, f[1], f[2], i + 1, i + 1, now, now)
            for i, (bid, f) in enumerate(firsts.items())
        ],
    )


def make_event(vocab: Vocabulary, index: int, source: tuple[str, str]) -> EventCard:
    rng = vocab.rng
    moment = START + timedelta(minutes=index)
    happened = (START + timedelta(days=rng.randint(0, 700))).isoformat()
    roll = rng.random()
    return EventCard(
        id=f"evt_{index:07}",
        namespace=NAMESPACE,
        pool="agent" if roll < 0.05 else "conversation",
        title=vocab.text(3, 8),
        summary=vocab.text(12, 40),
        tags=vocab.text(2, 4).split(),
        quotes=[vocab.text(4, 10)] if roll < 0.3 else [],
        source_block_id=source[0],
        source_message_ids=[source[1]],
        formed_turn=index // 100,
        temporal={
            "mentioned_at": moment.isoformat(),
            "happened_start": happened,
            "participants": rng.sample(vocab.people, rng.randint(0, 2)),
            "event_type": rng.choice(EVENT_TYPES),
        },
        scope="user",
        criticality="safety" if roll > 0.999 else "routine",
        status="forgotten" if 0.5 < roll < 0.53 else "active",
        last_adopted_turn=index // 100,
        pinned=0.998 < roll <= 0.999,
        created_at=moment,
        updated_at=moment,
    )


def build(path: Path, vocab: Vocabulary, events: int, messages: int) -> dict[str, float]:
    """Write the namespace; returns build timings."""
    raw = sqlite3.connect(path, isolation_level=None)
    raw.row_factory = sqlite3.Row
    register_functions(raw)
    started = time.perf_counter()
    per_thread = max(6, (messages // THREADS) // 2 * 2)
    sources: list[tuple[str, str]] = []
    raw.execute("BEGIN")
    insert_namespace(raw, per_thread // 2 * THREADS)
    for thread in range(THREADS):
        tail = 4 if thread == THREADS - 1 else 0
        rows = thread_messages(vocab, thread, per_thread, tail)
        sources += insert_thread(raw, thread, rows, per_thread - tail)
        if thread % 40 == 39:
            raw.execute("COMMIT")
            raw.execute("BEGIN")
    raw.execute("COMMIT")
    messages_done = time.perf_counter()
    for start in range(0, events, BATCH):
        raw.execute("BEGIN")
        for index in range(start, min(events, start + BATCH)):
            insert_event(raw, make_event(vocab, index, vocab.rng.choice(sources)), EVENT_RULES)
        raw.execute("COMMIT")
    raw.close()
    done = time.perf_counter()
    return {"messages_s": messages_done - started, "events_s": done - messages_done}


def build_all(path: Path, vocab: Vocabulary, args: argparse.Namespace) -> dict[str, float]:
    """The namespace, then its graph and topic catalog (``scale_graph``, own seed)."""
    timings = build(path, vocab, args.events, args.messages)
    words = vocab.words[len(_COMMON) :]
    rng = random.Random(args.seed + 2)
    timings |= build_structure(path, NAMESPACE, rng, args.nodes, args.chapters, words)
    return timings


def make_queries(vocab: Vocabulary, count: int) -> list[str]:
    """Half two-to-four content words, half short questions with function words."""
    queries = []
    for i in range(count):
        words = vocab.text(2, 4) if i % 2 else f"what did we say about {vocab.text(1, 3)}"
        queries.append(words)
    return queries


async def latencies(run: Callable[[str], Awaitable[Any]], queries: Sequence[str]) -> list[float]:
    out = []
    for query in queries:
        started = time.perf_counter()
        await run(query)
        out.append((time.perf_counter() - started) * 1000)
    return out


def bm25s_latencies(
    texts: list[str], query_sets: Sequence[Sequence[str]]
) -> tuple[list[list[float]], float]:
    """bm25s over ``texts`` (English stopwords): per-query ms per set, index build seconds."""
    started = time.perf_counter()
    tokenizer = Tokenizer(stopwords="en")
    retriever = bm25s.BM25()
    retriever.index(tokenizer.tokenize(texts, show_progress=False), show_progress=False)
    built = time.perf_counter() - started
    out: list[list[float]] = []
    for queries in query_sets:
        out.append([])
        for query in queries:
            started = time.perf_counter()
            ids = tokenizer.tokenize([query], update_vocab=False, show_progress=False)
            retriever.retrieve(ids, k=6, show_progress=False)
            out[-1].append((time.perf_counter() - started) * 1000)
    return out, built


def corpus_texts(path: Path) -> tuple[list[str], list[str]]:
    """The visible event texts and the sealed message texts StrataGate ranks."""
    raw = sqlite3.connect(path)
    events = [
        event_search_text(t, s, json.loads(g), json.loads(q), json.loads(x))
        for t, s, g, q, x in raw.execute(
            "SELECT title, summary, tags_json, quotes_json, temporal_json FROM events "
            "WHERE status IN ('active', 'superseded')"
        )
    ]
    messages = [
        r[0] for r in raw.execute("SELECT content FROM messages WHERE block_id IS NOT NULL")
    ]
    raw.close()
    return events, messages


def summary(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return {"p50_ms": round(statistics.median(ordered), 2), "p95_ms": round(p95, 2)}


def peak_mb() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


async def measure_ours(
    path: Path, queries: list[str], only: Sequence[str] = ()
) -> tuple[dict[str, list[float]], list[str]]:
    """Each operation's latencies (``only``: just those named)."""
    sg = StrataGate(await Database(path).open())
    thread = f"t{THREADS - 1}"
    tail = await sg.db.read(lambda raw: block_rows.open_tail(raw, NAMESPACE, thread))
    operations: dict[str, Callable[[str], Awaitable[Any]]] = {
        "search_events": lambda q: sg.events.search(NAMESPACE, q),
        "search_raw": lambda q: sg.retrieval.search_raw(NAMESPACE, q),
        "search_raw_ranked": lambda q: sg.retrieval.search_raw_ranked(NAMESPACE, q),
        "build_auto_context": lambda q: sg.retrieval.auto_context(NAMESPACE, thread, q),
        "search_graph": lambda q: sg.graph.search(NAMESPACE, q),
        "list_topics": lambda q: sg.topics.catalog(NAMESPACE, query=q),
        "memory_directory": lambda q: sg.topics.directory(NAMESPACE),
    }
    results = {
        name: await latencies(run, queries)
        for name, run in operations.items()
        if not only or name in only
    }
    await sg.close()
    return results, [activation_query(q, tail, 2) for q in queries]


def report(
    args: argparse.Namespace, timings: dict[str, Any], rows: dict[str, Any]
) -> dict[str, Any]:
    heads = ("p50 ms", "p95 ms", "bm25s p50", "bm25s p95", "p50 ratio")
    print(f"{'operation':<20}" + "".join(f"{head:>11}" for head in heads))
    for name, row in rows.items():
        if "bm25s" not in row:  # graph and topic reads: no bm25s counterpart
            print(f"{name:<20}{row['p50_ms']:>11}{row['p95_ms']:>11}" + f"{'-':>11}" * 3)
            continue
        ratio = row["p50_ms"] / max(row["bm25s"]["p50_ms"], 1e-9)
        row["p50_ratio_vs_bm25s"] = round(ratio, 2)
        print(
            f"{name:<20}{row['p50_ms']:>11}{row['p95_ms']:>11}{row['bm25s']['p50_ms']:>11}"
            f"{row['bm25s']['p95_ms']:>11}{ratio:>11.2f}"
        )
    result = {
        "events": args.events,
        "messages": args.messages,
        "queries": args.queries,
        "graph_nodes": args.nodes,
        "topic_chapters": args.chapters,
        **timings,
        "latency": rows,
    }
    print(json.dumps(result, indent=2))
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--messages", type=int, default=500_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--nodes", type=int, default=3000, help="graph nodes to project")
    parser.add_argument("--chapters", type=int, default=300, help="topic chapters to write")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--keep", type=Path, help="keep the database here (reused if present)")
    parser.add_argument(
        "--only", action="append", default=[], help="measure only this operation (repeat)"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = args.keep or Path(tmp) / "scale.db"
        fresh = not path.exists()
        if fresh:
            asyncio.run(create_schema(path))
        result = run(args, path, fresh)
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))


async def create_schema(path: Path) -> None:
    """Migrations (tables, FTS5 indexes) exactly as StrataGate creates them."""
    db = await Database(path).open()
    await db.close()


def run(args: argparse.Namespace, path: Path, fresh: bool) -> dict[str, Any]:
    vocab = Vocabulary(random.Random(args.seed))
    timings: dict[str, Any] = {}
    if fresh:
        timings["build"] = build_all(path, vocab, args)
    timings["peak_rss_mb_after_build"] = peak_mb()
    vocab.rng = random.Random(args.seed + 1)  # same queries whether the database was reused
    queries = make_queries(vocab, args.queries)
    ours, auto_queries = asyncio.run(measure_ours(path, queries, args.only))
    timings["peak_rss_mb_after_stratagate"] = peak_mb()
    if args.only:  # a focused run: no bm25s comparison
        return report(args, timings, {name: summary(ours[name]) for name in ours})
    event_texts, message_texts = corpus_texts(path)
    (events_q, auto_q), events_built = bm25s_latencies(event_texts, [queries, auto_queries])
    (raw_q,), raw_built = bm25s_latencies(message_texts, [queries])
    theirs = {
        "search_events": events_q,
        "search_raw": raw_q,
        "search_raw_ranked": raw_q,
        "build_auto_context": auto_q,
    }
    timings["peak_rss_mb_after_bm25s"] = peak_mb()
    timings["bm25s_index_s"] = {"events": round(events_built, 2), "messages": round(raw_built, 2)}
    rows = {
        name: {
            **summary(ours[name]),
            **({"bm25s": summary(theirs[name])} if name in theirs else {}),
        }
        for name in ours
    }
    return report(args, timings, rows)


if __name__ == "__main__":
    main()
