"""SQLite's chunked event postings (``event_chunks``) hold exactly the postings written,
through appends, splits, edits in the middle, removals that empty a chunk and a pk before
every chunk, and read them back per space and pool: checked against a plain model of the
postings after every step, with chunks of three so every path runs."""

import random
import sqlite3
from collections import Counter

import pytest

from stratagate_plugin.core.store import event_chunks
from stratagate_plugin.core.store.event_chunks import Posting

POOLS = ("conversation", "agent")
TERMS = ("w:kiln", "w:glaze", "w:oven")
SPACES = ("ns", "other", "")


@pytest.fixture
def raw(monkeypatch: pytest.MonkeyPatch) -> sqlite3.Connection:
    monkeypatch.setattr(event_chunks, "CHUNK", 3)
    conn = sqlite3.connect(":memory:", isolation_level=None)
    for statement in event_chunks.TABLES:
        conn.execute(statement)
    return conn


Model = dict[tuple[str, int], Posting]  # (term, pk) → posting


def _posting(rng: random.Random, term: str, pk: int) -> Posting:
    space = rng.choice(SPACES)
    pool = "" if not space else rng.choice(POOLS)
    return Posting(term, space, pool, pk, rng.randint(1, 4), rng.randint(4, 40))


def _check(raw: sqlite3.Connection, model: Model) -> None:
    assert sorted(event_chunks.every_posting(raw)) == sorted(model.values())
    assert event_chunks.term_rows(raw) == dict(Counter(term for term, _ in model))
    for term in TERMS:
        for space in ("ns", "other"):
            rows, found = event_chunks.read(raw, [term], space, POOLS)
            expected = sorted(
                (p.pk, p.times, p.length, POOLS.index(p.pool))
                for p in model.values()
                if p.term == term and p.namespace == space
            )
            got = sorted(tuple(int(v) for v in row) for row in found[term])
            assert got == expected
            assert rows.get(term, 0) == sum(1 for t, _ in model if t == term)
            for pool in POOLS:
                newest = list(event_chunks.newest_pks(raw, term, space, pool))
                assert newest == sorted(
                    (pk for pk, _, _, n in expected if POOLS[n] == pool), reverse=True
                )
    sizes = [len(blob) // 8 for (blob,) in raw.execute("SELECT pks FROM event_postings")]
    assert all(0 < size <= event_chunks.CHUNK for size in sizes)


@pytest.mark.parametrize("seed", range(6))
def test_random_writes_keep_exactly_the_postings_written(
    raw: sqlite3.Connection, seed: int
) -> None:
    rng = random.Random(seed)
    model: Model = {}
    next_pk = 50
    for _ in range(60):
        action = rng.random()
        if action < 0.5 or not model:  # new events, after every other
            new = [
                _posting(rng, term, next_pk + n)
                for n in range(rng.randint(1, 4))
                for term in rng.sample(TERMS, 2)
            ]
            next_pk += 5
        elif action < 0.7:  # an edit's re-index: an old pk, or one before every chunk
            pk = rng.choice([pk for _, pk in model] + [rng.randint(1, 49)])
            gone = [p for (_, at), p in model.items() if at == pk]
            event_chunks.remove(raw, gone)
            for p in gone:
                del model[(p.term, p.pk)]
            new = [_posting(rng, term, pk) for term in rng.sample(TERMS, rng.randint(1, 3))]
        else:  # events deleted, several at once
            held = sorted({pk for _, pk in model})
            pks = set(rng.sample(held, min(3, len(held))))
            gone = [p for (_, at), p in model.items() if at in pks]
            event_chunks.remove(raw, gone)
            for p in gone:
                del model[(p.term, p.pk)]
            _check(raw, model)
            continue
        event_chunks.add(raw, new)
        model.update(((p.term, p.pk), p) for p in new)
        _check(raw, model)


def test_a_rebuild_fill_makes_what_the_writes_made(raw: sqlite3.Connection) -> None:
    rng = random.Random(11)
    postings = [_posting(rng, term, pk) for pk in range(1, 40) for term in rng.sample(TERMS, 2)]
    event_chunks.add(raw, postings)
    written = sorted(event_chunks.every_posting(raw)), event_chunks.term_rows(raw)
    for table in event_chunks.TABLE_NAMES:
        raw.execute(f"DELETE FROM {table}")
    event_chunks.fill(raw, sorted(postings, key=lambda p: (p.term, p.namespace, p.pool, p.pk)))
    assert (sorted(event_chunks.every_posting(raw)), event_chunks.term_rows(raw)) == written


@pytest.mark.parametrize(
    ("sql", "params"),
    [
        (event_chunks.READ, ('["w:kiln"]', "ns", '["conversation"]')),
        (event_chunks.LAST_CHUNKS, ('[["w:kiln", "ns", "conversation"]]',)),
    ],
    ids=["search read", "an event's append"],
)
def test_reads_probe_the_key(raw: sqlite3.Connection, sql: str, params: tuple[str, ...]) -> None:
    """Both statements reach a group's chunks by the primary key, never by a scan (a common
    word's chunks are many; every search and every event write runs one)."""
    steps = [row[3] for row in raw.execute(f"EXPLAIN QUERY PLAN {sql}", params)]
    reads = [s for s in steps if s.startswith(("SEARCH", "SCAN")) and "json_each" not in s]
    reads = [s for s in reads if s != "SCAN j VIRTUAL TABLE INDEX 1:"]  # the asked groups
    assert reads, steps
    assert all(s.startswith("SEARCH") and "USING PRIMARY KEY" in s for s in reads), steps


@pytest.mark.parametrize("seed", range(3))
def test_held_appends_write_at_the_end_or_before_a_read(raw: sqlite3.Connection, seed: int) -> None:
    """Inside a unit's ``held_appends`` the postings wait, and every read or removal on the
    connection sees them written first: the same postings as writing each at once."""
    rng = random.Random(seed)
    model: Model = {}
    written = 0  # the model's size when a read or a removal last wrote what was held
    with event_chunks.held_appends(raw):
        for pk in range(1, 30):
            new = [_posting(rng, term, pk) for term in rng.sample(TERMS, 2)]
            event_chunks.add(raw, new)
            model.update(((p.term, p.pk), p) for p in new)
            if rng.random() < 0.2:  # an edit of a held event takes its postings out
                gone = [p for (_, at), p in model.items() if at == pk]
                event_chunks.remove(raw, gone)
                for p in gone:
                    del model[(p.term, p.pk)]
                written = len(model)
            if rng.random() < 0.2:
                _check(raw, model)
                written = len(model)
        last = [_posting(rng, term, 30) for term in TERMS]
        event_chunks.add(raw, last)
        model.update(((p.term, p.pk), p) for p in last)
        stored = sum(len(pks) // 8 for (pks,) in raw.execute("SELECT pks FROM event_postings"))
        assert stored == written < len(model)  # what came since waits for the unit's end
    _check(raw, model)


def test_held_appends_write_each_chunk_once(raw: sqlite3.Connection) -> None:
    """Twelve events sharing a term in one unit: its chunks written once, not an event at a
    time (with chunks of three: four inserts, no update)."""
    statements: list[str] = []
    raw.set_trace_callback(statements.append)
    with event_chunks.held_appends(raw):
        for pk in range(1, 13):
            event_chunks.add(raw, [Posting("w:kiln", "ns", "agent", pk, 1, 9)])
    writes = [s for s in statements if "event_postings" in s and not s.startswith("SELECT")]
    assert [s.split()[0] for s in writes] == ["INSERT"] * 4
    assert [pk for pk, *_ in event_chunks.read(raw, ["w:kiln"], "ns", POOLS)[1]["w:kiln"]] == list(
        range(1, 13)
    )


def test_a_unit_left_by_an_error_writes_nothing_it_held(raw: sqlite3.Connection) -> None:
    with pytest.raises(RuntimeError), event_chunks.held_appends(raw):
        event_chunks.add(raw, [Posting("w:kiln", "ns", "agent", 7, 1, 9)])
        raise RuntimeError("the unit failed")
    assert event_chunks.every_posting(raw) == []
    event_chunks.add(raw, [Posting("w:kiln", "ns", "agent", 8, 1, 9)])  # outside: at once
    assert [p.pk for p in event_chunks.every_posting(raw)] == [8]
