"""The event channel's impact index: per term, every ``event_fts`` row holding it.

FTS5's ``ORDER BY rank`` scores its matches one row at a time (each row's instances
walked, its size read from the docsize table): 8–9 ms a query at 100k events, most of an
event search. Here each term keeps one row per event (its ``pk``, the term's count in it,
the event's token length), and the table's row and token totals are kept beside: the
candidates' bm25 is computed in bulk from one range read per term (``ranked_pks``).

It reproduces FTS5's ranking exactly, not approximately: FTS5's own ``bm25()`` (k1 1.2,
b 0.75, its idf with the 1e-6 floor, statistics over the whole table, every space), its
arithmetic in its order and phrase by phrase in the MATCH's order, so the same floats;
ties go to the lower rowid, as FTS5's sorter leaves them.

Kept wherever an ``event_fts`` row is written or deleted, in the same transaction, and read
from the FTS row's own text, so the two indexes never disagree. Derived, not history:
created and rebuilt by live code when ``INDEX_VERSION`` is not the stored one, never by a
migration; readers fall back to FTS5 while it is absent.

The same on PostgreSQL (its migrations make the tables; ``event_search`` holds the FTS rows'
text), so events rank there exactly as on SQLite. One difference: the totals row is moved
once, as a write's last statement (``CompatConnection.before_commit``), not at each event:
PostgreSQL's writers run side by side, and a row every event write updates, locked midway,
would make one writer wait for another's whole unit, or deadlock with a row the other
holds; locked last, it is held only while the commit travels.

On SQLite the postings are kept as arrays in chunks (``event_chunks``, version 2), which a
search reads a blob a term, of its own space; PostgreSQL keeps a row a posting (version 1),
since its writers run side by side and a chunk every event write rewrites would make them
wait on each other's common words.
"""

import json
import math
import sqlite3
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from itertools import chain
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from . import event_chunks
from .event_chunks import Posting
from .term_index import fts_terms
from .units import has_table, on_postgres

INDEX_VERSION = 1  # PostgreSQL's layout: a row a posting
CHUNKED_VERSION = 2  # SQLite's: ``event_chunks``
TABLE_NAMES = (*event_chunks.TABLE_NAMES, "event_term_totals")
ROW_TABLE_NAMES = ("event_terms", "event_term_totals")
_TOTALS = (
    "CREATE TABLE IF NOT EXISTS event_term_totals (id INTEGER PRIMARY KEY CHECK (id = 1), "
    "rows INTEGER NOT NULL, tokens INTEGER NOT NULL)"
)
VERSION_KEY = "event_term_index_version"
FTS5_K1, FTS5_B, FTS5_MIN_IDF = 1.2, 0.75, 1e-6  # fts5_aux.c: fts5Bm25Function
REBUILD_BATCH = 5000
NEWEST_PAGE = 256
_MOVED = "event_term_totals"


def current_version(raw: sqlite3.Connection) -> int:
    """The layout this backend keeps (the module's docstring says why they differ)."""
    return INDEX_VERSION if on_postgres(raw) else CHUNKED_VERSION


def layout_tables(raw: sqlite3.Connection) -> tuple[str, ...]:
    """The index's tables on this backend."""
    return ROW_TABLE_NAMES if on_postgres(raw) else TABLE_NAMES


def index_is_current(raw: sqlite3.Connection) -> bool:
    row = raw.execute("SELECT value FROM meta WHERE key = ?", (VERSION_KEY,)).fetchone()
    return row is not None and int(row[0]) == current_version(raw)


def has_index(raw: sqlite3.Connection) -> bool:
    """Whether the index exists and is current (readers rank through FTS5 otherwise)."""
    return _has_tables(raw) and index_is_current(raw)


def _has_tables(raw: sqlite3.Connection) -> bool:
    return has_table(raw, "event_terms" if on_postgres(raw) else "event_postings")


def rebuild(raw: sqlite3.Connection) -> None:
    """The whole index anew from ``event_fts``'s rows, a batch of events at a time
    (PostgreSQL's tables are its migrations'; SQLite's are made anew, an older layout's
    dropped)."""
    if not on_postgres(raw):
        drop(raw)
        for statement in (*event_chunks.TABLES, _TOTALS):
            raw.execute(statement)
    for table in layout_tables(raw):
        raw.execute(f"DELETE FROM {table}")
    raw.execute("INSERT INTO event_term_totals(id, rows, tokens) VALUES (1, 0, 0)")
    _pending(raw)[:] = [0, 0]
    if on_postgres(raw):
        for batch in _fts_batches(raw):
            _insert(raw, batch)
    else:
        _fill_chunks(raw)
    raw.execute(
        "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)",
        (VERSION_KEY, str(current_version(raw))),
    )


def _fts_batches(raw: sqlite3.Connection) -> Iterator[list["Indexed"]]:
    """Every FTS row as the index holds it, ``REBUILD_BATCH`` at a time in pk order."""
    last = 0
    while True:
        rows = raw.execute(
            "SELECT c.id, c.c0, e.namespace, e.pool FROM event_fts_content c "
            "LEFT JOIN events e ON e.pk = c.id WHERE c.id > ? ORDER BY c.id LIMIT ?",
            (last, REBUILD_BATCH),
        ).fetchall()
        if not rows:
            return
        yield [Indexed(int(pk), fts_terms(text or ""), *owner) for pk, text, *owner in rows]
        last = int(rows[-1][0])


def _fill_chunks(raw: sqlite3.Connection) -> None:
    """SQLite's chunks from every FTS row: the postings gathered in a temporary table, then
    read back in key order (memory holds a batch of rows, then a group's postings)."""
    raw.execute(
        "CREATE TEMP TABLE IF NOT EXISTS sg_event_postings (term TEXT, namespace TEXT, "
        "pool TEXT, pk INTEGER, count INTEGER, length INTEGER)"
    )
    raw.execute("DELETE FROM temp.sg_event_postings")
    for batch in _fts_batches(raw):
        raw.executemany(
            "INSERT INTO temp.sg_event_postings VALUES (?, ?, ?, ?, ?, ?)", _postings_of(batch)
        )
        _move_totals(raw, len(batch), sum(len(row.tokens) for row in batch))
    ordered = raw.execute(
        "SELECT term, namespace, pool, pk, count, length FROM temp.sg_event_postings "
        "ORDER BY term, namespace, pool, pk"
    )
    event_chunks.fill(raw, (Posting(*row) for row in ordered))
    raw.execute("DROP TABLE temp.sg_event_postings")


def _postings_of(documents: Sequence["Indexed"]) -> list[Posting]:
    """Each term of each FTS row, a row without an event under the empty space and pool."""
    return [
        Posting(term, row.namespace or "", row.pool or "", row.pk, count, len(row.tokens))
        for row in documents
        for term, count in Counter(row.tokens).items()
    ]


class Indexed(NamedTuple):
    """An event's FTS row as the index holds it: its tokens, its event's space and pool
    (neither ever changes; ``None`` for a row without an event, which no search finds)."""

    pk: int
    tokens: list[str]
    namespace: str | None
    pool: str | None


def drop(raw: sqlite3.Connection) -> None:
    """No index at all (writes skip it, readers use FTS5) until ``rebuild``."""
    event_chunks.drop_held(raw)
    for table in dict.fromkeys((*TABLE_NAMES, *ROW_TABLE_NAMES)):
        raw.execute(f"DROP TABLE IF EXISTS {table}")


def add(raw: sqlite3.Connection, pk: int, tokens: Sequence[str]) -> None:
    """Index one event's new FTS row (``tokens`` as the row holds them)."""
    if _has_tables(raw):
        owner = raw.execute("SELECT namespace, pool FROM events WHERE pk = ?", (pk,)).fetchone()
        _insert(raw, [Indexed(pk, list(tokens), *(owner or (None, None)))])


def _insert(raw: sqlite3.Connection, documents: Sequence[Indexed]) -> None:
    if not on_postgres(raw):
        event_chunks.add(raw, _postings_of(documents))
    else:
        postings = sorted(
            (p.term, p.pk, p.times, p.length, p.namespace or None, p.pool or None)
            for p in _postings_of(documents)
        )
        raw.executemany(
            "INSERT INTO event_terms(term, pk, count, length, namespace, pool) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            postings,
        )
    _move_totals(raw, len(documents), sum(len(row.tokens) for row in documents))


def remove(raw: sqlite3.Connection, pks: Iterable[int]) -> None:
    """Take events' FTS rows out, read before FTS5 deletes them (a pk without a row is
    skipped), with their events' space and pool (read before the events are deleted):
    their postings and their share of the totals."""
    wanted = list(pks)
    if not wanted or not _has_tables(raw):
        return
    rows = raw.execute(
        "SELECT c.id, c.c0, e.namespace, e.pool FROM event_fts_content c "
        "LEFT JOIN events e ON e.pk = c.id WHERE c.id IN (SELECT value FROM json_each(?))",
        (json.dumps(wanted),),
    ).fetchall()
    documents = [Indexed(int(pk), fts_terms(text or ""), *owner) for pk, text, *owner in rows]
    if not on_postgres(raw):
        event_chunks.remove(raw, _postings_of(documents))
    else:
        raw.executemany(
            "DELETE FROM event_terms WHERE term = ? AND pk = ?",
            [(term, row.pk) for row in documents for term in set(row.tokens)],
        )
    _move_totals(raw, -len(documents), -sum(len(row.tokens) for row in documents))


def stored_postings(raw: sqlite3.Connection) -> list[tuple[object, ...]]:
    """Every posting as (term, pk, count, length, space, pool), space and pool ``None`` for a
    row without an event, sorted: the same on both layouts (what checks compare)."""
    if on_postgres(raw):
        rows = raw.execute("SELECT term, pk, count, length, namespace, pool FROM event_terms")
        return sorted(tuple(row) for row in rows)
    return sorted(
        (p.term, p.pk, p.times, p.length, p.namespace or None, p.pool or None)
        for p in event_chunks.every_posting(raw)
    )


def remove_space(raw: sqlite3.Connection, space: str) -> None:
    """``remove`` of every event of a space (a space's deletion)."""
    pks = [row[0] for row in raw.execute("SELECT pk FROM events WHERE namespace = ?", (space,))]
    for start in range(0, len(pks), 500):
        remove(raw, pks[start : start + 500])


def _move_totals(raw: sqlite3.Connection, rows: int, tokens: int) -> None:
    """The totals moved now (SQLite: one writer at a time) or, on PostgreSQL, at the
    unit's end, once for all its events (the module's docstring says why)."""
    if not on_postgres(raw):
        _update_totals(raw, rows, tokens)
        return
    moved = _pending(raw)
    moved[0], moved[1] = moved[0] + rows, moved[1] + tokens
    at_end = raw.before_commit  # type: ignore[attr-defined]
    at_end(_MOVED, lambda: _update_totals(raw, *_pending(raw)))


def _update_totals(raw: sqlite3.Connection, rows: int, tokens: int) -> None:
    if rows or tokens:
        raw.execute(
            "UPDATE event_term_totals SET rows = rows + ?, tokens = tokens + ? WHERE id = 1",
            (rows, tokens),
        )


def _pending(raw: sqlite3.Connection) -> list[int]:
    """This PostgreSQL unit's rows and tokens not moved yet (on SQLite, none)."""
    pending: dict[str, list[int]] | None = getattr(raw, "pending", None)
    return [0, 0] if pending is None else pending.setdefault(_MOVED, [0, 0])


def ranked_pks(
    raw: sqlite3.Connection, terms: Sequence[str], space: str, pools: Sequence[str]
) -> dict[str, list[int]]:
    """Per pool, the pks of ``space``'s events holding any of ``terms``, in the order of
    FTS5's ``ORDER BY rank`` for the MATCH ``term OR term …`` (the terms in that order):
    best bm25 first (scored with statistics over every space, as FTS5 does), ties by pk."""
    phrases = list(dict.fromkeys(terms))
    totals, held = _phrase_postings(raw, phrases, space, pools)
    if totals is None or not held:
        return {pool: [] for pool in pools}
    phrase_rows = [Phrase(f[:, 0], f[:, 1], f[:, 2], n_hit) for f, n_hit in held]
    pks, score, places = fts5_scored(phrase_rows, totals[0], totals[1])
    owner = np.full(len(pks), -1)
    for (found, _), at in zip(held, places, strict=True):
        owner[at] = found[:, 3]
    order = np.lexsort((pks, -score))
    pks, owner = pks[order], owner[order]
    return {pool: pks[owner == n].tolist() for n, pool in enumerate(pools)}


Held = list[tuple[npt.NDArray[np.int64], int]]
"""Per phrase held by some FTS row, in the MATCH's order: its postings in the space's pools
as (pk, count, length, the pool's index) rows, and the rows of every space holding it."""


def _phrase_postings(
    raw: sqlite3.Connection, phrases: Sequence[str], space: str, pools: Sequence[str]
) -> tuple[tuple[int, int] | None, Held]:
    """(the totals, rows and tokens, this unit's unmoved share included; ``Held``)."""
    if on_postgres(raw):
        totals, postings = _postings(raw, phrases, space, pools)
        found = [postings[phrase] for phrase in phrases if len(postings[phrase])]
        return totals, [(rows[rows[:, 3] >= 0], len(rows)) for rows in found]
    stored = raw.execute("SELECT rows, tokens FROM event_term_totals WHERE id = 1").fetchone()
    counts, postings = event_chunks.read(raw, phrases, space, pools)
    held = [(postings[phrase], counts[phrase]) for phrase in phrases if counts.get(phrase)]
    return (None if stored is None else (int(stored[0]), int(stored[1]))), held


class Phrase(NamedTuple):
    """One MATCH phrase's rows: their keys, its count and their lengths in each, and the
    rows of the whole table that hold it."""

    rows: npt.NDArray[Any]
    counts: npt.NDArray[Any]
    lengths: npt.NDArray[Any]
    n_hit: int


def fts5_scored(
    phrases: Sequence[Phrase], n_rows: int, n_tokens: int
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64], list[npt.NDArray[np.intp]]]:
    """(the rows holding any phrase, ascending; their FTS5 bm25, summed phrase by phrase in
    the MATCH's order as FTS5 sums it; where each phrase's rows sit among them)."""
    avgdl = float(n_tokens) / float(n_rows)
    rows = np.unique(np.concatenate([p.rows.astype(np.int64) for p in phrases]))
    score = np.zeros(len(rows))
    places = []
    for phrase in phrases:
        at = np.searchsorted(rows, phrase.rows)
        score[at] += fts5_bm25(phrase.counts, phrase.lengths, n_rows, phrase.n_hit, avgdl)
        places.append(at)
    return rows, score, places


def fts5_bm25(
    counts: npt.NDArray[Any], lengths: npt.NDArray[Any], n_rows: int, n_hit: int, avgdl: float
) -> npt.NDArray[np.float64]:
    """One phrase's term of FTS5's bm25 for each row holding it (``fts5Bm25Function``:
    ``idf * tf(k1+1) / (tf + k1(1-b+bD/avgdl))``, the same operations in the same order),
    ``n_hit`` the rows of the whole table that hold it."""
    idf = math.log((n_rows - n_hit + 0.5) / (n_hit + 0.5))
    idf = idf if idf > 0.0 else FTS5_MIN_IDF
    tf, length = counts.astype(np.float64), lengths.astype(np.float64)
    return idf * (
        (tf * (FTS5_K1 + 1.0)) / (tf + FTS5_K1 * ((1 - FTS5_B) + FTS5_B * length / avgdl))
    )


def _postings(
    raw: sqlite3.Connection, phrases: Sequence[str], space: str, pools: Sequence[str]
) -> tuple[tuple[int, int] | None, dict[str, npt.NDArray[np.int64]]]:
    """The totals (rows, tokens: this unit's unmoved share included), and each phrase's
    postings over every space: (pk, count, length, owner) rows, owner the index in
    ``pools`` of the event's pool when it is in ``space``, else -1. One statement for all
    (on PostgreSQL a statement is a round trip): each row says its phrase, -1 the totals."""
    phrase = " ".join(f"WHEN ? THEN {n}" for n in range(len(phrases)))
    owner = " ".join(f"WHEN ? THEN {n}" for n in range(len(pools)))
    rows = raw.execute(
        "SELECT -1, rows, tokens, 0, 0 FROM event_term_totals WHERE id = 1 UNION ALL "
        f"SELECT CASE term {phrase} END, pk, count, length, CASE WHEN namespace IS NOT ? "
        f"THEN -1 ELSE CASE pool {owner} ELSE -1 END END FROM event_terms "
        "WHERE term IN (SELECT value FROM json_each(?))",
        (*phrases, space, *pools, json.dumps(list(phrases))),
    ).fetchall()  # flattened for numpy: ~3x faster than converting a list of tuples
    flat = np.fromiter(chain.from_iterable(rows), dtype=np.int64, count=5 * len(rows))
    found = flat.reshape(-1, 5)
    stored, moved = found[found[:, 0] == -1, 1:3], _pending(raw)
    totals = (int(stored[0, 0]) + moved[0], int(stored[0, 1]) + moved[1]) if len(stored) else None
    return totals, {term: found[found[:, 0] == n, 1:] for n, term in enumerate(phrases)}


def newest_pks(raw: sqlite3.Connection, term: str, space: str, pool: str) -> Iterator[int]:
    """The pks of ``space``'s ``pool`` holding ``term``, newest (highest pk) first: read a
    page (a chunk on SQLite) at a time (a common term's postings are many; PostgreSQL reads
    a result whole)."""
    if not on_postgres(raw):
        yield from event_chunks.newest_pks(raw, term, space, pool)
        return
    sql = "SELECT pk FROM event_terms WHERE term = ? AND namespace = ? AND pool = ? "
    rows = raw.execute(f"{sql}ORDER BY pk DESC LIMIT ?", (term, space, pool, NEWEST_PAGE))
    while found := [int(row[0]) for row in rows.fetchall()]:
        yield from found
        if len(found) < NEWEST_PAGE:
            return
        rows = raw.execute(
            f"{sql}AND pk < ? ORDER BY pk DESC LIMIT ?",
            (term, space, pool, found[-1], NEWEST_PAGE),
        )
