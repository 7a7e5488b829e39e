"""Keeping each space's topic queue in step with its events (spec §5.2, §5.3).

A chapter holding an event that changed (its fingerprint differs) or was hidden (forgotten,
archived, purged) is stale: its words are cleared at once, hidden members leave it, and
its members are queued again under its id — changed ones as new work, unchanged ones as
a historical rebuild. Visible events in no chapter and no batch are queued too: as new
work, or as the historical set when a space is bootstrapped. A touch that leaves the
fingerprint alone (adoption, retrieval, decay, pinning) only moves ``seen_at`` on.
"""

import sqlite3
from collections import defaultdict
from collections.abc import Sequence
from datetime import datetime

from ..clock import iso
from ..events.cards import EventCard
from ..topics.batching import make_batches
from ..topics.fingerprint import event_fingerprint
from . import event_rows, topic_jobs, topic_rows


def all_spaces(raw: sqlite3.Connection) -> list[str]:
    return [row[0] for row in raw.execute("SELECT namespace FROM namespaces ORDER BY namespace")]


def sync_space(raw: sqlite3.Connection, namespace: str, now: datetime) -> None:
    """Stale chapters cleared and queued for rebuild, then unplaced events queued."""
    if topic_jobs.state_version(raw, namespace) is None:  # a space new since the open
        topic_jobs.record_state(raw, namespace, 0, now)
    for topic_id, gone in stale_members(raw, namespace, write=True).items():
        topic_rows.clear_language(raw, topic_id, iso(now))
        topic_rows.drop_members(raw, topic_id, gone)
    topic_rows.delete_empty_topics(raw, namespace)
    queue_rebuilds(raw, namespace, now)
    queue_unplaced(raw, namespace, now, historical=False)


def stale_members(
    raw: sqlite3.Connection, namespace: str, write: bool = False
) -> dict[str, set[str]]:
    """Stale chapter id → its members that are hidden now. With ``write``, changed members
    are marked for projection and untouched ones seen (a read only reports)."""
    rows = topic_rows.touched_members(raw, namespace)
    if not rows:
        return {}
    cards = {c.id: c for c in event_rows.visible_cards(raw, namespace, [r[1] for r in rows])}
    stale: dict[str, set[str]] = defaultdict(set)
    changed, seen = [], []
    for topic_id, event_id, fingerprint, _status in rows:
        card = cards.get(event_id)
        if card is None:
            stale[topic_id].add(event_id)
        elif fingerprint is None:
            stale[topic_id]
        elif event_fingerprint(card) != fingerprint:
            stale[topic_id]
            changed.append(event_id)
        else:
            seen.append((event_id, iso(card.updated_at)))
    if write:
        topic_rows.mark_for_projection(raw, changed)
        topic_rows.mark_seen(raw, seen)
    return dict(stale)


def queue_rebuilds(raw: sqlite3.Connection, namespace: str, now: datetime) -> None:
    """A pending chapter's members not in a batch: changed ones as new work, the others
    as a historical rebuild, both continuing the chapter."""
    for topic in topic_rows.load_topics(raw, namespace):
        if topic.status != "pending":
            continue
        waiting = topic_jobs.unqueued_members(raw, topic.id)
        for historical in (False, True):
            ids = [event_id for event_id, changed in waiting if changed != historical]
            cards = event_rows.visible_cards(raw, namespace, ids)
            _queue(raw, namespace, _in_order(cards, ids), historical, now, topic.id)


def queue_unplaced(
    raw: sqlite3.Connection, namespace: str, now: datetime, *, historical: bool
) -> int:
    """Visible events in no chapter and no batch, queued in batches; how many."""
    cards = event_rows.events_from_rows(raw, topic_jobs.unplaced_rows(raw, namespace))
    _queue(raw, namespace, cards, historical, now)
    return len(cards)


def _queue(
    raw: sqlite3.Connection,
    namespace: str,
    cards: Sequence[EventCard],
    historical: bool,
    now: datetime,
    topic_id: str | None = None,
) -> None:
    for batch in make_batches(cards):
        topic_jobs.queue_batch(raw, namespace, batch, historical, now, topic_id)


def _in_order(cards: Sequence[EventCard], ids: Sequence[str]) -> list[EventCard]:
    place = {event_id: i for i, event_id in enumerate(ids)}
    return sorted(cards, key=lambda card: place[card.id])
