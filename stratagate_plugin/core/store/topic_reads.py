"""The topic catalog's word statistics, titles and directory pages (the rules reading
them: ``topics/``).

A directory page reads what it shows, not every chapter: its window of chapters, each
category's first chapter and count in one windowed query, and member counts grouped over
the shown chapters only (the directory is read on every model call).
"""

import sqlite3
from collections.abc import Sequence, Sized
from typing import Any

from . import search_index

_SHOWN = "t.namespace = ? AND (? > 0 OR t.has_agent = 0)"
_TEXT = "t.id, t.title, t.description, t.category, t.status"


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


def shown_texts(
    raw: sqlite3.Connection,
    space: str,
    agent_weight: float,
    category: str | None,
    window: tuple[int, int] | None,
) -> list[tuple[Any, ...]]:
    """``id, title, description, category, status`` of the shown chapters in chapter
    order (of one ``category``; ``window``: (offset, limit) of them only)."""
    sql = f"SELECT {_TEXT} FROM topics t WHERE {_SHOWN}"
    params: list[Any] = [space, agent_weight]
    if category is not None:
        sql += " AND t.category = ?"
        params.append(category)
    sql += " ORDER BY t.created_at, t.id"
    if window is not None:
        sql += " LIMIT ? OFFSET ?"
        params += [window[1], window[0]]
    cursor = raw.cursor()
    cursor.row_factory = None  # plain tuples: a query reads every chapter's
    return cursor.execute(sql, params).fetchall()


def chapter_generation(raw: sqlite3.Connection, space: str) -> int | None:
    """The space's chapter token (``topic_generations``: drawn anew by triggers whenever a
    chapter row changes); ``None`` when no chapter row of the space was ever written."""
    row = raw.execute(
        "SELECT token FROM topic_generations WHERE namespace = ?", (space,)
    ).fetchone()
    return None if row is None else int(row[0])


def indexed_texts(raw: sqlite3.Connection, space: str) -> list[tuple[Any, ...]]:
    """``shown_texts``' columns and ``has_agent`` of every chapter of the space, in chapter
    order: what the directory's word index is built from."""
    cursor = raw.cursor()
    cursor.row_factory = None
    return cursor.execute(
        f"SELECT {_TEXT}, t.has_agent FROM topics t WHERE t.namespace = ? "
        "ORDER BY t.created_at, t.id",
        (space,),
    ).fetchall()


def category_firsts(
    raw: sqlite3.Connection, space: str, agent_weight: float
) -> list[tuple[tuple[Any, ...], int]]:
    """Each category's first shown chapter (``shown_texts``' columns) and its count, in
    chapter order: one grouped count, each first found through the chapter order's index
    (a window function over every chapter costs more than the rest of a page)."""
    groups = raw.execute(
        "SELECT g.category, g.n, (SELECT t.id FROM topics t WHERE "
        f"{_SHOWN} AND t.category = g.category ORDER BY t.created_at, t.id LIMIT 1) FROM "
        f"(SELECT t.category, COUNT(*) AS n FROM topics t WHERE {_SHOWN} "
        "GROUP BY t.category) AS g",
        (space, agent_weight, space, agent_weight),
    ).fetchall()
    counts = {row[2]: int(row[1]) for row in groups}
    if not counts:
        return []
    firsts = raw.execute(
        f"SELECT {_TEXT} FROM topics t WHERE t.id IN ({_marks(counts)}) "
        "ORDER BY t.created_at, t.id",
        list(counts),
    )
    return [(tuple(row), counts[row[0]]) for row in firsts]


def member_counts(raw: sqlite3.Connection, topic_ids: Sequence[str]) -> dict[str, int]:
    """Chapter id → how many members it holds, for those chapters (none: absent)."""
    if not topic_ids:
        return {}
    rows = raw.execute(
        f"SELECT topic_id, COUNT(*) FROM topic_members WHERE topic_id IN ({_marks(topic_ids)}) "
        "GROUP BY topic_id",
        list(topic_ids),
    )
    return {row[0]: int(row[1]) for row in rows}


def _marks(values: Sized) -> str:
    return ",".join("?" * len(values))
