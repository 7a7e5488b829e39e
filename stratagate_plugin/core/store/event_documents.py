"""Stored event search documents: the asked terms' counts read for ranking, each document's
JSON parsed once per process.

Automatic recall asks with the conversation's last turns, so consecutive calls rank mostly
the same candidates (96% of a recall's documents had been read by an earlier call in the
search-scale run), and walking each one's JSON in SQL for its dozens of terms cost ~2.3 ms
a recall where reading the texts costs ~0.5. For such queries, with a ``ParsedDocuments``,
the texts are read and each is parsed once, kept by its text: a kept parse is used only for
the very text the table holds now, so it cannot differ from parsing it again, whatever
wrote the row and whenever. A search of a few words keeps ``json_extract`` (~0.5 µs a
term), cheaper than parsing a document that missed, and its candidates recur less (a third
of them in the same run).

The cache is bounded (least recently used out first) and holds stored counts documents
(terms and numbers, never an event's own text). A purge in this process empties it
(``forget_all``); after another process's purge, a purged event is no candidate, so its
parse, no longer asked for, waits for eviction.
"""

import json
import sqlite3
import sys
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from functools import partial
from itertools import groupby
from typing import Any

from ..events.storage import Document
from .search_index import document_stamp
from .units import on_postgres

CAPACITY = 10_000
"""Parsed documents kept: each ~1.8 KB with its text (the key, ~570 characters at the
search-scale corpus), its terms interned: ~18 MB at most; a recall reads ~300 documents, a
search ~160, and a thread's consecutive recalls mostly the same ones."""


class ParsedDocuments:
    """Parsed counts by stored JSON text, shared by the reader threads of one database."""

    def __init__(self, capacity: int = CAPACITY) -> None:
        self.capacity = capacity
        self._parsed: OrderedDict[str, dict[str, int]] = OrderedDict()
        self._lock = threading.Lock()

    def parse_all(self, texts: Sequence[str | None]) -> list[dict[str, int]]:
        """Each text's counts, parsed here only when no kept parse of that text exists."""
        keys = [text or "" for text in texts]
        with self._lock:
            found = [self._take(key) for key in keys]
        missed = [key for key, parsed in zip(keys, found, strict=True) if parsed is None]
        fresh = {key: parsed_counts(key) for key in missed}
        if fresh:
            with self._lock:
                self._parsed.update(fresh)
                while len(self._parsed) > self.capacity:
                    self._parsed.popitem(last=False)
        pairs = zip(keys, found, strict=True)
        return [fresh[key] if parsed is None else parsed for key, parsed in pairs]

    def _take(self, text: str) -> dict[str, int] | None:
        parsed = self._parsed.get(text)
        if parsed is not None:
            self._parsed.move_to_end(text)
        return parsed

    def forget_all(self) -> None:
        with self._lock:
            self._parsed.clear()

    def __len__(self) -> int:
        return len(self._parsed)


def parsed_counts(text: str | None) -> dict[str, int]:
    """A stored counts document's integer counts, its terms interned (the same words recur
    across documents: one string each, not one per document); nothing for a text that is
    not a JSON object, as ``json_each`` skips one."""
    return {
        sys.intern(term): int(count)
        for term, count in _json_object(text).items()
        if isinstance(count, int | float) and not isinstance(count, bool)
    }


EXTRACT_TOKENS = 16
"""Up to this many asked tokens, each is one ``json_extract`` of a stored document (~0.5 µs
a token); above it (a recall query's dozens), one ``json_each`` walk of all its keys
(~14 µs a document) is cheaper. Both read the same counts."""


StoredCounts = Iterator[tuple[int, str, int, dict[str, int]]]
"""(pk, stamp, length, the asked tokens' counts) of each stored document, by pk."""

_TEXTS = (
    "SELECT pk, stamp, length, counts_json FROM event_documents "
    "WHERE pk IN (SELECT value FROM json_each(?)) ORDER BY pk"
)
"""The stored documents' texts, parsed in Python (through the cache, or on PostgreSQL)."""


def stored_documents(
    raw: sqlite3.Connection,
    rows: Sequence[sqlite3.Row],
    tokens: Sequence[str],
    version: int,
    cache: ParsedDocuments | None = None,
) -> dict[str, Document]:
    """Stored BM25 documents of these rows, by id, counting only ``tokens`` (all BM25 reads).

    Stale or missing documents (an older ``updated_at``, another document ``version``) are
    left out; the caller tokenises those. A query of many tokens (a recall's) reads through
    ``cache`` when given (either backend): each text parsed once and kept. Otherwise SQL
    extracts the few asked counts (SQLite: cheaper than parsing a document that missed)
    or Python parses them (PostgreSQL).
    """
    stamps = {
        int(row["pk"]): (row["id"], document_stamp(row["updated_at"], version)) for row in rows
    }
    wanted = sorted(set(tokens))
    read: Callable[[sqlite3.Connection, Sequence[int], list[str]], StoredCounts]
    if cache is not None and len(wanted) > EXTRACT_TOKENS:
        read = partial(_through_cache, cache=cache)
    elif on_postgres(raw):
        read = _parsed_counts
    else:
        read = _extracted_counts if len(wanted) <= EXTRACT_TOKENS else _walked_counts
    found: dict[str, Document] = {}
    pks = list(stamps)
    for start in range(0, len(pks), 500):
        for pk, stamp, length, counts in read(raw, pks[start : start + 500], wanted):
            event_id, current = stamps[pk]
            if stamp == current:
                found[event_id] = (counts, int(length))
    return found


def _through_cache(
    raw: sqlite3.Connection, pks: Sequence[int], wanted: list[str], *, cache: ParsedDocuments
) -> StoredCounts:
    """Each stored document's text read, its parse taken from ``cache`` or made and kept."""
    rows = raw.execute(_TEXTS, (json.dumps(list(pks)),)).fetchall()
    parsed = cache.parse_all([row[3] for row in rows])
    asked = set(wanted)
    for (pk, stamp, length, _), counts in zip(rows, parsed, strict=True):
        yield pk, stamp, length, _asked_counts(counts, wanted, asked)


def _asked_counts(counts: dict[str, int], wanted: list[str], asked: set[str]) -> dict[str, int]:
    """The asked terms' counts, walking the shorter side (a recall asks ~44 terms of
    documents holding ~20)."""
    if len(counts) < len(wanted):
        return {term: count for term, count in counts.items() if term in asked}
    return {token: counts[token] for token in wanted if token in counts}


def _extracted_counts(
    raw: sqlite3.Connection, pks: Sequence[int], wanted: list[str]
) -> StoredCounts:
    """One ``json_extract`` per token (a token is word characters and a prefix: a safe key)."""
    columns = ", ".join(["pk", "stamp", "length", *["json_extract(counts_json, ?)"] * len(wanted)])
    rows = raw.execute(
        f"SELECT {columns} FROM event_documents "
        "WHERE pk IN (SELECT value FROM json_each(?)) ORDER BY pk",
        (*[f'$."{token}"' for token in wanted], json.dumps(list(pks))),
    )
    for pk, stamp, length, *counts in rows:
        counted = zip(wanted, counts, strict=True)
        yield pk, stamp, length, {token: int(n) for token, n in counted if n is not None}


def _walked_counts(raw: sqlite3.Connection, pks: Sequence[int], wanted: list[str]) -> StoredCounts:
    """Each document's keys walked once, the asked ones kept."""
    rows = raw.execute(
        "SELECT d.pk, d.stamp, d.length, c.key, c.value FROM event_documents d "
        "LEFT JOIN json_each(d.counts_json) c ON c.key IN (SELECT value FROM json_each(?)) "
        "WHERE d.pk IN (SELECT value FROM json_each(?)) ORDER BY d.pk, c.id",
        (json.dumps(wanted), json.dumps(list(pks))),
    )
    for (pk, stamp, length), keys in groupby(rows, key=lambda row: (row[0], row[1], row[2])):
        counts = {token: int(n) for _, _, _, token, n in keys if token is not None}
        yield pk, stamp, length, counts


def _parsed_counts(raw: sqlite3.Connection, pks: Sequence[int], wanted: list[str]) -> StoredCounts:
    """Each document's JSON parsed here, once: PostgreSQL parsed the text column again for
    every asked token (``::jsonb #>``) or expanded every key (``json_each``), 5–9 ms a
    recall's ~200 documents where ``json.loads`` takes ~1 ms."""
    for pk, stamp, length, text in raw.execute(_TEXTS, (json.dumps(list(pks)),)):
        stored = _json_object(text)
        counts = {token: int(stored[token]) for token in wanted if token in stored}
        yield pk, stamp, length, counts


def _json_object(text: str | None) -> dict[str, Any]:
    """A stored counts document, or nothing (as ``json_each`` skips one that is not an
    object)."""
    try:
        found = json.loads(text or "{}")
    except ValueError:
        return {}
    return found if isinstance(found, dict) else {}
