"""The search-scale corpus: one large namespace written through the store's own insert code.

A seeded generator writes one namespace (200 threads of sealed 12-turn blocks, the last
thread with a two-turn open tail) straight through the store's own insert code
(``event_rows.insert_event``, ``search_index.index_messages`` and the message INSERT of
``store/turns.py``) in a few big transactions, so both FTS5 indexes are filled as in
normal use; each block holds its L4, L3 and L5 size as sealing computes them
(``SEALER.cut``). The counters sealing advances (``namespaces.block_count``, each thread's
``block_count`` and ``open_user_messages``) are set to what the rows hold, and
``check_sealing`` records turns into the open tail through ``turns.record_turn`` until it
seals, then rolls back: a database the next real turn cannot seal into is refused here,
not found later as a UNIQUE(blocks.namespace, blocks.sequence) crash.
"""

import asyncio
import json
import random
import sqlite3
import time
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from benchmarks.scale_graph import build_structure
from stratagate_plugin.core.blocks.sealing import SEALER
from stratagate_plugin.core.blocks.storage import NewBlock
from stratagate_plugin.core.events.cards import EVENT_TYPES, EventCard, event_search_text
from stratagate_plugin.core.events.documents import EVENT_RULES
from stratagate_plugin.core.records import MessageIn, Role
from stratagate_plugin.core.store import Database
from stratagate_plugin.core.store.block_rail_rows import Said
from stratagate_plugin.core.store.event_rows import insert_event
from stratagate_plugin.core.store.search_index import index_messages, register_functions
from stratagate_plugin.core.store.turns import NewSpaceDefaults, record_turn

SPACE, THREADS, TURNS_PER_BLOCK, BATCH = "bench", 200, 12, 50_000
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


def insert_space(raw: sqlite3.Connection, turns: int) -> None:
    now = START.isoformat()
    raw.execute(
        "INSERT INTO namespaces(namespace, current_turn, block_turn_size, block_decay_lambda, "
        "created_at, updated_at) VALUES (?, ?, ?, 0.3, ?, ?)",
        (SPACE, turns, TURNS_PER_BLOCK, now, now),
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
    firsts: dict[str, tuple[str, int, int]] = {}
    for row in rows:
        if row[2] is not None:
            first = firsts.setdefault(row[2], (row[0], row[4], row[4]))
            firsts[row[2]] = (first[0], first[1], row[4])
    open_users = sum(1 for row in rows if row[2] is None and row[5] == "user")
    raw.execute(  # the counters sealing advances, as if every block had been sealed
        "INSERT INTO threads(namespace, thread_id, turn_count, message_count, "
        "open_user_messages, sealed_position, block_count, created_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (SPACE, thread_id, turns, len(rows), open_users, sealed, len(firsts), now),
    )
    _insert_blocks(raw, thread_id, firsts, block_views(rows), now)
    raw.executemany(
        "INSERT INTO messages(id, namespace, thread_id, block_id, position, turn, namespace_turn, "
        "role, content, created_at) VALUES (?,?,?,?,?,?,?,?,?,?)",
        [(r[0], SPACE, r[1], r[2], r[3], r[4], r[4], r[5], r[6], r[7]) for r in rows],
    )
    raw.execute(  # as sealing does: sealed messages only, each with its FTS row id
        "UPDATE messages SET fts_rowid = pk "
        "WHERE namespace = ? AND thread_id = ? AND block_id IS NOT NULL",
        (SPACE, thread_id),
    )
    sealed_rows = raw.execute(
        "SELECT block_id, fts_rowid, content FROM messages "
        "WHERE namespace = ? AND thread_id = ? AND fts_rowid IS NOT NULL ORDER BY fts_rowid",
        (SPACE, thread_id),
    ).fetchall()
    by_block: dict[str, list[tuple[int, str]]] = {}
    for block_id, rowid, content in sealed_rows:
        by_block.setdefault(block_id, []).append((int(rowid), content))
    for block_rows_ in by_block.values():  # one call a block, as sealing makes
        index_messages(raw, SPACE, block_rows_)
    return [(block_id, first[0]) for block_id, first in firsts.items()]


def block_views(rows: list[Row]) -> dict[str, NewBlock]:
    """Each block's L4 and L3 and its L5 size, by the sealing rules, as a block sealed in
    use holds them: the blocks page reads them, never the messages."""
    return _cut_blocks((row[2], row[5], row[6]) for row in rows if row[2] is not None)


def _cut_blocks(said: Iterable[tuple[str, Role, str]]) -> dict[str, NewBlock]:
    """``SEALER.cut`` of each block's (block id, role, content) messages, in order."""
    members: dict[str, list[Said]] = {}
    for block_id, role, content in said:
        members.setdefault(block_id, []).append(Said(role, content, ()))
    return {block: SEALER.cut(each, TURNS_PER_BLOCK) for block, each in members.items()}


def _insert_blocks(
    raw: sqlite3.Connection,
    thread_id: str,
    firsts: dict[str, tuple[str, int, int]],
    views: dict[str, NewBlock],
    now: str,
) -> None:
    count = raw.execute("SELECT COUNT(*) FROM blocks").fetchone()[0]
    raw.executemany(
        "INSERT INTO blocks(id, namespace, thread_id, sequence, thread_sequence, start_turn, "
        "end_turn, l4_readable, l3_condensed, raw_tokens, processing_status, ready_position, "
        "pointer_anchor_position, created_at, updated_at) "
        "VALUES (?,?,?,?,?,?,?,?,?,?,'ready',?,?,?,?)",
        [
            (bid, SPACE, thread_id, count + i + 1, i + 1, f[1], f[2], *_views(views[bid], i, now))
            for i, (bid, f) in enumerate(firsts.items())
        ],
    )


def _views(block: NewBlock, index: int, now: str) -> tuple[Any, ...]:
    """The row's columns from ``l4_readable`` on."""
    return block.readable, block.condensed, block.raw_tokens, index + 1, index + 1, now, now


def fill_block_views(path: Path) -> int:
    """A corpus kept by an older generator (empty L4/L3, no L5 size) gets its blocks'
    views as ``_insert_blocks`` writes them now; returns the blocks filled."""
    raw = sqlite3.connect(path)
    with raw:
        missing = {row[0] for row in raw.execute("SELECT id FROM blocks WHERE raw_tokens IS NULL")}
        sql = "SELECT block_id, role, content FROM messages WHERE block_id IS NOT NULL "
        said = raw.execute(f"{sql}ORDER BY block_id, position")
        views = _cut_blocks(row for row in said if row[0] in missing)
        raw.executemany(
            "UPDATE blocks SET l4_readable = ?, l3_condensed = ?, raw_tokens = ? WHERE id = ?",
            [(v.readable, v.condensed, v.raw_tokens, block) for block, v in views.items()],
        )
    raw.close()
    return len(views)


def make_event(vocab: Vocabulary, index: int, source: tuple[str, str]) -> EventCard:
    rng = vocab.rng
    moment = START + timedelta(minutes=index)
    happened = (START + timedelta(days=rng.randint(0, 700))).isoformat()
    roll = rng.random()
    return EventCard(
        id=f"evt_{index:07}",
        namespace=SPACE,
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
    insert_space(raw, per_thread // 2 * THREADS)
    for thread in range(THREADS):
        tail = 4 if thread == THREADS - 1 else 0
        rows = thread_messages(vocab, thread, per_thread, tail)
        sources += insert_thread(raw, thread, rows, per_thread - tail)
        if thread % 40 == 39:
            raw.execute("COMMIT")
            raw.execute("BEGIN")
    raw.execute(
        "UPDATE namespaces SET block_count = (SELECT COUNT(*) FROM blocks WHERE namespace = ?) "
        "WHERE namespace = ?",
        (SPACE, SPACE),
    )
    raw.execute("COMMIT")
    messages_done = time.perf_counter()
    for start in range(0, events, BATCH):
        raw.execute("BEGIN")
        for index in range(start, min(events, start + BATCH)):
            insert_event(raw, make_event(vocab, index, vocab.rng.choice(sources)), EVENT_RULES)
        raw.execute("COMMIT")
    check_sealing(raw)
    raw.close()
    done = time.perf_counter()
    return {"messages_s": messages_done - started, "events_s": done - messages_done}


def check_sealing(raw: sqlite3.Connection) -> str:
    """Record turns into the open tail until one seals (the store's own ``record_turn``),
    then roll back; returns the sealed block's id. A generator that left the counters
    sealing advances behind the rows fails here (SystemExit), not in the benchmark."""
    thread = f"t{THREADS - 1}"
    defaults = NewSpaceDefaults(TURNS_PER_BLOCK, 0.3)
    moment = datetime.now(UTC)
    raw.execute("BEGIN IMMEDIATE")
    try:
        for turn in range(TURNS_PER_BLOCK + 1):
            messages = [
                MessageIn(role="user", content=f"seal check {turn}"),
                MessageIn(role="assistant", content="noted"),
            ]
            receipt = record_turn(
                raw, SPACE, thread, messages, moment, f"seal-check-{turn}", defaults, SEALER
            )
            if receipt.sealed_block_id is not None:
                return receipt.sealed_block_id
    except sqlite3.IntegrityError as error:
        raise SystemExit(f"scale_corpus: the next turn cannot seal: {error}") from error
    finally:
        raw.execute("ROLLBACK")
    raise SystemExit(f"scale_corpus: {TURNS_PER_BLOCK + 1} turns sealed no block")


@dataclass(frozen=True)
class CorpusSize:
    """How large a corpus to build, and the seed that makes it."""

    events: int
    messages: int
    nodes: int = 3000
    chapters: int = 300
    seed: int = 7


def ensure_corpus(path: Path, size: CorpusSize) -> dict[str, float]:
    """Build the corpus at ``path`` unless a file is there already (``--keep``): the
    namespace, then its graph and topic catalog (``scale_graph``, own seed). Returns the
    build timings (empty for a reused file)."""
    if path.exists():
        fill_block_views(path)
        return {}
    asyncio.run(create_schema(path))
    vocab = Vocabulary(random.Random(size.seed))
    timings = build(path, vocab, size.events, size.messages)
    words = vocab.words[len(_COMMON) :]
    rng = random.Random(size.seed + 2)
    timings |= build_structure(path, SPACE, rng, size.nodes, size.chapters, words)
    return timings


def corpus_queries(seed: int, count: int) -> list[str]:
    """The benchmark's queries: the corpus's words, drawn from their own seed (so a reused
    database gets the same queries)."""
    vocab = Vocabulary(random.Random(seed))
    vocab.rng = random.Random(seed + 1)
    return make_queries(vocab, count)


def make_queries(vocab: Vocabulary, count: int) -> list[str]:
    """Half two-to-four content words, half short questions with function words."""
    queries = []
    for i in range(count):
        words = vocab.text(2, 4) if i % 2 else f"what did we say about {vocab.text(1, 3)}"
        queries.append(words)
    return queries


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


async def create_schema(path: Path) -> None:
    """Migrations (tables, FTS5 indexes) exactly as StrataGate creates them."""
    db = await Database(path, events=EVENT_RULES).open()
    await db.close()
