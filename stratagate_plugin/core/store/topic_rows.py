"""Topic chapters and their members; the directory's reads (spec §5).

A member row keeps the fingerprint its event had when it was projected and the event's
``updated_at`` then (``seen_at``); a trigger flags it ``touched`` when its event is updated
or deleted, so spotting a stale chapter reads only those members (and the ones awaiting
re-projection) through a partial index, not every member of the space.
Fallback entries (visible events no shown chapter holds) have their own index: ``topic_unfiled``.
"""

import sqlite3
from collections.abc import Iterable, Sequence

from ..clock import iso
from ..events.cards import EventCard
from ..topics.model import PROJECTOR_VERSION, Topic
from .event_rows import VISIBLE
from .rows import dump_json, record_from_row

_TOUCHED = "(m.touched = 1 OR m.fingerprint IS NULL)"


def topic_from_row(row: sqlite3.Row, members: list[str] | None = None) -> Topic:
    return record_from_row(Topic, row, member_ids=members or [], has_agent=bool(row["has_agent"]))


def load_topics(
    raw: sqlite3.Connection, space: str, members: bool = False, only: Sequence[str] | None = None
) -> list[Topic]:
    """Every chapter of the space in chapter order, without its member list (``members``:
    with it, every chapter's read in one query rather than one chapter at a time);
    ``only``: just those chapters (a page of the book)."""
    if only is None:
        rows = raw.execute(
            "SELECT * FROM topics WHERE namespace = ? ORDER BY created_at, id", (space,)
        ).fetchall()
        held = space_members(raw, space) if members else {}
    else:
        ids = list(only)
        rows = raw.execute(
            f"SELECT * FROM topics WHERE namespace = ? AND id IN ({_marks(ids)}) "
            "ORDER BY created_at, id",
            [space, *ids],
        ).fetchall()
        held = members_of(raw, ids) if members else {}
    return [topic_from_row(row, held.get(row["id"])) for row in rows]


def chapter_window(
    raw: sqlite3.Connection, space: str, agent_weight: float, window: tuple[int, int]
) -> tuple[list[str], int, int]:
    """The ids of the ``window`` (offset, count) of the space's chapters in chapter order
    (the order's index walked, no chapter read), how many chapters there are and how many
    are shown at ``agent_weight`` (agent chapters hidden at 0)."""
    offset, count = window
    ids = raw.execute(
        "SELECT id FROM topics WHERE namespace = ? ORDER BY created_at, id LIMIT ? OFFSET ?",
        (space, count, offset),
    ).fetchall()
    total, plain = raw.execute(
        "SELECT COUNT(*), COUNT(CASE WHEN has_agent = 0 THEN 1 END) FROM topics "
        "WHERE namespace = ?",
        (space,),
    ).fetchone()
    listed = total if agent_weight > 0 else plain
    return [row[0] for row in ids], int(total), int(listed)


def pending_chapters(raw: sqlite3.Connection, space: str) -> list[str]:
    """The space's pending chapters' ids in chapter order: a sync's rebuild pass needs no
    more (every chapter read whole there cost ~0.3 s a write at 7,000 chapters)."""
    rows = raw.execute(
        "SELECT id FROM topics WHERE namespace = ? AND status = 'pending' ORDER BY created_at, id",
        (space,),
    )
    return [row[0] for row in rows]


def members_of(raw: sqlite3.Connection, topic_ids: Sequence[str]) -> dict[str, list[str]]:
    """Chapter id → its members in order, for those chapters."""
    held: dict[str, list[str]] = {}
    rows = raw.execute(
        f"SELECT topic_id, event_id FROM topic_members WHERE topic_id IN ({_marks(topic_ids)}) "
        "ORDER BY topic_id, position",
        list(topic_ids),
    )
    for topic_id, event_id in rows:
        held.setdefault(topic_id, []).append(event_id)
    return held


def _marks(values: Sequence[str]) -> str:
    return ",".join("?" * len(values))


def space_members(raw: sqlite3.Connection, space: str) -> dict[str, list[str]]:
    """Chapter id → its members in order, for every chapter of the space."""
    held: dict[str, list[str]] = {}
    rows = raw.execute(
        "SELECT m.topic_id, m.event_id FROM topics t JOIN topic_members m ON m.topic_id = t.id "
        "WHERE t.namespace = ? ORDER BY m.topic_id, m.position",
        (space,),
    )
    for topic_id, event_id in rows:
        held.setdefault(topic_id, []).append(event_id)
    return held


def get_topic(raw: sqlite3.Connection, topic_id: str) -> Topic | None:
    row = raw.execute("SELECT * FROM topics WHERE id = ?", (topic_id,)).fetchone()
    return None if row is None else topic_from_row(row, member_ids(raw, topic_id))


def member_ids(raw: sqlite3.Connection, topic_id: str) -> list[str]:
    rows = raw.execute(
        "SELECT event_id FROM topic_members WHERE topic_id = ? ORDER BY position", (topic_id,)
    )
    return [row[0] for row in rows]


def topics_holding(raw: sqlite3.Connection, event_ids: Sequence[str]) -> dict[str, str]:
    """event id → the chapter holding it, for those of ``event_ids`` that have one."""
    marks = ",".join("?" * len(event_ids))
    rows = raw.execute(
        f"SELECT event_id, topic_id FROM topic_members WHERE event_id IN ({marks})",
        list(event_ids),
    )
    return {row[0]: row[1] for row in rows}


def save_topic(raw: sqlite3.Connection, topic: Topic) -> None:
    """Insert or update the chapter's row (members are written apart)."""
    values = (
        topic.title,
        topic.description,
        topic.category,
        topic.status,
        dump_json([s.model_dump() for s in topic.sections]),
        dump_json([p.model_dump() for p in topic.overview]),
        dump_json(topic.keywords),
        int(topic.has_agent),
        PROJECTOR_VERSION,
        iso(topic.updated_at),
    )
    updated = raw.execute(
        "UPDATE topics SET title = ?, description = ?, category = ?, status = ?, "
        "sections_json = ?, overview_json = ?, keywords_json = ?, has_agent = ?, "
        "projector_version = ?, updated_at = ? WHERE id = ?",
        (*values, topic.id),
    ).rowcount
    if not updated:
        raw.execute(
            "INSERT INTO topics(title, description, category, status, sections_json, "
            "overview_json, keywords_json, has_agent, projector_version, updated_at, id, "
            "namespace, created_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (*values, topic.id, topic.namespace, iso(topic.created_at)),
        )


def set_members(
    raw: sqlite3.Connection,
    topic: Topic,
    cards: Iterable[EventCard],
    fingerprints: dict[str, str],
    categories: dict[str, str],
) -> None:
    """``cards`` become members of ``topic`` (taken from any other chapter) at their place in
    its member list, projected at ``fingerprints``."""
    place = {event_id: i for i, event_id in enumerate(topic.member_ids)}
    for card in cards:
        raw.execute("DELETE FROM topic_members WHERE event_id = ?", (card.id,))
        raw.execute(
            "INSERT INTO topic_members(topic_id, event_id, namespace, position, fingerprint, "
            "seen_at, category, pool) VALUES (?,?,?,?,?,?,?,?)",
            (
                topic.id,
                card.id,
                topic.namespace,
                place[card.id],
                fingerprints[card.id],
                iso(card.updated_at),
                categories[card.id],
                card.pool,
            ),
        )


def member_summary(raw: sqlite3.Connection, topic_id: str) -> tuple[list[str], bool]:
    """The categories of a chapter's members and whether any is agent-recorded."""
    rows = raw.execute(
        "SELECT category, pool FROM topic_members WHERE topic_id = ?", (topic_id,)
    ).fetchall()
    return [row[0] for row in rows], any(row[1] == "agent" for row in rows)


def drop_members(raw: sqlite3.Connection, topic_id: str, event_ids: Iterable[str]) -> None:
    raw.executemany(
        "DELETE FROM topic_members WHERE topic_id = ? AND event_id = ?",
        [(topic_id, event_id) for event_id in event_ids],
    )


def leave_chapter(
    raw: sqlite3.Connection, topic_id: str, event_ids: Iterable[str], now: str
) -> None:
    """Events taken out of a chapter at once (an undone import): its words cleared for
    the rebuild, its agent mark recounted from the members left."""
    clear_language(raw, topic_id, now)
    drop_members(raw, topic_id, event_ids)
    _, has_agent = member_summary(raw, topic_id)
    raw.execute("UPDATE topics SET has_agent = ? WHERE id = ?", (int(has_agent), topic_id))


def mark_for_projection(raw: sqlite3.Connection, event_ids: Iterable[str]) -> None:
    """Members whose event changed: their fingerprint is cleared until projected again."""
    raw.executemany(
        "UPDATE topic_members SET fingerprint = NULL WHERE event_id = ?",
        [(event_id,) for event_id in event_ids],
    )


def mark_seen(raw: sqlite3.Connection, seen: Iterable[tuple[str, str]]) -> None:
    """(event id, updated_at) of members touched without changing (adoption, decay)."""
    raw.executemany(
        "UPDATE topic_members SET seen_at = ?, touched = 0 WHERE event_id = ?",
        [(updated, event_id) for event_id, updated in seen],
    )


def clear_language(raw: sqlite3.Connection, topic_id: str, now: str) -> None:
    """A stale chapter keeps its id and members; its words go until it is rebuilt, and the
    first invalidation's time is kept."""
    raw.execute(
        "UPDATE topics SET status = 'pending', title = '', description = '', "
        "sections_json = '[]', overview_json = '[]', updated_at = ?, "
        "invalidated_at = COALESCE(invalidated_at, ?) WHERE id = ? AND status = 'ready'",
        (now, now, topic_id),
    )


def delete_empty_topics(raw: sqlite3.Connection, space: str) -> int:
    return raw.execute(
        "DELETE FROM topics WHERE namespace = ? AND NOT EXISTS "
        "(SELECT 1 FROM topic_members m WHERE m.topic_id = topics.id)",
        (space,),
    ).rowcount


def touched_members(raw: sqlite3.Connection, space: str) -> list[sqlite3.Row]:
    """Members whose event is gone, hidden, touched since projection or awaiting it:
    ``topic_id, event_id, fingerprint, status``. Only members flagged ``touched`` (by the
    triggers above) or awaiting projection are looked at, through their partial index."""
    return raw.execute(
        "SELECT m.topic_id, m.event_id, m.fingerprint, e.status FROM topic_members m "
        f"LEFT JOIN events e ON e.id = m.event_id WHERE m.namespace = ? AND {_TOUCHED} AND "
        "(e.id IS NULL OR e.status NOT IN (?, ?) OR e.updated_at != m.seen_at OR "
        "m.fingerprint IS NULL)",
        (space, *VISIBLE),
    ).fetchall()
