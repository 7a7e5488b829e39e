"""The raw channel's impact index: per space and term, the sealed messages holding it.

FTS5 answers "which messages hold any of these words, best ``rank`` first" by walking every
posting of every word, so a question of common words costs what the corpus holds. Here each
term keeps its postings as arrays (message ``fts_rowid``, the term's count in it, the
message's token length) in chunks of ``CHUNK`` rowids, plus its message and block
frequencies and every indexed block's token length: ranking reads a few blobs per term
and scores them in bulk (``retrieval/impact.py``), and the BM25 statistics are lookups.
The postings table is clustered on (space, term, chunk) (``WITHOUT ROWID``, version 2):
a common word's few hundred chunks lie side by side instead of one page each (a
rowid table kept them in insertion order, every term of a seal together).

Kept in the writing transaction beside the FTS rows (``search_index.index_messages`` and
``unindex_messages``, a purge's re-index), and read from them: a message's terms are its
FTS row's, so the two indexes never disagree. Like the FTS index it is derived, not history:
created and rebuilt by live code when its ``INDEX_VERSION`` is not the stored one, never
by a migration. An import's source message counts in the statistics (as it does in FTS5's)
but has no postings: it is provenance, never a raw hit.
"""

import json
import sqlite3
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import groupby

import numpy as np

from ..records import IMPORT_THREAD_PREFIX
from ..retrieval.storage import LENGTH_CAP, TermPostings
from . import message_facts
from .units import has_table

INDEX_VERSION = 2
CHUNK_BITS = 11  # 2,048 rowids a chunk: a block's append rewrites at most ~12 KB a term
MAX_COUNT = LENGTH_CAP
_ROWIDS, _COUNTS = np.dtype("<i4"), np.dtype("<u2")
TABLE_NAMES = ("term_postings", "term_counts", "block_lengths")
_TABLES = (
    "CREATE TABLE IF NOT EXISTS term_postings (namespace TEXT NOT NULL, term TEXT NOT NULL, "
    "chunk INTEGER NOT NULL, rowids BLOB NOT NULL, counts BLOB NOT NULL, lengths BLOB NOT NULL, "
    "PRIMARY KEY (namespace, term, chunk)) WITHOUT ROWID",
    "CREATE TABLE IF NOT EXISTS term_counts (namespace TEXT NOT NULL, term TEXT NOT NULL, "
    "messages INTEGER NOT NULL, blocks INTEGER NOT NULL, PRIMARY KEY (namespace, term)) "
    "WITHOUT ROWID",
    "CREATE TABLE IF NOT EXISTS block_lengths (block_id TEXT PRIMARY KEY, "
    "namespace TEXT NOT NULL, tokens INTEGER NOT NULL) WITHOUT ROWID",
)


@dataclass(frozen=True)
class IndexedMessage:
    """A message as the index holds it: its space, rowid, block, tokens, and whether it is
    a conversation message (an import's source is not)."""

    namespace: str
    rowid: int
    block_id: str
    tokens: list[str]
    searchable: bool


VERSION_KEY = "term_index_version"


def index_is_current(raw: sqlite3.Connection) -> bool:
    row = raw.execute("SELECT value FROM meta WHERE key = ?", (VERSION_KEY,)).fetchone()
    return row is not None and int(row[0]) == INDEX_VERSION


def rebuild(raw: sqlite3.Connection) -> None:
    """The whole index anew from the FTS rows: counts block by block, then postings chunk
    by chunk (two ordered scans; memory holds one chunk's postings at a time). The tables
    are dropped first, so an older version's layout is replaced, not refilled."""
    for table in TABLE_NAMES:
        raw.execute(f"DROP TABLE IF EXISTS {table}")
    for statement in _TABLES:
        raw.execute(statement)
    refill(raw)


def refill(raw: sqlite3.Connection) -> None:
    """``rebuild`` into tables that exist (PostgreSQL's schema makes them)."""
    for table in TABLE_NAMES:
        raw.execute(f"DELETE FROM {table}")
    _rebuild_counts(raw)
    _rebuild_postings(raw)
    raw.execute(
        "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)",
        (VERSION_KEY, str(INDEX_VERSION)),
    )


_EVERY = (
    "SELECT m.namespace, m.fts_rowid, m.block_id, m.thread_id, f.tokens FROM messages m "
    "JOIN message_fts f ON f.rowid = m.fts_rowid WHERE m.block_id IS NOT NULL ORDER BY "
)


def _rebuild_counts(raw: sqlite3.Connection) -> None:
    rows = raw.execute(_EVERY + "m.namespace, m.block_id")
    for space, group in groupby(rows, key=lambda row: row[0]):
        frequency: Counter[str] = Counter()
        spread: Counter[str] = Counter()
        lengths = []
        for block_id, block in groupby(group, key=lambda row: row[2]):
            documents = [fts_terms(row[4]) for row in block]
            for terms in documents:
                frequency.update(set(terms))
            spread.update({term for terms in documents for term in terms})
            lengths.append((block_id, space, sum(len(terms) for terms in documents)))
        raw.executemany(
            "INSERT INTO term_counts(namespace, term, messages, blocks) VALUES (?, ?, ?, ?)",
            [(space, term, n, spread[term]) for term, n in frequency.items()],
        )
        raw.executemany(
            "INSERT INTO block_lengths(block_id, namespace, tokens) VALUES (?, ?, ?)", lengths
        )


def _rebuild_postings(raw: sqlite3.Connection) -> None:
    rows = raw.execute(_EVERY + "m.namespace, m.fts_rowid")
    for (space, chunk), group in groupby(rows, key=lambda r: (r[0], r[1] >> CHUNK_BITS)):
        entries: dict[str, list[tuple[int, int, int]]] = {}
        for row in group:
            message = _indexed(*row)
            if message.searchable:
                for term, count in Counter(message.tokens).items():
                    entries.setdefault(term, []).append((message.rowid, count, len(message.tokens)))
        raw.executemany(
            "INSERT INTO term_postings(namespace, term, chunk, rowids, counts, lengths) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            [(space, term, chunk, *_blobs(found)) for term, found in entries.items()],
        )


def messages_at(raw: sqlite3.Connection, rowids: Sequence[int]) -> list[IndexedMessage]:
    """The messages with these rowids as their FTS rows hold them now."""
    rows = raw.execute(
        "SELECT m.namespace, m.fts_rowid, m.block_id, m.thread_id, f.tokens FROM messages m "
        "JOIN message_fts f ON f.rowid = m.fts_rowid "
        "WHERE m.fts_rowid IN (SELECT value FROM json_each(?)) ORDER BY m.fts_rowid",
        (_json_list(rowids),),
    ).fetchall()
    return [_indexed(*row) for row in rows if row[2] is not None]


def described(raw: sqlite3.Connection, tokens_of: Mapping[int, list[str]]) -> list[IndexedMessage]:
    """The messages with these rowids, given the tokens their FTS rows were just made of
    (a seal or an import: no FTS row read back)."""
    rows = raw.execute(
        "SELECT namespace, fts_rowid, block_id, thread_id FROM messages "
        "WHERE fts_rowid IN (SELECT value FROM json_each(?)) ORDER BY fts_rowid",
        (_json_list(sorted(tokens_of)),),
    ).fetchall()
    return [
        IndexedMessage(
            space,
            int(rowid),
            block_id,
            tokens_of[rowid],
            not thread_id.startswith(IMPORT_THREAD_PREFIX),
        )
        for space, rowid, block_id, thread_id in rows
        if block_id is not None
    ]


def _indexed(
    space: str, rowid: int, block_id: str, thread_id: str, document: str
) -> IndexedMessage:
    searchable = not thread_id.startswith(IMPORT_THREAD_PREFIX)
    return IndexedMessage(space, int(rowid), block_id, fts_terms(document), searchable)


def fts_terms(document: str) -> list[str]:
    """The tokens of an FTS row's text (each stored as ``search_terms.fts_encode`` wrote it)."""
    return [bytes.fromhex(term[1:]).decode("utf-8") for term in document.split()]


def add(raw: sqlite3.Connection, messages: Sequence[IndexedMessage]) -> None:
    """Index new messages (their blocks' other messages, if any, are indexed already), and
    keep their ``message_facts``."""
    if messages and _has_tables(raw):
        for space, members in _by_space(messages).items():
            _add(raw, space, members)
        message_facts.add(raw, {m.rowid: len(m.tokens) for m in messages if m.searchable})


def remove(raw: sqlite3.Connection, messages: Sequence[IndexedMessage]) -> None:
    """Take messages out (``messages`` as they were indexed): their postings, their
    counts, their blocks' lengths; a term left with no message is deleted outright."""
    if messages and _has_tables(raw):
        for space, members in _by_space(messages).items():
            _remove(raw, space, members)
        message_facts.remove(raw, [m.rowid for m in messages])


def _by_space(messages: Sequence[IndexedMessage]) -> dict[str, list[IndexedMessage]]:
    grouped: dict[str, list[IndexedMessage]] = {}
    for message in messages:
        grouped.setdefault(message.namespace, []).append(message)
    return grouped


def _add(raw: sqlite3.Connection, space: str, messages: Sequence[IndexedMessage]) -> None:
    _count(raw, space, messages, +1)
    for block_id, members in _by_block(messages).items():
        raw.execute(
            "INSERT INTO block_lengths(block_id, namespace, tokens) VALUES (?, ?, ?) "
            "ON CONFLICT(block_id) DO UPDATE SET tokens = tokens + excluded.tokens",
            (block_id, space, sum(len(m.tokens) for m in members)),
        )
    changes: Changes = {}
    for message in messages:
        if message.searchable:
            for term, count in Counter(message.tokens).items():
                key = (term, message.rowid >> CHUNK_BITS)
                entry = (message.rowid, count, len(message.tokens))
                changes.setdefault(key, ([], set()))[0].append(entry)
    _merge_chunks(raw, space, changes)


def _remove(raw: sqlite3.Connection, space: str, messages: Sequence[IndexedMessage]) -> None:
    _count(raw, space, messages, -1)
    for block_id, members in _by_block(messages).items():
        raw.execute(
            "UPDATE block_lengths SET tokens = tokens - ? WHERE block_id = ?",
            (sum(len(m.tokens) for m in members), block_id),
        )
    changes: Changes = {}
    for message in messages:
        for term in set(message.tokens) if message.searchable else ():
            key = (term, message.rowid >> CHUNK_BITS)
            changes.setdefault(key, ([], set()))[1].add(message.rowid)
    _merge_chunks(raw, space, changes)
    raw.execute("DELETE FROM term_counts WHERE namespace = ? AND messages <= 0", (space,))
    raw.execute("DELETE FROM block_lengths WHERE namespace = ? AND tokens <= 0", (space,))


def _count(
    raw: sqlite3.Connection, space: str, messages: Sequence[IndexedMessage], sign: int
) -> None:
    """Move each term's message and block frequency by the messages added or removed; a
    block counts for a term while any of its indexed messages holds it."""
    moved: Counter[tuple[str, str]] = Counter()
    block_terms: dict[str, set[str]] = {}
    for message in messages:
        terms = set(message.tokens)
        moved.update((term, "messages") for term in terms)
        block_terms.setdefault(message.block_id, set()).update(terms)
    for block_id, terms in block_terms.items():
        still = _terms_still_in(raw, block_id, {m.rowid for m in messages})
        moved.update((term, "blocks") for term in terms - still)
    changed = sorted({term for term, _ in moved})
    raw.executemany(
        "INSERT INTO term_counts(namespace, term, messages, blocks) VALUES (?, ?, ?, ?) "
        "ON CONFLICT(namespace, term) DO UPDATE SET messages = messages + excluded.messages, "
        "blocks = blocks + excluded.blocks",
        [
            (space, term, sign * moved[(term, "messages")], sign * moved[(term, "blocks")])
            for term in changed
        ],
    )


def _terms_still_in(raw: sqlite3.Connection, block_id: str, leaving: set[int]) -> set[str]:
    """The terms of the block's other indexed messages (none for a block being sealed)."""
    rows = raw.execute(
        "SELECT m.fts_rowid, f.tokens FROM messages m JOIN message_fts f "
        "ON f.rowid = m.fts_rowid WHERE m.block_id = ?",
        (block_id,),
    ).fetchall()
    return {
        token for rowid, document in rows if rowid not in leaving for token in fts_terms(document)
    }


Changes = dict[tuple[str, int], tuple[list[tuple[int, int, int]], set[int]]]
"""(term, chunk) → (postings added, rowids removed)."""


def _merge_chunks(raw: sqlite3.Connection, space: str, changes: Changes) -> None:
    """Every changed chunk read in one query and written in one batch; a chunk only
    appended to (a seal's rowids come after every older one) is extended without decoding."""
    if not changes:
        return
    stored = {
        (term, chunk): (rowids, counts, lengths)
        for term, chunk, rowids, counts, lengths in raw.execute(
            "SELECT term, chunk, rowids, counts, lengths FROM term_postings WHERE namespace = ? "
            "AND term IN (SELECT value FROM json_each(?)) "
            "AND chunk IN (SELECT value FROM json_each(?))",
            (
                space,
                _json_list(sorted({t for t, _ in changes})),
                _json_list(sorted({c for _, c in changes})),
            ),
        )
    }
    writes, deletes = [], []
    for (term, chunk), (added, removed) in changes.items():
        blobs = _merged(stored.get((term, chunk)), sorted(added), removed)
        if blobs is None:
            deletes.append((space, term, chunk))
        else:
            writes.append((space, term, chunk, *blobs))
    raw.executemany(
        "DELETE FROM term_postings WHERE namespace = ? AND term = ? AND chunk = ?", deletes
    )
    raw.executemany(
        "INSERT INTO term_postings(namespace, term, chunk, rowids, counts, lengths) "
        "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(namespace, term, chunk) DO UPDATE SET "
        "rowids = excluded.rowids, counts = excluded.counts, lengths = excluded.lengths",
        writes,
    )


def _merged(
    row: tuple[bytes, bytes, bytes] | None,
    added: list[tuple[int, int, int]],
    removed: set[int],
) -> tuple[bytes, ...] | None:
    """A chunk's new blobs (``None``: no posting left)."""
    if row is not None and not removed and added and _last_rowid(row[0]) < added[0][0]:
        return tuple(old + new for old, new in zip(row, _blobs(added), strict=True))
    entries = dict(zip(*_arrays(row), strict=True)) if row else {}
    for rowid in removed:
        entries.pop(rowid, None)
    for rowid, count, length in added:
        entries[rowid] = (count, length)
    if not entries:
        return None
    return _blobs([(rowid, count, length) for rowid, (count, length) in sorted(entries.items())])


def _last_rowid(rowids: bytes) -> int:
    return int(np.frombuffer(rowids[-_ROWIDS.itemsize :], _ROWIDS)[0])


def _blobs(entries: Sequence[tuple[int, int, int]]) -> tuple[bytes, bytes, bytes]:
    """(rowids, counts, lengths) arrays of rowid-ordered postings, counts capped."""
    return (
        np.array([r for r, _, _ in entries], _ROWIDS).tobytes(),
        np.array([min(c, MAX_COUNT) for _, c, _ in entries], _COUNTS).tobytes(),
        np.array([min(n, MAX_COUNT) for _, _, n in entries], _COUNTS).tobytes(),
    )


def _arrays(row: Sequence[bytes]) -> tuple[list[int], list[tuple[int, int]]]:
    rowids = np.frombuffer(row[0], _ROWIDS).tolist()
    counts = np.frombuffer(row[1], _COUNTS).tolist()
    lengths = np.frombuffer(row[2], _COUNTS).tolist()
    return rowids, list(zip(counts, lengths, strict=True))


def _by_block(messages: Sequence[IndexedMessage]) -> dict[str, list[IndexedMessage]]:
    grouped: dict[str, list[IndexedMessage]] = {}
    for message in messages:
        grouped.setdefault(message.block_id, []).append(message)
    return grouped


def postings(raw: sqlite3.Connection, space: str, terms: Sequence[str]) -> dict[str, TermPostings]:
    """Each term's postings in the space (rowid order); a term no message holds is absent."""
    found: dict[str, list[tuple[bytes, bytes, bytes]]] = {}
    for term, rowids, counts, lengths in raw.execute(
        "SELECT term, rowids, counts, lengths FROM term_postings WHERE namespace = ? "
        "AND term IN (SELECT value FROM json_each(?)) ORDER BY term, chunk",
        (space, _json_list(terms)),
    ):
        found.setdefault(term, []).append((rowids, counts, lengths))
    return {term: _joined(chunks) for term, chunks in found.items()}


def _joined(chunks: list[tuple[bytes, bytes, bytes]]) -> TermPostings:
    """A term's chunks as one set of arrays, in their stored types (never widened here)."""
    return TermPostings(
        np.frombuffer(b"".join(c[0] for c in chunks), _ROWIDS),
        np.frombuffer(b"".join(c[1] for c in chunks), _COUNTS),
        np.frombuffer(b"".join(c[2] for c in chunks), _COUNTS),
    )


def frequencies(
    raw: sqlite3.Connection, space: str, terms: Sequence[str]
) -> dict[str, tuple[int, int]]:
    """(messages, blocks) of the space's indexed text holding each term (absent: none)."""
    rows = raw.execute(
        "SELECT term, messages, blocks FROM term_counts WHERE namespace = ? "
        "AND term IN (SELECT value FROM json_each(?))",
        (space, _json_list(terms)),
    )
    return {term: (int(m), int(b)) for term, m, b in rows}


def block_lengths(raw: sqlite3.Connection, blocks: Sequence[str]) -> dict[str, int]:
    rows = raw.execute(
        "SELECT block_id, tokens FROM block_lengths WHERE block_id IN "
        "(SELECT value FROM json_each(?))",
        (_json_list(blocks),),
    )
    return {str(block_id): int(tokens) for block_id, tokens in rows}


def has_index(raw: sqlite3.Connection) -> bool:
    """Whether the index exists and is current (readers fall back to FTS5 otherwise)."""
    return _has_tables(raw) and index_is_current(raw)


def _has_tables(raw: sqlite3.Connection) -> bool:
    return has_table(raw, "term_postings")


def _json_list(values: Sequence[object]) -> str:
    return json.dumps(list(values))
