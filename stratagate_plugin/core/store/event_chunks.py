"""The event impact index's postings on SQLite: per term, space and pool, arrays in chunks.

One row a posting (``event_terms``, still PostgreSQL's layout) made a search turn each of
its ~2,000 postings into a Python tuple: 1.6 ms of a recall's event ranking at 100k events,
0.6 of a search's, and it read every space's postings of a term. Here a term's postings in
one space and pool are arrays (pk, the term's count in the event, the event's length) in
chunks of at most ``CHUNK`` postings, each keyed by its first pk: a search reads one or a
few blobs per term, of its own space only. ``event_term_rows`` keeps each term's FTS rows
over every space, the document frequency FTS5's bm25 uses.

A new event's pk comes after every other, so its write appends to each term's last chunk;
an edit's re-index puts its pk back in the chunk whose range holds it. A chunk grown past
``CHUNK`` is split, an emptied one deleted. An FTS row without an event (none is searched)
keeps its postings under the empty space and pool.

Inside a write unit (``held_appends``) new postings are held and written together at its
end, or before anything on the connection reads or removes postings: a unit that writes
many events (an import's commit) rewrites each term's last chunk once, not once an event.
"""

import json
import sqlite3
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from itertools import groupby
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

CHUNK = 128
"""Postings a chunk holds at most: an event's write rewrites at most ~2 KB a term (1.33 ms an
event at 100k events against 1.64 with 512; a search reads 0.52 ms of postings against
0.51, a 47-term recall's; the row layout wrote an event in ~0.7 ms and read 2.35)."""
_PKS, _NUMBERS = np.dtype("<i8"), np.dtype("<u4")
TABLE_NAMES = ("event_postings", "event_term_rows")
TABLES = (
    "CREATE TABLE IF NOT EXISTS event_postings (term TEXT NOT NULL, namespace TEXT NOT NULL, "
    "pool TEXT NOT NULL, chunk INTEGER NOT NULL, pks BLOB NOT NULL, counts BLOB NOT NULL, "
    "lengths BLOB NOT NULL, PRIMARY KEY (term, namespace, pool, chunk)) WITHOUT ROWID",
    "CREATE TABLE IF NOT EXISTS event_term_rows (term TEXT PRIMARY KEY, rows INTEGER NOT NULL) "
    "WITHOUT ROWID",
)
_GROUP = "term = ? AND namespace = ? AND pool = ?"
_ASKED = (
    "{0}.term = json_extract(j.value, '$[0]') AND {0}.namespace = json_extract(j.value, '$[1]') "
    "AND {0}.pool = json_extract(j.value, '$[2]')"
)


class Posting(NamedTuple):
    """One term of one event's FTS row (``namespace`` and ``pool`` empty without an event)."""

    term: str
    namespace: str
    pool: str
    pk: int
    times: int  # the term's count in the event's row
    length: int


Group = tuple[str, str, str]  # term, namespace, pool
Entries = dict[int, tuple[int, int]]  # pk → (count, length)


_HELD: dict[int, list[Posting]] = {}
"""Per connection (by ``id``, for the unit's length: sqlite3 connections take neither
attributes nor weak references), the postings its write unit has added and not written."""


@contextmanager
def held_appends(raw: sqlite3.Connection) -> Iterator[None]:
    """Within: ``add`` holds the postings; at the end they are written in one ``add`` (8,000
    imported events: 0.37 s against 1.86 one event at a time). Left by an exception, they
    are dropped with the transaction it rolls back."""
    _HELD[id(raw)] = []
    try:
        yield
        write_held(raw)
    finally:
        _HELD.pop(id(raw), None)


def write_held(raw: sqlite3.Connection) -> None:
    """The held postings written now (before a read, a removal or the unit's end)."""
    held = _HELD.get(id(raw))
    if held:
        postings = held[:]
        held.clear()
        _write(raw, postings)


def drop_held(raw: sqlite3.Connection) -> None:
    """Forget the held postings (a rebuild reads every FTS row, theirs included)."""
    if (held := _HELD.get(id(raw))) is not None:
        held.clear()


def add(raw: sqlite3.Connection, postings: Sequence[Posting]) -> None:
    """Index new postings (events' FTS rows written) and count their terms' rows: held
    inside ``held_appends``, else written now."""
    held = _HELD.get(id(raw))
    if held is None:
        _write(raw, postings)
    else:
        held.extend(postings)


def _write(raw: sqlite3.Connection, postings: Sequence[Posting]) -> None:
    """A group given one pk past its last chunk's (an event's write: every group) is
    appended in bulk: its chunk read and written by one statement each for all of them."""
    groups: dict[Group, Entries] = {}
    for posting in postings:
        groups.setdefault(_group(posting), {})[posting.pk] = (posting.times, posting.length)
    appended = _append_lone(raw, {g: added for g, added in groups.items() if len(added) == 1})
    for group in sorted(set(groups) - appended):
        added = groups[group]
        for chunk, inside in _segments(raw, group, sorted(added), adding=True):
            _add_to_chunk(raw, group, chunk, {pk: added[pk] for pk in inside})
    _count_rows(raw, Counter(p.term for p in postings))


def _append_lone(raw: sqlite3.Connection, groups: dict[Group, Entries]) -> set[Group]:
    """Of groups given one pk, those whose last chunk ends before it and has room: each
    appended to (the rest are left to the general path)."""
    if not groups:
        return set()
    asked = [list(group) for group in sorted(groups)]
    rows = raw.execute(LAST_CHUNKS, (json.dumps(asked),)).fetchall()
    writes = []
    for term, space, pool, key, *blobs in rows:
        group, stored = (term, space, pool), (bytes(blobs[0]), bytes(blobs[1]), bytes(blobs[2]))
        added = groups[group]
        size = len(stored[0]) // _PKS.itemsize
        if _last_pk(stored[0]) < min(added) and size < CHUNK:
            joined = tuple(old + new for old, new in zip(stored, _blobs(added), strict=True))
            writes.append((group, (*joined, *group, key)))
    raw.executemany(
        f"UPDATE event_postings SET pks = ?, counts = ?, lengths = ? WHERE {_GROUP} AND chunk = ?",
        [values for _, values in writes],
    )
    return {group for group, _ in writes}


LAST_CHUNKS = (
    "SELECT p.term, p.namespace, p.pool, p.chunk, p.pks, p.counts, p.lengths "
    f"FROM json_each(?) j CROSS JOIN event_postings p ON {_ASKED.format('p')} AND p.chunk = "
    f"(SELECT q.chunk FROM event_postings q WHERE {_ASKED.format('q')} "
    "ORDER BY q.chunk DESC LIMIT 1)"
)
"""Each asked (term, space, pool) group's last chunk: a key probe a group."""


def _last_pk(pks: bytes) -> int:
    return int(np.frombuffer(pks[-_PKS.itemsize :], _PKS)[0])


def remove(raw: sqlite3.Connection, postings: Sequence[Posting]) -> None:
    """Take postings out (events' FTS rows deleted; only term, space, pool and pk matter)."""
    if not postings:
        return  # a new event's index first takes out the row it never had
    write_held(raw)
    for group, found in groupby(sorted(postings), key=_group):
        for chunk, inside in _segments(raw, group, sorted({p.pk for p in found})):
            if chunk is not None:
                entries = _entries(chunk.blobs)
                for pk in inside:
                    entries.pop(pk, None)
                _rewrite(raw, group, chunk.key, entries)
    _count_rows(raw, Counter(p.term for p in postings), sign=-1)


def _group(posting: Posting) -> Group:
    return posting.term, posting.namespace, posting.pool


class Chunk(NamedTuple):
    key: int
    blobs: tuple[bytes, bytes, bytes]  # pks, counts, lengths


def _segments(
    raw: sqlite3.Connection, group: Group, pks: list[int], adding: bool = False
) -> Iterator[tuple[Chunk | None, list[int]]]:
    """The sorted ``pks`` cut by the chunks whose ranges hold them: (a chunk, or ``None``
    where none does, its pks), each chunk read when its turn comes (after the writes of
    the ones before). Adding, a pk before every chunk joins the first. A lone pk (an
    event's write) asks for no following chunk."""
    at = 0
    while at < len(pks):
        home = _chunk(raw, group, "chunk <= ? ORDER BY chunk DESC", pks[at])
        if home is None and adding:
            home = _chunk(raw, group, "chunk >= ? ORDER BY chunk", pks[at])
        end = len(pks)
        if at + 1 < len(pks):
            after = _following(raw, group, pks[at] if home is None else max(home.key, pks[at]))
            end = next(
                (n for n in range(at + 1, len(pks)) if after is not None and pks[n] >= after), end
            )
        yield home, pks[at:end]
        at = end


def _chunk(raw: sqlite3.Connection, group: Group, where: str, pk: int) -> Chunk | None:
    row = raw.execute(
        f"SELECT chunk, pks, counts, lengths FROM event_postings WHERE {_GROUP} AND {where} "
        "LIMIT 1",
        (*group, pk),
    ).fetchone()
    return (
        None if row is None else Chunk(int(row[0]), (bytes(row[1]), bytes(row[2]), bytes(row[3])))
    )


def _following(raw: sqlite3.Connection, group: Group, pk: int) -> int | None:
    row = raw.execute(
        f"SELECT chunk FROM event_postings WHERE {_GROUP} AND chunk > ? ORDER BY chunk LIMIT 1",
        (*group, pk),
    ).fetchone()
    return None if row is None else int(row[0])


def _add_to_chunk(
    raw: sqlite3.Connection, group: Group, chunk: Chunk | None, added: Entries
) -> None:
    """Past the chunk's last pk and within ``CHUNK``, the bytes are joined undecoded."""
    if chunk is None:
        _rewrite(raw, group, None, added)
        return
    size = len(chunk.blobs[0]) // _PKS.itemsize
    if _last_pk(chunk.blobs[0]) < min(added) and size + len(added) <= CHUNK:
        joined = tuple(old + new for old, new in zip(chunk.blobs, _blobs(added), strict=True))
        raw.execute(
            f"UPDATE event_postings SET pks = ?, counts = ?, lengths = ? WHERE {_GROUP} "
            "AND chunk = ?",
            (*joined, *group, chunk.key),
        )
        return
    entries = _entries(chunk.blobs)
    entries.update(added)
    _rewrite(raw, group, chunk.key, entries)


def _entries(stored: tuple[bytes, bytes, bytes]) -> Entries:
    pks, counts, lengths = (np.frombuffer(blob, dtype).tolist() for blob, dtype in _typed(stored))
    return dict(zip(pks, zip(counts, lengths, strict=True), strict=True))


def _typed(stored: Sequence[bytes]) -> list[tuple[bytes, np.dtype]]:
    return list(zip(stored, (_PKS, _NUMBERS, _NUMBERS), strict=True))


def _rewrite(raw: sqlite3.Connection, group: Group, chunk: int | None, entries: Entries) -> None:
    """The chunk replaced by ``entries`` in pieces of at most ``CHUNK`` (none: deleted)."""
    if chunk is not None:
        raw.execute(f"DELETE FROM event_postings WHERE {_GROUP} AND chunk = ?", (*group, chunk))
    ordered = sorted(entries.items())
    pieces = [dict(ordered[at : at + CHUNK]) for at in range(0, len(ordered), CHUNK)]
    raw.executemany(
        "INSERT INTO event_postings(term, namespace, pool, chunk, pks, counts, lengths) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)",
        [(*group, min(piece), *_blobs(piece)) for piece in pieces],
    )


def _blobs(entries: Entries) -> tuple[bytes, bytes, bytes]:
    ordered = sorted(entries.items())
    return (
        np.array([pk for pk, _ in ordered], _PKS).tobytes(),
        np.array([count for _, (count, _) in ordered], _NUMBERS).tobytes(),
        np.array([length for _, (_, length) in ordered], _NUMBERS).tobytes(),
    )


def _count_rows(raw: sqlite3.Connection, terms: Counter[str], sign: int = 1) -> None:
    raw.executemany(
        "INSERT INTO event_term_rows(term, rows) VALUES (?, ?) "
        "ON CONFLICT(term) DO UPDATE SET rows = rows + excluded.rows",
        [(term, sign * n) for term, n in sorted(terms.items())],
    )
    if sign < 0:
        raw.execute(
            "DELETE FROM event_term_rows WHERE term IN (SELECT value FROM json_each(?)) "
            "AND rows <= 0",
            (json.dumps(sorted(terms)),),
        )


def fill(raw: sqlite3.Connection, ordered: Iterable[Posting]) -> None:
    """Every chunk and row count made from postings in (term, space, pool, pk) order, into
    empty tables (a rebuild): one pass, a group's postings held at a time."""
    drop_held(raw)
    rows: Counter[str] = Counter()
    batch: list[tuple[object, ...]] = []
    for group, found in groupby(ordered, key=_group):
        entries = {p.pk: (p.times, p.length) for p in found}
        rows[group[0]] += len(entries)
        items = sorted(entries.items())
        for at in range(0, len(items), CHUNK):
            piece = dict(items[at : at + CHUNK])
            batch.append((*group, min(piece), *_blobs(piece)))
        if len(batch) >= 2000:
            _insert_chunks(raw, batch)
    _insert_chunks(raw, batch)
    raw.executemany("INSERT INTO event_term_rows(term, rows) VALUES (?, ?)", sorted(rows.items()))


def _insert_chunks(raw: sqlite3.Connection, batch: list[tuple[object, ...]]) -> None:
    raw.executemany(
        "INSERT INTO event_postings(term, namespace, pool, chunk, pks, counts, lengths) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)",
        batch,
    )
    batch.clear()


Arrays = npt.NDArray[np.int64]  # rows of (pk, count, length, pool's index)
READ = (
    "SELECT term, pool, pks, counts, lengths FROM event_postings WHERE term IN "
    "(SELECT value FROM json_each(?)) AND namespace = ? AND pool IN "
    "(SELECT value FROM json_each(?)) ORDER BY term, pool, chunk"
)
"""A search's postings: the asked terms' chunks in one space's pools, by key."""


def read(
    raw: sqlite3.Connection, terms: Sequence[str], space: str, pools: Sequence[str]
) -> tuple[dict[str, int], dict[str, Arrays]]:
    """(each term's FTS rows over every space, each term's postings in ``space``'s
    ``pools``: (pk, count, length, the pool's index) rows, by pk within a pool)."""
    write_held(raw)
    asked = json.dumps(list(terms))
    rows = dict(
        raw.execute(
            "SELECT term, rows FROM event_term_rows WHERE term IN (SELECT value FROM json_each(?))",
            (asked,),
        ).fetchall()
    )
    chunks: dict[str, list[Arrays]] = {}
    for term, pool, pks, counts, lengths in raw.execute(
        READ, (asked, space, json.dumps(list(pools)))
    ):
        found = np.empty((len(pks) // _PKS.itemsize, 4), np.int64)
        found[:, 0] = np.frombuffer(pks, _PKS)
        found[:, 1] = np.frombuffer(counts, _NUMBERS)
        found[:, 2] = np.frombuffer(lengths, _NUMBERS)
        found[:, 3] = pools.index(pool)
        chunks.setdefault(term, []).append(found)
    empty = np.empty((0, 4), np.int64)
    return rows, {term: np.concatenate(chunks[term]) if term in chunks else empty for term in terms}


def newest_pks(raw: sqlite3.Connection, term: str, space: str, pool: str) -> Iterator[int]:
    """The group's pks, highest first, a chunk read at a time."""
    write_held(raw)
    before = None
    while True:
        where = "" if before is None else " AND chunk < ?"
        row = raw.execute(
            f"SELECT chunk, pks FROM event_postings WHERE {_GROUP}{where} "
            "ORDER BY chunk DESC LIMIT 1",
            (term, space, pool) if before is None else (term, space, pool, before),
        ).fetchone()
        if row is None:
            return
        before = int(row[0])
        yield from reversed(np.frombuffer(row[1], _PKS).tolist())


def every_posting(raw: sqlite3.Connection) -> list[Posting]:
    """Every stored posting (what a check compares with a rebuild's)."""
    write_held(raw)
    found = []
    rows = raw.execute(
        "SELECT term, namespace, pool, pks, counts, lengths FROM event_postings"
    ).fetchall()
    for term, space, pool, pks, counts, lengths in rows:
        for pk, (count, length) in _entries((bytes(pks), bytes(counts), bytes(lengths))).items():
            found.append(Posting(term, space, pool, pk, count, length))
    return found


def term_rows(raw: sqlite3.Connection) -> dict[str, int]:
    write_held(raw)
    return dict(raw.execute("SELECT term, rows FROM event_term_rows").fetchall())
