"""Keeping each space's topic queue in step with its events (spec §5.2, §5.3).

A chapter holding an event that changed (its fingerprint differs) or was hidden (forgotten,
archived, purged) is stale: its words are cleared at once, hidden members leave it, and
its members are queued again under its id — changed ones as new work, unchanged ones as
a historical rebuild. Visible events in no chapter and no batch are queued too: as new
work, or as the historical set when a space is bootstrapped. A touch that leaves the
fingerprint alone (adoption, retrieval, decay, pinning) only moves ``seen_at`` on.
Each function runs inside the caller's ``TopicsTransaction``.
"""

from collections import defaultdict
from collections.abc import Sequence
from datetime import datetime

from ..clock import iso
from ..events.cards import EventCard
from . import unfiled
from .batching import make_batches
from .fingerprint import event_fingerprint
from .storage import QueuedBatch, TopicsTransaction


def sync_if_present(tx: TopicsTransaction, space: str, now: datetime) -> None:
    """``sync_space`` for a space still there (one listed before this transaction may have
    been deleted since)."""
    if space in tx.all_spaces():
        sync_space(tx, space, now)


def bootstrap(tx: TopicsTransaction, now: datetime) -> list[str]:
    """Each space not yet under this projector version: its old chapters retired, its
    visible events frozen as the historical set. The spaces done. Alone in the topic
    queue, so the spaces are read once it is held (another process may have bootstrapped
    them meanwhile)."""
    tx.queue_alone()
    spaces = tx.spaces_to_bootstrap()
    for space in spaces:
        tx.retire_old_generation(space)
        frozen = queue_unplaced(tx, space, now, historical=True)
        tx.record_state(space, frozen, now)
    return spaces


def sync_space(tx: TopicsTransaction, space: str, now: datetime) -> None:
    """Stale chapters cleared and queued for rebuild, then unplaced events queued: alone in
    the topic queue."""
    tx.queue_alone()
    if not tx.state_known(space):  # a space new since the open
        tx.record_state(space, 0, now)
    for topic_id, gone in stale_members(tx, space, write=True).items():
        tx.clear_language(topic_id, iso(now))
        tx.drop_members(topic_id, gone)
    tx.delete_empty_topics(space)
    queue_rebuilds(tx, space, now)
    queue_unplaced(tx, space, now, historical=False)


def stale_members(tx: TopicsTransaction, space: str, write: bool = False) -> dict[str, set[str]]:
    """Stale chapter id → its members that are hidden now. With ``write``, changed members
    are marked for projection and untouched ones seen (a read only reports)."""
    found = tx.touched_members(space)
    if not found:
        return {}
    cards = {c.id: c for c in tx.visible_cards(space, [m.event_id for m in found])}
    stale: dict[str, set[str]] = defaultdict(set)
    changed, seen = [], []
    for member in found:
        topic_id, event_id = member.topic_id, member.event_id
        card = cards.get(event_id)
        if card is None:
            stale[topic_id].add(event_id)
        elif member.fingerprint is None:
            stale[topic_id]
        elif event_fingerprint(card) != member.fingerprint:
            stale[topic_id]
            changed.append(event_id)
        else:
            seen.append((event_id, iso(card.updated_at)))
    if write:
        tx.mark_for_projection(changed)
        tx.mark_seen(seen)
    return dict(stale)


def queue_rebuilds(tx: TopicsTransaction, space: str, now: datetime) -> None:
    """A pending chapter's members not in a batch: changed ones as new work, the others
    as a historical rebuild, both continuing the chapter."""
    for topic_id in tx.pending_chapters(space):
        waiting = tx.unqueued_members(topic_id)
        for historical in (False, True):
            ids = [event_id for event_id, changed in waiting if changed != historical]
            cards = tx.visible_cards(space, ids)
            _queue(tx, space, _in_order(cards, ids), historical, now, topic_id)


def queue_unplaced(tx: TopicsTransaction, space: str, now: datetime, *, historical: bool) -> int:
    """Visible events in no chapter and no batch, queued in batches; how many. The
    fallback entries they are read from are re-filed first (``unfiled.refile``)."""
    unfiled.refile(tx)
    cards = tx.unplaced_cards(space)
    _queue(tx, space, cards, historical, now)
    return len(cards)


def _queue(
    tx: TopicsTransaction,
    space: str,
    cards: Sequence[EventCard],
    historical: bool,
    now: datetime,
    topic_id: str | None = None,
) -> None:
    for batch in make_batches(cards):
        tx.queue_batch(space, QueuedBatch(historical, topic_id, batch), now)


def _in_order(cards: Sequence[EventCard], ids: Sequence[str]) -> list[EventCard]:
    place = {event_id: i for i, event_id in enumerate(ids)}
    return sorted(cards, key=lambda card: place[card.id])
