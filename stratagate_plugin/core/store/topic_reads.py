"""The topic catalog's word statistics and titles (the rules reading them: ``topics/``)."""

import sqlite3
from collections.abc import Sequence

from . import search_index


def term_stats(raw: sqlite3.Connection, tokens: Sequence[str]) -> tuple[dict[str, int], int]:
    """How many indexed events hold each token (counted up to the search index's posting
    budget), and how many events there are: the offline grouper weighs words by rarity.
    Empty without an event index (no FTS5): every word then weighs alike."""
    total = int(raw.execute("SELECT count(*) FROM events").fetchone()[0])
    try:
        return search_index.term_counts(raw, "event_fts", list(dict.fromkeys(tokens))), total
    except sqlite3.OperationalError:
        return {}, 0


def chapter_titles(raw: sqlite3.Connection, space: str) -> dict[str, str]:
    """Every chapter title of the space → its chapter id."""
    rows = raw.execute("SELECT id, title FROM topics WHERE namespace = ?", (space,))
    return {str(row[1]): str(row[0]) for row in rows if row[1]}
